/**
 * Static checks of the production topology (docker-compose.yml, Dockerfile, deploy/).
 *
 * There is no Docker engine where the tests run, so the compose file is validated by
 * reading it: every check is a pure function that returns a list of problems, run once
 * against the real files (expecting none) and once per check against a deliberately
 * broken copy (expecting the breakage to be reported), so no check can silently pass.
 * Where the deployment must agree with the code (env names, search attributes, server
 * limits, key-file rules) the values come from the code itself, so the two cannot drift.
 */
import * as fs from 'fs';
import * as path from 'path';
import { parse } from 'yaml';
import { Scope } from '../../api/auth';
import { type Config, loadConfig } from '../../lib/config';
import { SEARCH_ATTRIBUTES } from '../../lib/domain/platform/search-attributes';
import { DYNAMIC_CONFIG_FILE, SERVER_CONFIG_FILE, serverEnvironment, TEMPORAL_SERVER_VERSION } from '../../lib/cluster/temporal-server';
import { DEV_DYNAMIC_CONFIG } from '../../lib/temporal-server';

const ROOT = path.resolve(__dirname, '..', '..');

// ---------------------------------------------------------------------------------------
// Repository access (overridable, so the negative tests can fake files)
// ---------------------------------------------------------------------------------------

interface Repo {
  isFile(rel: string): boolean;
  isDir(rel: string): boolean;
  read(rel: string): string;
  topLevelDirs(): string[];
}

function normalise(rel: string): string {
  return path.posix.normalize(rel.replace(/\\/g, '/')).replace(/^\.\//, '').replace(/\/$/, '');
}

function diskRepo(root: string): Repo {
  const abs = (rel: string) => path.join(root, normalise(rel));
  const stat = (rel: string) => fs.statSync(abs(rel), { throwIfNoEntry: false });
  return {
    isFile: (rel) => stat(rel)?.isFile() ?? false,
    isDir: (rel) => normalise(rel) === '.' || (stat(rel)?.isDirectory() ?? false),
    read: (rel) => fs.readFileSync(abs(rel), 'utf8'),
    topLevelDirs: () =>
      fs
        .readdirSync(root, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name),
  };
}

/** `base` with some files replaced (string) or deleted (null). */
function overlayRepo(base: Repo, files: Record<string, string | null>): Repo {
  const over = new Map(Object.entries(files).map(([k, v]) => [normalise(k), v]));
  const under = (dir: string) =>
    [...over.entries()].some(([k, v]) => v !== null && k.startsWith(`${normalise(dir)}/`));
  return {
    isFile: (rel) => (over.has(normalise(rel)) ? over.get(normalise(rel)) !== null : base.isFile(rel)),
    isDir: (rel) => under(rel) || base.isDir(rel),
    read: (rel) => {
      const v = over.get(normalise(rel));
      if (v === null) throw new Error(`${rel} was deleted`);
      return v ?? base.read(rel);
    },
    topLevelDirs: () => {
      const dirs = new Set(base.topLevelDirs());
      for (const [k, v] of over) if (v !== null && k.includes('/')) dirs.add(k.split('/')[0]);
      return [...dirs];
    },
  };
}

// ---------------------------------------------------------------------------------------
// Compose loading: YAML with merge keys, then Compose's ${VAR} interpolation
// ---------------------------------------------------------------------------------------

type Dict = Record<string, unknown>;

interface Loaded {
  doc: Dict;
  /** Variables used without a default: `docker compose up` would need them set. */
  missing: string[];
  /** Malformed `$` expressions (e.g. a shell `$var` not escaped as `$$var`). */
  invalid: string[];
}

/**
 * Compose interpolation with an empty environment, so each ${VAR:-default} takes its
 * default: what a fresh checkout gets from `docker compose up` with no .env file.
 */
function interpolate(s: string, missing: Set<string>, invalid: Set<string>): string {
  let out = '';
  for (let i = 0; i < s.length; ) {
    if (s[i] !== '$') {
      out += s[i++];
      continue;
    }
    const next = s[i + 1];
    if (next === '$') {
      out += '$';
      i += 2;
    } else if (next === '{') {
      let depth = 1;
      let j = i + 2;
      for (; j < s.length; j++) {
        if (s[j] === '{') depth++;
        if (s[j] === '}' && --depth === 0) break;
      }
      if (depth !== 0) {
        invalid.add(s.slice(i));
        return out;
      }
      out += expand(s.slice(i + 2, j), missing, invalid);
      i = j + 1;
    } else {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(s.slice(i + 1));
      if (name) {
        missing.add(name[0]);
        i += 1 + name[0].length;
      } else {
        invalid.add(s.slice(i, i + 10));
        i += 1;
      }
    }
  }
  return out;
}

function expand(body: string, missing: Set<string>, invalid: Set<string>): string {
  const m = /^([A-Za-z_][A-Za-z0-9_]*)(?:(:-|-|:\?|\?|:\+|\+)([\s\S]*))?$/.exec(body);
  if (!m) {
    invalid.add(`\${${body}}`);
    return '';
  }
  const [, name, op, arg = ''] = m;
  if (op === ':-' || op === '-') return interpolate(arg, missing, invalid);
  if (op === ':+' || op === '+') return '';
  missing.add(name); // no operator, or :? / ? (required)
  return '';
}

function interpolateDeep(value: unknown, missing: Set<string>, invalid: Set<string>): unknown {
  if (typeof value === 'string') return interpolate(value, missing, invalid);
  if (Array.isArray(value)) return value.map((v) => interpolateDeep(v, missing, invalid));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, interpolateDeep(v, missing, invalid)]),
    );
  }
  return value;
}

function loadCompose(text: string): Loaded {
  const raw = parse(text, { merge: true }) as unknown;
  if (!raw || typeof raw !== 'object') throw new Error('compose file is not a mapping');
  const missing = new Set<string>();
  const invalid = new Set<string>();
  const doc = interpolateDeep(raw, missing, invalid) as Dict;
  return { doc, missing: [...missing], invalid: [...invalid] };
}

// ---------------------------------------------------------------------------------------
// Normalising Compose's alternative syntaxes
// ---------------------------------------------------------------------------------------

const asDict = (v: unknown): Dict => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Dict) : {});
const services = (doc: Dict): Record<string, Dict> => asDict(doc.services) as Record<string, Dict>;

function envOf(svc: Dict): Record<string, string> {
  const env = svc.environment;
  if (Array.isArray(env)) {
    return Object.fromEntries(
      env.map((e) => {
        const s = String(e);
        const eq = s.indexOf('=');
        return eq < 0 ? [s, ''] : [s.slice(0, eq), s.slice(eq + 1)];
      }),
    );
  }
  return Object.fromEntries(Object.entries(asDict(env)).map(([k, v]) => [k, v == null ? '' : String(v)]));
}

function dependsOn(svc: Dict): Record<string, string> {
  const d = svc.depends_on;
  if (Array.isArray(d)) return Object.fromEntries(d.map((n) => [String(n), 'service_started']));
  return Object.fromEntries(
    Object.entries(asDict(d)).map(([n, v]) => [n, String(asDict(v).condition ?? 'service_started')]),
  );
}

/** The command as one string (scripts in `sh -c` jobs are matched as text). */
function commandText(svc: Dict): string {
  const c = svc.command;
  return Array.isArray(c) ? c.map(String).join(' ') : c == null ? '' : String(c);
}

function commandTokens(svc: Dict): string[] {
  const c = svc.command;
  return Array.isArray(c) ? c.map(String) : c == null ? [] : String(c).trim().split(/\s+/);
}

interface Port {
  hostIp?: string;
  host?: number;
  container: number;
  protocol: string;
}

function portsOf(svc: Dict): Port[] {
  const ports = Array.isArray(svc.ports) ? svc.ports : [];
  return ports.map((p): Port => {
    if (p && typeof p === 'object') {
      const o = p as Dict;
      return {
        hostIp: o.host_ip == null ? undefined : String(o.host_ip),
        host: o.published == null ? undefined : Number(o.published),
        container: Number(o.target),
        protocol: String(o.protocol ?? 'tcp'),
      };
    }
    let s = String(p);
    let protocol = 'tcp';
    const slash = s.lastIndexOf('/');
    if (slash >= 0) {
      protocol = s.slice(slash + 1);
      s = s.slice(0, slash);
    }
    let hostIp: string | undefined;
    const v6 = /^\[([^\]]+)\]:(.*)$/.exec(s);
    if (v6) {
      hostIp = v6[1];
      s = v6[2];
    }
    const parts = s.split(':');
    if (parts.length === 3) hostIp = parts.shift();
    const container = Number(parts.pop());
    const host = parts.length ? Number(parts[0]) : undefined;
    return { hostIp, host, container, protocol };
  });
}

interface Mount {
  kind: 'bind' | 'volume' | 'other';
  source: string;
  target: string;
}

function mountsOf(svc: Dict): Mount[] {
  const vols = Array.isArray(svc.volumes) ? svc.volumes : [];
  return vols.map((v): Mount => {
    if (v && typeof v === 'object') {
      const o = v as Dict;
      const type = String(o.type ?? 'volume');
      return {
        kind: type === 'bind' ? 'bind' : type === 'volume' ? 'volume' : 'other',
        source: String(o.source ?? ''),
        target: String(o.target ?? ''),
      };
    }
    const [source, target = ''] = String(v).split(':');
    if (!target) return { kind: 'volume', source: '', target: source }; // anonymous volume
    const bind = /^(\.|\/|~)/.test(source);
    return { kind: bind ? 'bind' : 'volume', source, target };
  });
}

function hasHealthcheck(svc: Dict): boolean {
  const hc = svc.healthcheck;
  if (!hc || typeof hc !== 'object') return false;
  const h = hc as Dict;
  if (h.disable === true) return false;
  const test = h.test;
  return Array.isArray(test) ? test.length > 0 && test[0] !== 'NONE' : Boolean(test);
}

/** A job that exits by design: anything Compose would not restart after a clean exit. */
function isOneShot(svc: Dict): boolean {
  const r = svc.restart == null ? 'no' : String(svc.restart);
  return r === 'no' || r.startsWith('on-failure');
}

function durationSeconds(v: unknown): number {
  const re = /(\d+(?:\.\d+)?)(h|m|s|ms|us)/g;
  const unit: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 1e-3, us: 1e-6 };
  let total = 0;
  for (const m of String(v ?? '').matchAll(re)) total += Number(m[1]) * unit[m[2]];
  return total;
}

const isTemporalServer = (svc: Dict) => /^temporalio\/(server|auto-setup):/.test(String(svc.image ?? ''));
const isPostgres = (svc: Dict) => /^postgres(:|$)/.test(String(svc.image ?? ''));
/** Services that run our image (built from this repository). */
const appServices = (doc: Dict) => Object.entries(services(doc)).filter(([, s]) => s.build != null);

// ---------------------------------------------------------------------------------------
// Checks: each returns human-readable problems; [] means the wiring is sound
// ---------------------------------------------------------------------------------------

interface Ctx {
  loaded: Loaded;
  repo: Repo;
}

type Check = (ctx: Ctx) => string[];

const checkComposeSpec: Check = ({ loaded }) => {
  const problems: string[] = [];
  if ('version' in loaded.doc) problems.push('top-level `version:` is obsolete in the Compose spec');
  for (const v of loaded.missing) problems.push(`\${${v}} has no default (use \${${v}:-...}, or $$ for a shell $)`);
  for (const v of loaded.invalid) problems.push(`invalid interpolation near "${v}" (a shell $ must be written $$)`);
  if (Object.keys(services(loaded.doc)).length === 0) problems.push('no services');
  return problems;
};

const CONDITIONS = new Set(['service_started', 'service_healthy', 'service_completed_successfully']);

const checkDependsOn: Check = ({ loaded }) => {
  const problems: string[] = [];
  const all = services(loaded.doc);
  for (const [name, svc] of Object.entries(all)) {
    for (const [dep, condition] of Object.entries(dependsOn(svc))) {
      const target = all[dep];
      if (!target) {
        problems.push(`${name} depends on unknown service ${dep}`);
        continue;
      }
      if (!CONDITIONS.has(condition)) problems.push(`${name} -> ${dep}: unknown condition ${condition}`);
      if (condition === 'service_healthy' && !hasHealthcheck(target)) {
        problems.push(`${name} waits for ${dep} to be healthy, but ${dep} has no healthcheck`);
      }
      if (condition === 'service_completed_successfully' && !isOneShot(target)) {
        problems.push(`${name} waits for ${dep} to complete, but ${dep} restarts (restart: ${String(target.restart)})`);
      }
    }
  }
  // Compose refuses dependency cycles.
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (n: string, trail: string[]): void => {
    if (state.get(n) === 'done' || !all[n]) return;
    if (state.get(n) === 'visiting') {
      problems.push(`dependency cycle: ${[...trail, n].join(' -> ')}`);
      return;
    }
    state.set(n, 'visiting');
    for (const d of Object.keys(dependsOn(all[n]))) visit(d, [...trail, n]);
    state.set(n, 'done');
  };
  for (const n of Object.keys(all)) visit(n, []);
  return problems;
};

const checkTemporalSchema: Check = ({ loaded }) => {
  const problems: string[] = [];
  const all = services(loaded.doc);
  const temporal = all.temporal;
  const schema = all['temporal-schema'];
  if (!temporal || !isTemporalServer(temporal)) return ['no `temporal` service running temporalio/server'];
  if (!schema) return ['no `temporal-schema` job'];
  if (dependsOn(temporal)['temporal-schema'] !== 'service_completed_successfully') {
    problems.push('temporal must depend on temporal-schema with condition service_completed_successfully');
  }
  const env = envOf(temporal);
  const dbHost = env.POSTGRES_SEEDS;
  if (!all[dbHost] || !isPostgres(all[dbHost])) problems.push(`temporal POSTGRES_SEEDS=${dbHost} is not a postgres service`);
  if (env.DB !== 'postgres12') problems.push(`temporal DB=${env.DB}, expected postgres12`);
  const script = commandText(schema);
  if (!/--plugin\s+postgres12/.test(script)) problems.push('temporal-schema does not use --plugin postgres12');
  if (!new RegExp(`--ep\\s+${dbHost}\\b`).test(script)) problems.push(`temporal-schema does not connect to ${dbHost}`);
  const dbs: Array<[string, string]> = [
    [env.DBNAME || 'temporal', 'temporal'],
    [env.VISIBILITY_DBNAME || 'temporal_visibility', 'visibility'],
  ];
  for (const [db, dir] of dbs) {
    const steps = [
      `--db\\s+${db}\\s+create-database`,
      `--db\\s+${db}\\s+setup-schema\\s+-v\\s+0\\.0`,
      `--db\\s+${db}\\s+update-schema\\s+-d\\s+/etc/temporal/schema/postgresql/v12/${dir}/versioned\\b`,
    ];
    for (const step of steps) {
      if (!new RegExp(step).test(script)) problems.push(`temporal-schema is missing step /${step}/`);
    }
  }
  return problems;
};

/** host:port of the Temporal frontend, checked against the service that serves it. */
function temporalAddressProblems(all: Record<string, Dict>, who: string, address: string | undefined): string[] {
  const m = /^([^:]+):(\d+)$/.exec(address ?? '');
  if (!m) return [`${who}: TEMPORAL_ADDRESS=${address} is not host:port`];
  const [, host, port] = m;
  const target = all[host];
  if (!target || !isTemporalServer(target)) return [`${who}: TEMPORAL_ADDRESS host ${host} is not the Temporal server service`];
  const frontendPort = envOf(target).FRONTEND_GRPC_PORT || '7233';
  return port === frontendPort ? [] : [`${who}: TEMPORAL_ADDRESS port ${port}, the frontend listens on ${frontendPort}`];
}

const checkTemporalClients: Check = ({ loaded }) => {
  const all = services(loaded.doc);
  const problems: string[] = [];
  for (const name of ['worker', 'api', 'temporal-ui', 'temporal-create-search-attributes']) {
    if (!all[name]) problems.push(`no ${name} service`);
    else problems.push(...temporalAddressProblems(all, name, envOf(all[name]).TEMPORAL_ADDRESS));
  }
  for (const name of ['worker', 'api']) {
    const env = all[name] ? envOf(all[name]) : {};
    if (env.TEMPORAL_NAMESPACE !== 'default') problems.push(`${name}: TEMPORAL_NAMESPACE=${env.TEMPORAL_NAMESPACE}`);
    if (env.TEMPORAL_TASK_QUEUE !== 'timekeeper') problems.push(`${name}: TEMPORAL_TASK_QUEUE=${env.TEMPORAL_TASK_QUEUE}`);
  }
  return problems;
};

const checkSearchAttributes: Check = ({ loaded }) => {
  const all = services(loaded.doc);
  const job = all['temporal-create-search-attributes'];
  if (!job) return ['no temporal-create-search-attributes job'];
  const problems: string[] = [];
  if (dependsOn(job).temporal !== 'service_healthy') problems.push('search-attribute job must wait for temporal to be healthy');
  if (!isOneShot(job)) problems.push('search-attribute job must be one-shot');
  const script = commandText(job);
  const namespace = envOf(job).TEMPORAL_NAMESPACE;
  const appNamespace = all.worker ? envOf(all.worker).TEMPORAL_NAMESPACE : undefined;
  if (namespace !== appNamespace) problems.push(`job configures namespace ${namespace}, the app uses ${appNamespace}`);
  if (!/operator namespace create/.test(script)) problems.push('job does not create the namespace when missing');
  if (!/operator search-attribute create/.test(script)) problems.push('job does not create search attributes');
  const declared = new Map([...script.matchAll(/--name\s+(\w+)\s+--type\s+(\w+)/g)].map((m) => [m[1], m[2]]));
  for (const sa of SEARCH_ATTRIBUTES) {
    if (declared.get(sa) !== 'Keyword') problems.push(`search attribute ${sa} is not created as Keyword`);
  }
  return problems;
};

function dbUrlProblems(all: Record<string, Dict>, who: string, key: string, url: string | undefined): { problems: string[]; parsed?: URL } {
  let u: URL;
  try {
    u = new URL(url ?? '');
  } catch {
    return { problems: [`${who}: ${key} is not a URL (${url})`] };
  }
  const problems: string[] = [];
  if (!/^postgres(ql)?:$/.test(u.protocol)) problems.push(`${who}: ${key} is not a postgres:// URL`);
  if (u.hostname !== 'events-db') problems.push(`${who}: ${key} points at ${u.hostname}, not events-db`);
  const db = all[u.hostname];
  if (!db || !isPostgres(db)) {
    problems.push(`${who}: ${key} host ${u.hostname} is not a postgres service`);
    return { problems, parsed: u };
  }
  if ((u.port || '5432') !== '5432') problems.push(`${who}: ${key} port ${u.port}, postgres listens on 5432`);
  if (u.pathname !== '/timekeeper') problems.push(`${who}: ${key} database ${u.pathname.slice(1)}, expected timekeeper`);
  if (envOf(db).POSTGRES_DB !== 'timekeeper') problems.push(`${u.hostname} creates database ${envOf(db).POSTGRES_DB}, not timekeeper`);
  return { problems, parsed: u };
}

const checkEventsDatabase: Check = ({ loaded }) => {
  const all = services(loaded.doc);
  const problems: string[] = [];
  const dbEnv = all['events-db'] ? envOf(all['events-db']) : {};
  const migrateEnv = all.migrate ? envOf(all.migrate) : {};
  if (!all.migrate) problems.push('no migrate job');
  if (!migrateEnv.APP_DB_PASSWORD) problems.push('migrate has no APP_DB_PASSWORD for the timekeeper_app role');
  if (all.migrate && dependsOn(all.migrate)['events-db'] !== 'service_healthy') {
    problems.push('migrate must wait for events-db to be healthy');
  }
  for (const name of ['migrate', 'worker', 'api']) {
    if (!all[name]) continue;
    const env = envOf(all[name]);
    const owner = dbUrlProblems(all, name, 'DATABASE_URL', env.DATABASE_URL);
    problems.push(...owner.problems);
    if (owner.parsed && dbEnv.POSTGRES_USER !== undefined) {
      if (decodeURIComponent(owner.parsed.username) !== dbEnv.POSTGRES_USER) {
        problems.push(`${name}: DATABASE_URL user ${owner.parsed.username} is not the owner ${dbEnv.POSTGRES_USER}`);
      }
      if (decodeURIComponent(owner.parsed.password) !== dbEnv.POSTGRES_PASSWORD) {
        problems.push(`${name}: DATABASE_URL password differs from events-db POSTGRES_PASSWORD`);
      }
    }
    if (name === 'migrate') continue;
    const app = dbUrlProblems(all, name, 'APP_DATABASE_URL', env.APP_DATABASE_URL);
    problems.push(...app.problems);
    if (app.parsed) {
      if (app.parsed.username !== 'timekeeper_app') problems.push(`${name}: APP_DATABASE_URL user is ${app.parsed.username}`);
      if (decodeURIComponent(app.parsed.password) !== migrateEnv.APP_DB_PASSWORD) {
        problems.push(`${name}: APP_DATABASE_URL password differs from the APP_DB_PASSWORD given to migrate`);
      }
    }
  }
  return problems;
};

/**
 * The app services' environment as lib/config.ts reads it: a misspelt or renamed
 * variable would silently fall back to a development default.
 */
const checkAppConfig: Check = ({ loaded }) => {
  const all = services(loaded.doc);
  const problems: string[] = [];
  const defaults = loadConfig({});
  const mustSet = (who: string, cfg: Config, field: keyof Config) => {
    if (cfg[field] === defaults[field]) {
      problems.push(`${who}: config ${field} keeps its development default (${String(defaults[field])}): variable missing or misspelt`);
    }
  };
  const expect = (who: string, field: keyof Config, actual: unknown, wanted: unknown) => {
    if (actual !== wanted) problems.push(`${who}: config ${field} is ${String(actual)}, expected ${String(wanted)}`);
  };
  for (const name of ['migrate', 'worker', 'api']) {
    if (!all[name]) continue;
    const cfg = loadConfig(envOf(all[name]));
    if (cfg.databaseUrlIsDefault) problems.push(`${name}: config databaseUrl keeps its development default: DATABASE_URL missing or misspelt`);
    if (name === 'migrate') continue;
    for (const field of ['appDatabaseUrl', 'temporalAddress'] as const) mustSet(name, cfg, field);
    expect(name, 'temporalNamespace', cfg.temporalNamespace, 'default');
    expect(name, 'taskQueue', cfg.taskQueue, 'timekeeper');
  }
  if (all.api) {
    const cfg = loadConfig(envOf(all.api));
    for (const field of ['host', 'apiKeysFile', 'temporalUiUrl'] as const) mustSet('api', cfg, field);
    expect('api', 'port', cfg.port, 8000);
    // Published ports only reach a server bound to all interfaces.
    expect('api', 'host', cfg.host, '0.0.0.0');
    expect('api', 'temporalUiUrl', cfg.temporalUiUrl, 'http://localhost:8233');
  }
  return problems;
};

const checkAppLifecycle: Check = ({ loaded }) => {
  const all = services(loaded.doc);
  const problems: string[] = [];
  const worker = all.worker ?? {};
  const wdeps = dependsOn(worker);
  if (wdeps.migrate !== 'service_completed_successfully') problems.push('worker must wait for migrate to complete');
  if (wdeps.temporal !== 'service_healthy') problems.push('worker must wait for temporal to be healthy');
  if (durationSeconds(worker.stop_grace_period) < 30) problems.push('worker stop_grace_period must be >= 30s to drain');
  if (worker.restart !== 'unless-stopped') problems.push('worker must restart unless-stopped');
  const api = all.api ?? {};
  if (!dependsOn(api).worker) problems.push('api must depend on worker');
  const hc = asDict(api.healthcheck).test;
  const port = envOf(api).PORT;
  if (!Array.isArray(hc) || !hc.join(' ').includes(`:${port}/readyz`)) {
    problems.push(`api healthcheck must probe /readyz on PORT ${port}`);
  }
  return problems;
};

const checkPorts: Check = ({ loaded }) => {
  const all = services(loaded.doc);
  const problems: string[] = [];
  const published = (name: string) => (all[name] ? portsOf(all[name]) : []);

  const apiPort = Number(all.api ? envOf(all.api).PORT : NaN);
  if (!published('api').some((p) => p.host === 8000 && p.container === apiPort)) {
    problems.push(`api must publish host port 8000 to its PORT (${apiPort})`);
  }
  const ui = published('temporal-ui').find((p) => p.container === 8080);
  if (ui?.host !== 8233) problems.push('temporal-ui must publish host port 8233 to 8080');
  const uiUrl = all.api ? envOf(all.api).TEMPORAL_UI_URL : undefined;
  if (ui?.host && uiUrl && Number(new URL(uiUrl).port) !== ui.host) {
    problems.push(`api TEMPORAL_UI_URL=${uiUrl} does not match the UI's published port ${ui.host}`);
  }

  const wildcard = (ip?: string) => ip === undefined || ip === '0.0.0.0' || ip === '::';
  const seen: Array<{ svc: string; port: Port }> = [];
  for (const [name, svc] of Object.entries(all)) {
    for (const port of portsOf(svc)) {
      if (!Number.isInteger(port.container)) problems.push(`${name}: unparseable port mapping`);
      if (port.host === undefined) continue;
      for (const other of seen) {
        const sameIp = wildcard(port.hostIp) || wildcard(other.port.hostIp) || port.hostIp === other.port.hostIp;
        if (other.port.host === port.host && other.port.protocol === port.protocol && sameIp) {
          problems.push(`${name} and ${other.svc} both publish host port ${port.host}/${port.protocol}`);
        }
      }
      seen.push({ svc: name, port });
    }
  }
  return problems;
};

const checkBuilds: Check = ({ loaded, repo }) => {
  const problems: string[] = [];
  for (const [name, svc] of appServices(loaded.doc)) {
    const build = typeof svc.build === 'string' ? { context: svc.build } : asDict(svc.build);
    const context = String(build.context ?? '.');
    const dockerfile = path.posix.join(context, String(build.dockerfile ?? 'Dockerfile'));
    if (!repo.isDir(context)) problems.push(`${name}: build context ${context} does not exist`);
    if (!repo.isFile(dockerfile)) problems.push(`${name}: ${dockerfile} does not exist`);
  }
  return problems;
};

const checkMounts: Check = ({ loaded, repo }) => {
  const problems: string[] = [];
  const declared = new Set(Object.keys(asDict(loaded.doc.volumes)));
  for (const [name, svc] of Object.entries(services(loaded.doc))) {
    for (const m of mountsOf(svc)) {
      if (m.kind === 'bind') {
        if (!m.source.startsWith('.')) problems.push(`${name}: bind mount ${m.source} is outside the repository`);
        else if (!repo.isFile(m.source) && !repo.isDir(m.source)) problems.push(`${name}: bind mount ${m.source} does not exist`);
      } else if (m.kind === 'volume' && m.source && !declared.has(m.source)) {
        problems.push(`${name}: named volume ${m.source} is not declared under top-level volumes`);
      }
    }
  }
  return problems;
};

const checkDynamicConfig: Check = ({ loaded, repo }) => {
  const temporal = services(loaded.doc).temporal;
  if (!temporal) return ['no temporal service'];
  const rel = envOf(temporal).DYNAMIC_CONFIG_FILE_PATH;
  if (!rel) return ['temporal has no DYNAMIC_CONFIG_FILE_PATH'];
  const inContainer = path.posix.resolve('/etc/temporal', rel); // relative to TEMPORAL_HOME
  const mount = mountsOf(temporal).find((m) => m.kind === 'bind' && m.target === inContainer);
  if (!mount) return [`no bind mount provides ${inContainer}`];
  if (!repo.isFile(mount.source)) return [`dynamic config ${mount.source} does not exist`];
  let config: Dict;
  try {
    config = asDict(parse(repo.read(mount.source)));
  } catch (e) {
    return [`dynamic config does not parse: ${(e as Error).message}`];
  }
  const problems: string[] = [];
  const values: Record<string, unknown> = {};
  for (const [key, entries] of Object.entries(config)) {
    const ok =
      Array.isArray(entries) &&
      entries.length > 0 &&
      entries.every((e) => e && typeof e === 'object' && 'value' in e);
    if (!ok) problems.push(`${key}: expected a list of {value, constraints}`);
    else values[key] = (entries[0] as Dict).value;
  }
  const inFlight = Number(values['history.maxInFlightUpdates']);
  if (!(inFlight >= 20)) problems.push(`history.maxInFlightUpdates=${values['history.maxInFlightUpdates']}, need >= 20`);
  for (const key of ['frontend.enableUpdateWorkflowExecution', 'frontend.enableExecuteMultiOperation']) {
    if (values[key] !== true) problems.push(`${key} must be true`);
  }
  // Production runs under the limits the dev server (and so every test) runs under.
  for (const [key, dev] of Object.entries(DEV_DYNAMIC_CONFIG)) {
    if (values[key] !== dev) problems.push(`${key}=${String(values[key])} but the dev server uses ${String(dev)}`);
  }
  // The workflow must continue-as-new before the server's hard cap on updates per run.
  const maxTotal = Number(values['history.maxTotalUpdates'] ?? 2000);
  const perRun = loadConfig({}).updatesPerRun;
  if (!(perRun < maxTotal)) problems.push(`history.maxTotalUpdates=${maxTotal} is not above SESSION_UPDATES_PER_RUN=${perRun}`);
  return problems;
};

/** Set by compose for images other than temporalio/server (see its comment), so the shared config never reads them. */
const IMAGE_ONLY_ENV = new Set(['SKIP_SCHEMA_SETUP', 'SKIP_DB_CREATE']);

/**
 * docker-compose and `npm run cluster` run ONE Temporal configuration: compose mounts the
 * file bin/cluster.ts starts the server with (lib/cluster/temporal-server.ts) over the image's
 * config, and the dynamic config the cluster passes; both run the same server version; every
 * variable compose sets is one the file reads; neither overrides the file's history shards;
 * and the cluster's ports derived from 7233 are the file's defaults, which compose publishes.
 */
const checkClusterConfig: Check = ({ loaded, repo }) => {
  const problems: string[] = [];
  const all = services(loaded.doc);
  const temporal = all.temporal;
  if (!temporal) return ['no temporal service'];
  const configRel = path.relative(ROOT, SERVER_CONFIG_FILE).split(path.sep).join('/');
  const dynamicRel = path.relative(ROOT, DYNAMIC_CONFIG_FILE).split(path.sep).join('/');
  const mounts = mountsOf(temporal).filter((m) => m.kind === 'bind');
  const config = mounts.find((m) => m.target === '/etc/temporal/config/docker.yaml');
  if (!config) problems.push('temporal does not mount the shared server config over /etc/temporal/config/docker.yaml');
  else if (normalise(config.source) !== configRel) problems.push(`temporal's config is ${config.source}, but npm run cluster runs ${configRel}`);
  const env = envOf(temporal);
  const dynamicTarget = path.posix.resolve('/etc/temporal', env.DYNAMIC_CONFIG_FILE_PATH ?? '');
  const dynamic = mounts.find((m) => m.target === dynamicTarget);
  if (!dynamic || normalise(dynamic.source) !== dynamicRel) problems.push(`temporal's dynamic config is ${dynamic?.source ?? 'not mounted'}, but npm run cluster runs ${dynamicRel}`);
  for (const [name, svc] of Object.entries(all)) {
    const image = /^temporalio\/(server|admin-tools):(.+)$/.exec(String(svc.image ?? ''));
    if (image && image[2] !== TEMPORAL_SERVER_VERSION) problems.push(`${name} runs ${image[1]} ${image[2]}, but npm run cluster builds the server ${TEMPORAL_SERVER_VERSION}`);
  }
  if (!repo.isFile(configRel)) return [...problems, `${configRel} does not exist`];
  const text = repo.read(configRel);
  if (!text.slice(0, 1024).split('\n').some((l) => l.trim().startsWith('#') && l.includes('enable-template'))) {
    problems.push(`${configRel} has no "# enable-template" comment in its first 1 KiB: the server would not render it`);
  }
  const read = new Set([...text.matchAll(/env "([A-Z0-9_]+)"/g)].map((m) => m[1]));
  const defaults = Object.fromEntries([...text.matchAll(/default "([^"]*)" \(env "([A-Z0-9_]+)"\)/g)].map((m) => [m[2], m[1]]));
  for (const k of Object.keys(env)) if (!read.has(k) && !IMAGE_ONLY_ENV.has(k)) problems.push(`temporal sets ${k}, which ${configRel} never reads`);
  const cluster = serverEnvironment({ databaseUrl: 'postgres://u:p@127.0.0.1:5432/x', databases: { main: 'temporal', visibility: 'temporal_visibility' }, port: 7233 });
  for (const k of Object.keys(cluster)) if (!read.has(k)) problems.push(`npm run cluster sets ${k}, which ${configRel} never reads`);
  // History shards are fixed at a cluster's first boot: one value, the file's, for both.
  if ('NUM_HISTORY_SHARDS' in cluster) problems.push('npm run cluster overrides NUM_HISTORY_SHARDS by default');
  if ('NUM_HISTORY_SHARDS' in env && env.NUM_HISTORY_SHARDS !== defaults.NUM_HISTORY_SHARDS) {
    problems.push(`temporal sets NUM_HISTORY_SHARDS=${env.NUM_HISTORY_SHARDS}, the shared config ${defaults.NUM_HISTORY_SHARDS}`);
  }
  for (const [k, v] of Object.entries(cluster)) {
    if (/_PORT$/.test(k) && k !== 'DB_PORT' && defaults[k] !== v) problems.push(`npm run cluster derives ${k}=${v} from 7233, the shared config's default is ${defaults[k]}`);
  }
  if (!portsOf(temporal).some((p) => String(p.container) === defaults.FRONTEND_GRPC_PORT)) problems.push(`temporal does not publish the frontend port ${defaults.FRONTEND_GRPC_PORT}`);
  return problems;
};

const checkSecrets: Check = ({ loaded, repo }) => {
  const problems: string[] = [];
  const declared = asDict(loaded.doc.secrets);
  for (const [name, def] of Object.entries(declared)) {
    const file = asDict(def).file;
    if (file !== undefined && !repo.isFile(String(file))) problems.push(`secret ${name}: file ${file} does not exist`);
  }
  const all = services(loaded.doc);
  for (const [name, svc] of Object.entries(all)) {
    for (const s of Array.isArray(svc.secrets) ? svc.secrets : []) {
      const ref = typeof s === 'string' ? s : String(asDict(s).source);
      if (!(ref in declared)) problems.push(`${name} uses undeclared secret ${ref}`);
    }
  }
  const api = all.api;
  const keysFile = api ? envOf(api).TIMEKEEPER_API_KEYS_FILE : undefined;
  const secret = /^\/run\/secrets\/(.+)$/.exec(keysFile ?? '')?.[1];
  const apiSecrets = (Array.isArray(api?.secrets) ? api.secrets : []).map((s) =>
    typeof s === 'string' ? s : String(asDict(s).target ?? asDict(s).source),
  );
  if (!secret || !apiSecrets.includes(secret)) {
    problems.push(`api TIMEKEEPER_API_KEYS_FILE=${keysFile} is not a secret mounted into the api`);
  } else {
    const file = String(asDict(declared[secret]).file ?? '');
    if (repo.isFile(file)) {
      try {
        const keys = (JSON.parse(repo.read(file)) as { keys?: unknown }).keys;
        // The rules api/auth.ts enforces at start-up: keys of 8+ characters, known scopes.
        const known: unknown[] = Object.values(Scope);
        const valid =
          Array.isArray(keys) &&
          keys.length > 0 &&
          keys.every(
            (k) =>
              typeof k?.key === 'string' &&
              k.key.length >= 8 &&
              Array.isArray(k.scopes) &&
              k.scopes.length > 0 &&
              k.scopes.every((s: unknown) => known.includes(s)),
          );
        if (!valid) problems.push(`${file}: expected {"keys":[{"key":"<8+ chars>","scopes":[${known.map((k) => `"${k}"`).join('|')}]}]}`);
      } catch (e) {
        problems.push(`${file} is not JSON: ${(e as Error).message}`);
      }
    }
  }
  return problems;
};

function packageScripts(repo: Repo): Record<string, string> {
  return (JSON.parse(repo.read('package.json')) as { scripts?: Record<string, string> }).scripts ?? {};
}

const isNpmRun = (tokens: string[]) => tokens[0] === 'npm' && (tokens[1] === 'run' || tokens[1] === 'run-script');

/**
 * The package.json script a command runs: `npm run X`, or X's body run directly
 * (`tsx bin/worker.ts`). Returns the name, or a problem when the command is neither.
 */
function scriptOf(tokens: string[], scripts: Record<string, string>): { script?: string; problem?: string } {
  if (isNpmRun(tokens)) {
    const name = tokens[2];
    return name in scripts ? { script: name } : { problem: `npm script "${name}" is not in package.json` };
  }
  const line = tokens.join(' ');
  const match = Object.entries(scripts).find(([, body]) => body.trim().split(/\s+/).join(' ') === line);
  return match ? { script: match[0] } : { problem: `command "${line}" is neither \`npm run <script>\` nor a package.json script's body` };
}

const checkScripts: Check = ({ loaded, repo }) => {
  const scripts = packageScripts(repo);
  const problems: string[] = [];
  for (const [name, svc] of appServices(loaded.doc)) {
    const tokens = commandTokens(svc);
    const { problem } = scriptOf(tokens, scripts);
    if (problem) problems.push(`${name}: ${problem}`);
    // npm exits on SIGTERM without passing it on (its shell dies too), so a long-running
    // service under `npm run` is SIGKILLed without draining or closing connections.
    if (isNpmRun(tokens) && !isOneShot(svc)) {
      problems.push(`${name}: long-running service under \`npm run\` would not receive SIGTERM; run the script's body`);
    }
  }
  return problems;
};

// --- Dockerfile ---------------------------------------------------------------------

interface Instruction {
  op: string;
  args: string;
}

function dockerInstructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let current = '';
  for (const line of text.split('\n')) {
    if (/^\s*#/.test(line)) continue; // comments, also inside continuations
    const continued = /\\\s*$/.test(line);
    current += `${line.replace(/\\\s*$/, '')} `;
    if (continued) continue;
    const m = /^\s*(\w+)\s+([\s\S]*?)\s*$/.exec(current);
    if (m) out.push({ op: m[1].toUpperCase(), args: m[2] });
    current = '';
  }
  return out;
}

/** Sources of a COPY/ADD (build context only; --from copies are skipped). */
function copySources(ins: Instruction): string[] | undefined {
  let args = ins.args;
  const flags = [...args.matchAll(/--(\w+)(?:=(\S+))?\s+/g)];
  if (flags.some((f) => f[1] === 'from')) return undefined;
  args = args.replace(/^(--\S+\s+)+/, '');
  const parts = args.startsWith('[') ? (JSON.parse(args) as string[]) : args.split(/\s+/);
  return parts.slice(0, -1).map(normalise);
}

function dockerignored(ignore: string, rel: string): boolean {
  const patterns = ignore
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  let excluded = false;
  for (const raw of patterns) {
    const negate = raw.startsWith('!');
    const pattern = normalise(negate ? raw.slice(1) : raw);
    const re = new RegExp(
      `^${pattern
        .split('*')
        .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('[^/]*')}(/.*)?$`,
    );
    if (re.test(rel)) excluded = !negate;
  }
  return excluded;
}

const SOURCE_EXT = ['.ts', '.tsx', '.mts', '.cts', '.js', '.mjs', '.cjs'];
/** Folders that never belong in the image, whatever string literals mention them. */
const NOT_SOURCE = new Set(['node_modules', '.git', 'test', 'bench', 'docs', 'data', 'deploy', 'dist']);

function resolveImport(repo: Repo, fromFile: string, spec: string): string | undefined {
  const base = normalise(path.posix.join(path.posix.dirname(fromFile), spec));
  const stripped = base.replace(/\.(c|m)?js$/, '');
  const candidates = [base, ...SOURCE_EXT.map((e) => stripped + e), ...SOURCE_EXT.map((e) => `${base}/index${e}`)];
  return candidates.find((c) => repo.isFile(c));
}

/**
 * Top-level folders the image needs to run the given entry files: the entries' own
 * folders, every folder reached through relative imports, and every top-level folder a
 * reached file names in a string literal (data read from disk, e.g. SQL migrations).
 */
function neededFolders(repo: Repo, entries: string[]): Set<string> {
  const needed = new Set<string>();
  const topDirs = repo.topLevelDirs().filter((d) => !NOT_SOURCE.has(d));
  const queue = entries.map(normalise);
  const seen = new Set<string>();
  while (queue.length) {
    const file = queue.shift() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    if (file.includes('/')) needed.add(file.split('/')[0]);
    if (!repo.isFile(file)) continue;
    const src = repo.read(file);
    const specs = src.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*|\brequire\.resolve\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g);
    for (const m of specs) {
      const target = resolveImport(repo, file, m[1]);
      if (target) queue.push(target);
    }
    for (const dir of topDirs) {
      if (new RegExp(`['"\`](?:\\.{1,2}/)*${dir.replace(/[.]/g, '\\.')}(?:['"\`/])`).test(src)) needed.add(dir);
    }
  }
  return needed;
}

const checkDockerfile: Check = ({ loaded, repo }) => {
  if (!repo.isFile('Dockerfile')) return ['no Dockerfile'];
  const problems: string[] = [];
  const instructions = dockerInstructions(repo.read('Dockerfile'));
  const ignore = repo.isFile('.dockerignore') ? repo.read('.dockerignore') : '';

  const copied: string[] = [];
  let npmCiAt = -1;
  let firstManifestCopy = Infinity;
  instructions.forEach((ins, i) => {
    if (ins.op === 'RUN' && /\bnpm ci\b/.test(ins.args) && npmCiAt < 0) npmCiAt = i;
    if (ins.op !== 'COPY' && ins.op !== 'ADD') return;
    for (const src of copySources(ins) ?? []) {
      copied.push(src);
      if (src === 'package-lock.json') firstManifestCopy = Math.min(firstManifestCopy, i);
      if (!repo.isFile(src) && !repo.isDir(src)) problems.push(`COPY ${src}: not in the repository`);
      if (dockerignored(ignore, src)) problems.push(`COPY ${src}: excluded by .dockerignore`);
    }
  });
  const covers = (rel: string) => copied.some((c) => c === '.' || rel === c || rel.startsWith(`${c}/`));

  for (const f of ['package.json', 'package-lock.json']) if (!covers(f)) problems.push(`${f} is not copied`);
  if (npmCiAt < 0) problems.push('no `RUN npm ci`');
  else if (!(firstManifestCopy < npmCiAt)) problems.push('package-lock.json must be copied before `npm ci`');

  // Entry files of every script the image runs (compose commands and the default CMD).
  const scripts = packageScripts(repo);
  const used = new Set<string>();
  for (const [, svc] of appServices(loaded.doc)) {
    const { script } = scriptOf(commandTokens(svc), scripts);
    if (script) used.add(script);
  }
  const cmd = instructions.filter((i) => i.op === 'CMD').pop();
  if (cmd) {
    const tokens = cmd.args.startsWith('[') ? (JSON.parse(cmd.args) as string[]) : cmd.args.split(/\s+/);
    const { script, problem } = scriptOf(tokens, scripts);
    if (script) used.add(script);
    else problems.push(`CMD: ${problem}`);
    if (isNpmRun(tokens)) problems.push('CMD runs `npm run`, which would not pass SIGTERM on to the api');
  } else {
    problems.push('no default CMD');
  }
  const entries: string[] = [];
  let compiled = false;
  for (const s of used) {
    const files = (scripts[s] ?? '').split(/\s+/).filter((t) => SOURCE_EXT.some((e) => t.endsWith(e)));
    if (!files.length) problems.push(`npm script "${s}" names no source entry file`);
    entries.push(...files);
    // `node bin/launch.cjs ROLE` runs dist/bin/ROLE.js, compiled from bin/ROLE.ts by bin/build.mjs.
    const launched = /(?:^|\s)bin\/launch\.cjs\s+(\w+)/.exec(scripts[s] ?? '');
    if (launched) {
      compiled = true;
      entries.push(`bin/${launched[1]}.ts`, 'bin/build.mjs');
    }
  }
  if (compiled) {
    // The image must carry the build: a launcher that finds none would try to write dist/ as the runtime user.
    const buildAt = instructions.findIndex((i) => i.op === 'RUN' && /\b(node bin\/build\.mjs|npm run build)\b/.test(i.args));
    const lastCopy = instructions.map((i) => i.op).lastIndexOf('COPY');
    if (buildAt < 0) problems.push('the image runs bin/launch.cjs but never builds dist/ (`RUN node bin/build.mjs`)');
    else if (buildAt < lastCopy) problems.push('`RUN node bin/build.mjs` must come after the sources are copied');
  }
  for (const dir of neededFolders(repo, entries)) {
    if (!covers(dir)) problems.push(`the image runs code from ${dir}/ but the Dockerfile does not copy it`);
  }

  const user = instructions.filter((i) => i.op === 'USER').pop();
  if (!user || /^(root|0)(:|$)/.test(user.args)) problems.push('the image must run as a non-root USER');
  return problems;
};

// ---------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------

const CHECKS: Record<string, Check> = {
  'is a Compose spec file whose variables all have defaults': checkComposeSpec,
  'has valid depends_on targets, conditions and no cycles': checkDependsOn,
  'starts temporal after the schema job migrates both databases': checkTemporalSchema,
  'points every Temporal client at the frontend service': checkTemporalClients,
  'creates the namespace and Keyword search attributes': checkSearchAttributes,
  'points DATABASE_URL / APP_DATABASE_URL at events-db/timekeeper with matching credentials': checkEventsDatabase,
  'sets the app environment under the names lib/config.ts reads': checkAppConfig,
  'orders and drains the worker, and health-checks the api': checkAppLifecycle,
  'publishes api 8000 and UI 8233 with no host port clash': checkPorts,
  'builds from an existing Dockerfile': checkBuilds,
  'bind-mounts only existing repository files and declared volumes': checkMounts,
  'mounts a valid dynamic config with maxInFlightUpdates >= 20': checkDynamicConfig,
  'runs the Temporal config and version npm run cluster runs': checkClusterConfig,
  'reads secrets from existing, well-formed files': checkSecrets,
  'runs package.json scripts, and long-running ones without npm in the way': checkScripts,
  'has a Dockerfile that copies every folder the scripts need': checkDockerfile,
};

const realRepo = diskRepo(ROOT);
const composeText = fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
const real = (): Ctx => ({ loaded: loadCompose(composeText), repo: realRepo });

describe('docker-compose.yml production topology', () => {
  it.each(Object.entries(CHECKS))('%s', (_title, check) => {
    expect(check(real())).toEqual([]);
  });
});

/**
 * Each case breaks one thing and expects the matching check to report it, so a check
 * that can no longer fail shows up here.
 */
describe('the compose checks catch broken wiring', () => {
  /** The real compose document, mutated by `edit` (after interpolation). */
  const withCompose = (edit: (doc: Dict, svc: Record<string, Dict>) => void): Ctx => {
    const ctx = real();
    edit(ctx.loaded.doc, services(ctx.loaded.doc));
    return ctx;
  };
  const withText = (from: string | RegExp, to: string): Ctx => {
    const text = composeText.replace(from, to);
    if (text === composeText) throw new Error(`test setup: ${String(from)} not found in docker-compose.yml`);
    return { loaded: loadCompose(text), repo: realRepo };
  };
  const withFiles = (files: Record<string, string | null>): Ctx => ({ ...real(), repo: overlayRepo(realRepo, files) });
  const replaceIn = (file: string, from: string | RegExp, to: string): Record<string, string> => {
    const before = realRepo.read(file);
    const after = before.replace(from, to);
    if (after === before) throw new Error(`test setup: ${String(from)} not found in ${file}`);
    return { [file]: after };
  };

  const cases: Array<[string, Check, () => Ctx, RegExp]> = [
    ['a version: key', checkComposeSpec, () => withText(/^services:/m, "version: '3.8'\nservices:"), /version/],
    ['a variable without default', checkComposeSpec, () => withText('${EVENTS_DB_PASSWORD:-timekeeper-dev}', '${EVENTS_DB_PASSWORD}'), /EVENTS_DB_PASSWORD/],
    ['an unescaped shell $ in a script', checkComposeSpec, () => withText('"$$TEMPORAL_NAMESPACE"', '"$TEMPORAL_NAMESPACE"'), /TEMPORAL_NAMESPACE/],
    ['a depends_on on a missing service', checkDependsOn, () => withCompose((_, s) => { s.api.depends_on = { wrkr: { condition: 'service_started' } }; }), /unknown service wrkr/],
    ['an invalid condition', checkDependsOn, () => withCompose((_, s) => { s.api.depends_on = { worker: { condition: 'service_ready' } }; }), /unknown condition/],
    ['waiting for health of a service without healthcheck', checkDependsOn, () => withCompose((_, s) => { delete s['events-db'].healthcheck; }), /no healthcheck/],
    ['waiting for completion of a restarting service', checkDependsOn, () => withCompose((_, s) => { s.migrate.restart = 'always'; }), /restarts/],
    ['a dependency cycle', checkDependsOn, () => withCompose((_, s) => { s.migrate.depends_on = { api: { condition: 'service_started' } }; }), /cycle/],
    ['temporal not waiting for the schema job', checkTemporalSchema, () => withCompose((_, s) => { s.temporal.depends_on = { 'temporal-schema': { condition: 'service_started' } }; }), /service_completed_successfully/],
    ['the schema job skipping visibility', checkTemporalSchema, () => withText(/^.*--db temporal_visibility update-schema.*\n/m, ''), /visibility\/versioned/],
    ['the schema job on the wrong host', checkTemporalSchema, () => withText('--ep temporal-db', '--ep events-db'), /does not connect/],
    ['a client on the wrong Temporal port', checkTemporalClients, () => withCompose((_, s) => { (s.worker.environment as Dict).TEMPORAL_ADDRESS = 'temporal:7234'; }), /worker.*port 7234/],
    ['a client on a non-Temporal host', checkTemporalClients, () => withCompose((_, s) => { (s.api.environment as Dict).TEMPORAL_ADDRESS = 'localhost:7233'; }), /api.*not the Temporal server/],
    ['a missing search attribute', checkSearchAttributes, () => withText('--name Channel --type Keyword', '--name Channel --type Text'), /Channel/],
    ['search attributes in another namespace', checkSearchAttributes, () => withCompose((_, s) => { (s['temporal-create-search-attributes'].environment as Dict).TEMPORAL_NAMESPACE = 'prod'; }), /namespace prod/],
    ['DATABASE_URL on the Temporal database', checkEventsDatabase, () => withCompose((_, s) => { (s.api.environment as Dict).DATABASE_URL = 'postgres://timekeeper:timekeeper-dev@temporal-db:5432/timekeeper'; }), /not events-db/],
    ['APP_DATABASE_URL on another database', checkEventsDatabase, () => withCompose((_, s) => { (s.worker.environment as Dict).APP_DATABASE_URL = 'postgres://timekeeper_app:timekeeper-app-dev@events-db:5432/postgres'; }), /database postgres/],
    ['an owner password that differs from the database', checkEventsDatabase, () => withText('${EVENTS_DB_PASSWORD:-timekeeper-dev}\n', '${EVENTS_DB_PASSWORD:-other}\n'), /password differs/],
    ['an app password that differs from migrate', checkEventsDatabase, () => withCompose((_, s) => { (s.migrate.environment as Dict).APP_DB_PASSWORD = 'x'; }), /APP_DB_PASSWORD/],
    ['a misspelt app variable', checkAppConfig, () => withText('  TEMPORAL_ADDRESS: temporal:7233\n', '  TEMPORAL_ADRESS: temporal:7233\n'), /temporalAddress keeps its development default/],
    ['an api bound to loopback', checkAppConfig, () => withText('HOST: 0.0.0.0', 'HOST: 127.0.0.1'), /host is 127\.0\.0\.1/],
    ['an api without keys file', checkAppConfig, () => withCompose((_, s) => { delete (s.api.environment as Dict).TIMEKEEPER_API_KEYS_FILE; }), /apiKeysFile keeps its development default/],
    ['a worker that does not drain', checkAppLifecycle, () => withCompose((_, s) => { s.worker.stop_grace_period = '10s'; }), /stop_grace_period/],
    ['an api healthcheck on the wrong path', checkAppLifecycle, () => withText('8000/readyz', '8000/healthz'), /readyz/],
    ['the api not publishing 8000', checkPorts, () => withText('"8000:8000"', '"8080:8000"'), /api must publish/],
    ['the UI on another port', checkPorts, () => withText('"127.0.0.1:8233:8080"', '"127.0.0.1:8234:8080"'), /8233/],
    ['two services on one host port', checkPorts, () => withCompose((_, s) => { s.worker.ports = ['8000:9000']; }), /both publish host port 8000/],
    ['a build without Dockerfile', checkBuilds, () => withFiles({ Dockerfile: null }), /Dockerfile does not exist/],
    ['a bind mount of a missing file', checkMounts, () => withText('./deploy/temporal/dynamicconfig.yaml:', './deploy/temporal/missing.yaml:'), /does not exist/],
    ['an undeclared named volume', checkMounts, () => withText('events-db-data:/var/lib', 'events-data:/var/lib'), /not declared/],
    ['maxInFlightUpdates below 20', checkDynamicConfig, () => withFiles(replaceIn('deploy/temporal/dynamicconfig.yaml', 'value: 500', 'value: 10')), /maxInFlightUpdates=10/],
    ['update-with-start disabled', checkDynamicConfig, () => withFiles(replaceIn('deploy/temporal/dynamicconfig.yaml', /(enableExecuteMultiOperation:\n {2}- value:) true/, '$1 false')), /enableExecuteMultiOperation/],
    ['a dynamic config that drifts from the dev server', checkDynamicConfig, () => withFiles(replaceIn('deploy/temporal/dynamicconfig.yaml', 'value: 500', 'value: 400')), /dev server uses 500/],
    ['a cap on updates below the per-run rotation', checkDynamicConfig, () => withFiles(replaceIn('deploy/temporal/dynamicconfig.yaml', 'value: 2000', 'value: 50')), /SESSION_UPDATES_PER_RUN/],
    ['a dynamic config that does not parse', checkDynamicConfig, () => withFiles({ 'deploy/temporal/dynamicconfig.yaml': 'a: [' }), /does not parse/],
    ['a dynamic config path that is not mounted', checkDynamicConfig, () => withCompose((_, s) => { (s.temporal.environment as Dict).DYNAMIC_CONFIG_FILE_PATH = 'config/dynamicconfig/other.yaml'; }), /no bind mount/],
    ['a server config other than the cluster\'s', checkClusterConfig, () => withText('./deploy/temporal/server.yaml:/etc', './deploy/temporal/other.yaml:/etc'), /npm run cluster runs deploy\/temporal\/server\.yaml/],
    ['no shared server config', checkClusterConfig, () => withText(/^.*server\.yaml:\/etc\/temporal\/config\/docker\.yaml.*\n/m, ''), /does not mount the shared server config/],
    ['a server version other than the cluster\'s', checkClusterConfig, () => withText('temporalio/server:1.29.1', 'temporalio/server:1.28.0'), /server 1\.28\.0/],
    ['admin-tools of another version', checkClusterConfig, () => withText('temporalio/admin-tools:1.29.1', 'temporalio/admin-tools:1.30.0'), /admin-tools 1\.30\.0/],
    ['compose overriding the history shards', checkClusterConfig, () => withCompose((_, s) => { (s.temporal.environment as Dict).NUM_HISTORY_SHARDS = '4'; }), /NUM_HISTORY_SHARDS=4/],
    ['a compose variable the config ignores', checkClusterConfig, () => withCompose((_, s) => { (s.temporal.environment as Dict).POSTGRES_PASSWORD = 'x'; }), /POSTGRES_PASSWORD, which/],
    ['a config the server would not render', checkClusterConfig, () => withFiles(replaceIn('deploy/temporal/server.yaml', '# enable-template', '# template')), /enable-template/],
    ['a port default that drifts from the derived one', checkClusterConfig, () => withFiles(replaceIn('deploy/temporal/server.yaml', 'default "7234" (env "HISTORY_GRPC_PORT")', 'default "7300" (env "HISTORY_GRPC_PORT")')), /HISTORY_GRPC_PORT=7234/],
    ['another dynamic config', checkClusterConfig, () => withText('./deploy/temporal/dynamicconfig.yaml:', './deploy/temporal/other-dc.yaml:'), /npm run cluster runs deploy\/temporal\/dynamicconfig\.yaml/],
    ['a missing secret file', checkSecrets, () => withFiles({ 'deploy/api-keys.example.json': null }), /does not exist/],
    ['a malformed keys file', checkSecrets, () => withFiles({ 'deploy/api-keys.example.json': '{"keys":[{"key":"change-me"}]}' }), /expected/],
    ['an example key the api would reject', checkSecrets, () => withFiles({ 'deploy/api-keys.example.json': '{"keys":[{"key":"short","scopes":["agent"]}]}' }), /8\+ chars/],
    ['an unknown scope', checkSecrets, () => withFiles({ 'deploy/api-keys.example.json': '{"keys":[{"key":"change-me-x","scopes":["writer"]}]}' }), /expected/],
    ['a keys path that is not a mounted secret', checkSecrets, () => withCompose((_, s) => { s.api.secrets = []; }), /not a secret mounted/],
    ['a command running a missing npm script', checkScripts, () => withCompose((_, s) => { s.migrate.command = ['npm', 'run', 'migrat']; }), /"migrat"/],
    ['a command that is no package.json script', checkScripts, () => withCompose((_, s) => { s.worker.command = ['tsx', 'bin/wrker.ts']; }), /tsx bin\/wrker\.ts/],
    ['a long-running service under npm run', checkScripts, () => withCompose((_, s) => { s.worker.command = ['npm', 'run', 'worker']; }), /worker: long-running service under `npm run`/],
    ['a CMD under npm run', checkDockerfile, () => withFiles(replaceIn('Dockerfile', 'CMD ["node", "bin/launch.cjs", "api"]', 'CMD ["npm", "run", "api"]')), /CMD runs `npm run`/],
    ['a Dockerfile without COPY bin', checkDockerfile, () => withFiles(replaceIn('Dockerfile', /^COPY bin .*\n/m, '')), /bin\//],
    [
      'a Dockerfile missing a folder reached through imports',
      checkDockerfile,
      () =>
        withFiles({
          ...replaceIn('Dockerfile', /^COPY lib .*\n/m, ''),
          'bin/migrate.ts': "import { migrate } from '../lib/db';\nvoid migrate;\n",
          'lib/db.ts': 'export const migrate = 1;\n',
        }),
      /lib\//,
    ],
    [
      'a Dockerfile missing a data folder read at runtime',
      checkDockerfile,
      () =>
        withFiles({
          ...replaceIn('Dockerfile', /^COPY schema .*\n/m, ''),
          'bin/migrate.ts': "import * as path from 'path';\nexport const dir = path.join(__dirname, '..', 'schema');\n",
        }),
      /schema\//,
    ],
    ['a COPY of a dockerignored path', checkDockerfile, () => withFiles({ '.dockerignore': 'node_modules\nlib\n' }), /COPY lib: excluded/],
    [
      'npm ci before the lockfile is copied',
      checkDockerfile,
      () => withFiles(replaceIn('Dockerfile', /^(COPY package\.json package-lock\.json \.\/)\n(RUN npm ci.*)$/m, '$2\n$1')),
      /package-lock\.json must be copied before `npm ci`/,
    ],
    ['an image that runs the launcher without building dist/', checkDockerfile, () => withFiles(replaceIn('Dockerfile', /^RUN node bin\/build\.mjs\n/m, '')), /never builds dist/],
    ['a build before the sources are copied', checkDockerfile, () => withFiles(replaceIn('Dockerfile', /^(COPY lib .*)$/m, 'RUN node bin/build.mjs\n$1')), /after the sources are copied/],
    ['a compiled entry whose source folder is not copied', checkDockerfile, () => withFiles(replaceIn('Dockerfile', /^COPY clients .*\n/m, '')), /clients\//],
    ['an image running as root', checkDockerfile, () => withFiles(replaceIn('Dockerfile', /^USER node$/m, 'USER root')), /non-root/],
  ];

  it.each(cases)('reports %s', (_title, check, broken, expected) => {
    const problems = check(broken());
    expect(problems.join('\n')).toMatch(expected);
  });
});
