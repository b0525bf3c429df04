/**
 * The import layering, checked on every relative import of the source tree (value and
 * type-only alike, `export … from` too), so that a climb or a reach into another capability's
 * room fails `npm test` with the file, the import and the rule it breaks (issue 21).
 *
 *   1. Layers: bin → api, sdk, worker, integrations → clients → workflows → activities → lib; an
 *      import never climbs. The one climb: activities may take the workflows' message types
 *      (workflows/<room>/messages.ts, type-only).
 *   2. api, sdk, worker and integrations are peers that do not import each other, except: the
 *      consumer SDK (sdk/: typed client, tool schemas, helpers) takes the route contracts from
 *      api/ (api/contract.ts, api/routes.ts, api/<room>/*contract.ts), the dashboard's browser
 *      code (api/dashboard/src) and the integrations (the MCP server, the OpenClaw plugin) use
 *      the SDK, and the MCP server's stdio passes api/input-gate.ts.
 *   3. lib/domain (the sandbox-safe kernel) imports only lib/domain.
 *   4. Capability rooms (a folder or file named for sessions, intents, tasks, signals, tlog)
 *      import another capability only where it uses it by design (USES: intents and tasks write
 *      into sessions, every capability is verified through tlog), and only that capability's
 *      lower layers (its domain rules, store, log), never its room in the same layer: shared
 *      mechanics live in lib/platform, lib/domain/platform or a layer's shared files. Signals
 *      are the tasks' triggers (the delay and condition triggers, a run's outcome signal): one
 *      family, free to import each other.
 *   5. The platform places (lib/platform, lib/domain/platform) import no capability room.
 *   6. lib/domain has no run-time import circle.
 *   7. A file outside every room that imports the rooms of several capabilities is a
 *      composition root, and is listed in COMPOSITION_ROOTS.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');
const TOP = ['bin', 'api', 'sdk', 'worker', 'integrations', 'clients', 'workflows', 'activities', 'lib'] as const;
const RANK: Record<string, number> = { bin: 5, api: 4, sdk: 4, worker: 4, integrations: 4, clients: 3, workflows: 2, activities: 1, lib: 0 };

type Capability = 'sessions' | 'intents' | 'tasks' | 'signals' | 'tlog';
const STEMS: [RegExp, Capability][] = [
  [/^session/, 'sessions'],
  [/^intent/, 'intents'],
  [/^task/, 'tasks'],
  [/^signal/, 'signals'],
  [/^tlog/, 'tlog'],
];
/** Which other capabilities a capability uses by design (their lower layers only). */
const USES: Record<Capability, Capability[]> = {
  sessions: ['tlog'],
  intents: ['sessions', 'tlog'],
  tasks: ['sessions', 'tlog'],
  signals: ['tlog'],
  tlog: [],
};
/** One family: rooms of the same family import each other freely. */
const family = (c: Capability): string => (c === 'signals' ? 'tasks' : c);

/** The route contracts the consumer SDK is made from: pure zod, no server code. */
const CONTRACTS = [/^api\/contract\.ts$/, /^api\/routes\.ts$/, /^api\/[a-z-]+\/([a-z-]+-)?contract\.ts$/];

/** The peer imports rule 2 allows. */
function peerAllowed(e: Edge, la: string, lb: string): boolean {
  if (la === 'sdk' && lb === 'api') return CONTRACTS.some((re) => re.test(e.to));
  if (lb === 'sdk') return la === 'integrations' || e.from.startsWith('api/dashboard/src/');
  return la === 'integrations' && e.to === 'api/input-gate.ts';
}

/** Files that wire every capability together, each for a reason. */
const COMPOSITION_ROOTS: Record<string, string> = {
  'api/app.ts': 'the HTTP app: every router',
  'api/routes.ts': 'the registry of every route contract',
  'sdk/tools.ts': "every capability's tools put together",
  'api/dashboard/src/main.ts': "the dashboard's pages",
  'activities/index.ts': 'every activity',
  'workflows/index.ts': 'the workflow bundle entry',
  'worker/worker.ts': 'registers every workflow and activity',
  'bin/timekeeper.ts': 'the CLI: a command per capability',
  'lib/config.ts': 'the one reader of the environment',
  'lib/hash-chain.ts': 'the chain format sessions and intents hash under',
};

/**
 * Climbs that issue 21 still has to remove, each named: the test fails once one is gone (remove
 * it here then), and on any climb not listed.
 */
const KNOWN_CLIMBS: Record<string, string> = {};

interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.posix.join(dir, e.name);
    if (e.isDirectory()) sourceFiles(rel, out);
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

function resolve(from: string, spec: string): string {
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
  for (const c of [base, `${base}.ts`, `${base}/index.ts`]) if (fs.existsSync(path.join(ROOT, c)) && fs.statSync(path.join(ROOT, c)).isFile()) return c;
  return base;
}

/** Every relative import and re-export of `file`; type-only when the whole declaration is. */
function importsOf(file: string): Edge[] {
  const sf = ts.createSourceFile(file, fs.readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const out: Edge[] = [];
  const add = (spec: string, typeOnly: boolean) => {
    if (spec.startsWith('.')) out.push({ from: file, to: resolve(file, spec), typeOnly });
  };
  for (const st of sf.statements) {
    if (ts.isImportDeclaration(st) && ts.isStringLiteral(st.moduleSpecifier)) {
      const c = st.importClause;
      const named = c?.namedBindings && ts.isNamedImports(c.namedBindings) ? c.namedBindings.elements : undefined;
      add(st.moduleSpecifier.text, !!c && (c.isTypeOnly || (!c.name && !!named && named.length > 0 && named.every((e) => e.isTypeOnly))));
    } else if (ts.isExportDeclaration(st) && st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier)) {
      add(st.moduleSpecifier.text, st.isTypeOnly);
    } else if (ts.isImportEqualsDeclaration(st) && ts.isExternalModuleReference(st.moduleReference) && ts.isStringLiteral(st.moduleReference.expression)) {
      add(st.moduleReference.expression.text, st.isTypeOnly);
    }
  }
  // import('…') expressions and types anywhere in the file.
  const visit = (n: ts.Node) => {
    if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword && n.arguments[0] && ts.isStringLiteral(n.arguments[0])) add(n.arguments[0].text, false);
    if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument) && ts.isStringLiteral(n.argument.literal)) add(n.argument.literal.text, true);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

const layerOf = (f: string): string => f.split('/')[0];
const capabilityOf = (f: string): Capability | undefined => {
  for (const seg of f.replace(/\.ts$/, '').split('/')) for (const [re, c] of STEMS) if (re.test(seg)) return c;
  return undefined;
};
const isPlatform = (f: string) => /^lib\/(domain\/)?platform\//.test(f);

/** The rule an import breaks, or undefined. */
export function ruleBroken(e: Edge): string | undefined {
  const la = layerOf(e.from);
  const lb = layerOf(e.to);
  if (!(lb in RANK)) return undefined; // package.json, test fixtures, …
  if (RANK[lb] > RANK[la] && !(la === 'activities' && lb === 'workflows' && e.typeOnly && /^workflows\/[a-z-]+\/messages\.ts$/.test(e.to))) return `layers: ${la}/ must not import ${lb}/ (an import never climbs)`;
  if (RANK[lb] === RANK[la] && la !== lb && !peerAllowed(e, la, lb)) return `layers: ${la}/ and ${lb}/ are peers${la === 'integrations' ? ' (integrations take the consumer SDK, sdk/)' : ''}`;
  if (e.from.startsWith('lib/domain/') && !e.to.startsWith('lib/domain/')) return 'kernel: lib/domain imports only lib/domain';
  const a = capabilityOf(e.from);
  const b = capabilityOf(e.to);
  if (isPlatform(e.from) && b) return `platform: ${e.from.split('/').slice(0, -1).join('/')} imports no capability room (here ${b})`;
  if (a && b && family(a) !== family(b)) {
    if (!USES[a].includes(b)) return `capabilities: ${a} does not use ${b}; share it through lib/platform or lib/domain/platform`;
    if (RANK[lb] === RANK[la] && !(la === 'lib' && (e.to.startsWith('lib/domain/') || e.to.startsWith('lib/store/') || e.to.startsWith('lib/tlog/')) && !e.from.startsWith(e.to.split('/').slice(0, 2).join('/') + '/'))) {
      return `capabilities: ${a} may use ${b} only through its lower layers (domain, store, log), not its room in ${la}/`;
    }
  }
  return undefined;
}

const files = TOP.flatMap((t) => sourceFiles(t));
const edges = files.flatMap(importsOf);

describe('import layering', () => {
  test('reads the whole tree', () => {
    expect(files.length).toBeGreaterThan(150);
    expect(edges.length).toBeGreaterThan(500);
  });

  test('no import climbs a layer or crosses into another capability', () => {
    const violations = edges
      .map((e) => ({ e, rule: ruleBroken(e) }))
      .filter((v): v is { e: Edge; rule: string } => v.rule !== undefined && !(`${v.e.from} -> ${v.e.to}` in KNOWN_CLIMBS))
      .map(({ e, rule }) => `${e.from} → ${e.to}${e.typeOnly ? ' (type-only)' : ''}: ${rule}`);
    if (violations.length) console.error(`import layering violations:\n  ${violations.join('\n  ')}`);
    expect(violations).toEqual([]);
  });

  test('the known climbs still exist (remove an entry once its climb is gone)', () => {
    const present = new Set(edges.map((e) => `${e.from} -> ${e.to}`));
    expect(Object.keys(KNOWN_CLIMBS).filter((k) => !present.has(k))).toEqual([]);
  });

  test('a file importing the rooms of several capabilities is a listed composition root', () => {
    const caps = new Map<string, Set<string>>();
    for (const e of edges) {
      const b = capabilityOf(e.to);
      if (capabilityOf(e.from) || !b || !(layerOf(e.to) in RANK)) continue;
      caps.set(e.from, (caps.get(e.from) ?? new Set()).add(family(b)));
    }
    const hubs = [...caps].filter(([, s]) => s.size > 1).map(([f, s]) => `${f} (${[...s].sort().join(', ')})`);
    const unlisted = hubs.filter((h) => !(h.split(' ')[0] in COMPOSITION_ROOTS));
    if (unlisted.length) console.error(`files wiring several capabilities that are not composition roots:\n  ${unlisted.join('\n  ')}`);
    expect(unlisted).toEqual([]);
    // And every listed root still is one.
    expect(Object.keys(COMPOSITION_ROOTS).filter((r) => !hubs.some((h) => h.startsWith(`${r} `)))).toEqual([]);
  });

  test('lib/domain has no run-time import circle', () => {
    const next = new Map<string, string[]>();
    for (const e of edges) if (!e.typeOnly && e.from.startsWith('lib/domain/') && e.to.startsWith('lib/domain/')) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (f: string, trail: string[]) => {
      if (state.get(f) === 'done') return;
      if (state.get(f) === 'open') return void circles.push([...trail.slice(trail.indexOf(f)), f].join(' → '));
      state.set(f, 'open');
      for (const t of next.get(f) ?? []) visit(t, [...trail, f]);
      state.set(f, 'done');
    };
    for (const f of next.keys()) visit(f, []);
    expect(circles).toEqual([]);
  });

  test('the rules catch a climb and a cross-capability reach', () => {
    expect(ruleBroken({ from: 'worker/x.ts', to: 'api/tasks/routes.ts', typeOnly: false })).toMatch(/peers/);
    expect(ruleBroken({ from: 'lib/store/tasks/index.ts', to: 'clients/tasks.ts', typeOnly: true })).toMatch(/climbs/);
    expect(ruleBroken({ from: 'activities/intents/index.ts', to: 'activities/sessions/index.ts', typeOnly: false })).toMatch(/lower layers/);
    expect(ruleBroken({ from: 'lib/domain/intents/index.ts', to: 'lib/domain/sessions/index.ts', typeOnly: false })).toMatch(/lower layers/);
    expect(ruleBroken({ from: 'sdk/sessions/tools.ts', to: 'sdk/intents/tools.ts', typeOnly: true })).toMatch(/does not use/);
    expect(ruleBroken({ from: 'activities/tasks/index.ts', to: 'workflows/tasks/messages.ts', typeOnly: true })).toBeUndefined();
    expect(ruleBroken({ from: 'activities/tasks/index.ts', to: 'workflows/tasks/messages.ts', typeOnly: false })).toMatch(/climbs/);
    expect(ruleBroken({ from: 'activities/intents/index.ts', to: 'lib/domain/sessions/index.ts', typeOnly: false })).toBeUndefined();
  });
});
