/**
 * `npm run bench:timeline`: load benchmark against a RUNNING Timekeeper (it starts nothing).
 *
 *   npm run bench:timeline                                   # both scenarios
 *   npm run bench:timeline -- --scenario large --sessions 2000 --events 10 --concurrency 200
 *   BENCH_URL=http://127.0.0.1:8100 npm run bench:timeline -- --scenario seed
 *
 * Scenarios (see bench/README.md):
 *   seed   100 sessions x 5 events, all sessions in flight at once, through the seed endpoints;
 *          a read follows every append. Targets: zero errors, append p99 <= 50 ms, read p99 <= 20 ms.
 *   large  1,000 sessions x 10 events, at most --concurrency sessions in flight (default 100).
 *          Target: zero errors at >= 300 appends/s.
 *
 * Each scenario runs three timed phases (init all sessions, append + read, verify every chain)
 * and then measures raw single-row INSERTs into a scratch table at the same concurrency, so the
 * append rate can be put next to what the same PostgreSQL does without Timekeeper in between.
 */
import { performance } from 'node:perf_hooks';
import { Pool } from 'pg';
import { TimekeeperApiError, TimekeeperClient } from '../api/client';
import { keepAliveFetch } from './http';

// ---------------------------------------------------------------------------------------------
// Options

type ScenarioName = 'seed' | 'large';

interface ScenarioSpec {
  name: ScenarioName;
  sessions: number;
  events: number;
  concurrency: number;
}

interface Options {
  url: string;
  databaseUrl: string;
  apiKey: string | undefined;
  scenarios: ScenarioSpec[];
  reads: boolean;
  /** Mean pause before each append, as an agent waits for its LLM; 0 = closed loop, no think time. */
  thinkMs: number;
  raw: boolean;
  warmup: boolean;
  timeoutMs: number;
  strict: boolean;
  /** Node's global fetch (undici) instead of the node:http keep-alive agent. */
  globalFetch: boolean;
}

const DEFAULTS: Record<ScenarioName, ScenarioSpec> = {
  seed: { name: 'seed', sessions: 100, events: 5, concurrency: 100 },
  large: { name: 'large', sessions: 1000, events: 10, concurrency: 100 },
};

const USAGE = `usage: npm run bench:timeline -- [options]
  --url URL            Timekeeper base URL (default $BENCH_URL or http://127.0.0.1:8000)
  --scenario NAME      seed | large | all (default all)
  --sessions N         sessions per selected scenario
  --events M           appends per session
  --concurrency C      sessions in flight at once (also the raw-insert client count)
  --no-reads           skip the read after each append
  --think-ms T         pause about T ms (uniform 0.5T..1.5T) before each append, as an agent
                       waits for its LLM (default 0: back to back, a closed loop)
  --no-raw             skip the raw PostgreSQL insert comparison
  --no-warmup          skip the small warm-up run before the scenarios
  --timeout-ms T       per-request timeout (default 60000)
  --strict             exit with status 1 when a target is missed
  --global-fetch       send through Node's global fetch (undici) instead of a node:http
                       keep-alive agent; costs the client about twice the CPU per request
env: BENCH_URL, DATABASE_URL (owner connection for the scratch table), BENCH_API_KEY`;

function parseArgs(argv: string[]): Options {
  const flags = new Map<string, string>();
  const bare = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') {
      console.log(USAGE);
      process.exit(0);
    }
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}\n${USAGE}`);
    const [k, inline] = a.slice(2).split(/=(.*)/s, 2);
    if (['no-reads', 'no-raw', 'no-warmup', 'strict', 'global-fetch'].includes(k)) bare.add(k);
    else if (inline !== undefined) flags.set(k, inline);
    else if (i + 1 < argv.length) flags.set(k, argv[++i]);
    else throw new Error(`--${k} needs a value\n${USAGE}`);
  }
  const known = ['url', 'scenario', 'sessions', 'events', 'concurrency', 'timeout-ms', 'think-ms'];
  for (const k of flags.keys()) if (!known.includes(k)) throw new Error(`unknown option --${k}\n${USAGE}`);

  const int = (k: string, min = 1): number | undefined => {
    const v = flags.get(k);
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${k} must be an integer >= ${min}, got "${v}"`);
    return n;
  };
  const which = flags.get('scenario') ?? 'all';
  if (!['seed', 'large', 'all'].includes(which)) throw new Error(`--scenario must be seed, large or all, got "${which}"`);
  const names: ScenarioName[] = which === 'all' ? ['seed', 'large'] : [which as ScenarioName];
  // Scale flags apply to every selected scenario; the defaults keep each scenario's shape.
  const scenarios = names.map((n) => ({
    ...DEFAULTS[n],
    sessions: int('sessions') ?? DEFAULTS[n].sessions,
    events: int('events') ?? DEFAULTS[n].events,
    concurrency: int('concurrency') ?? DEFAULTS[n].concurrency,
  }));

  return {
    url: (flags.get('url') ?? process.env.BENCH_URL ?? 'http://127.0.0.1:8000').replace(/\/+$/, ''),
    databaseUrl: process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/timekeeper',
    apiKey: process.env.BENCH_API_KEY || undefined,
    scenarios,
    reads: !bare.has('no-reads'),
    thinkMs: int('think-ms', 0) ?? 0,
    raw: !bare.has('no-raw'),
    warmup: !bare.has('no-warmup'),
    timeoutMs: int('timeout-ms') ?? 60_000,
    strict: bare.has('strict'),
    globalFetch: bare.has('global-fetch'),
  };
}

// ---------------------------------------------------------------------------------------------
// HTTP: the typed client (api/client.ts), by default on a fetch over node:http with one
// keep-alive agent, so connection set-up is not part of the latencies. Node's global fetch
// (undici) keeps connections alive too, but costs the client about twice the CPU per request
// of http.request, and on a host the server shares that shows up in the server's latencies;
// --global-fetch uses it anyway.

/** A typed client for the bench; `close()` drops its connections. */
function client(opts: Options, maxSockets: number, timeoutMs = opts.timeoutMs): { tk: TimekeeperClient; close(): void } {
  if (!opts.url.startsWith('http://')) throw new Error(`only http:// URLs are supported, got ${opts.url}`);
  const base = { baseUrl: opts.url, apiKey: opts.apiKey, timeoutMs };
  if (opts.globalFetch) return { tk: new TimekeeperClient(base), close: () => undefined };
  const { fetch, close } = keepAliveFetch(maxSockets, timeoutMs);
  return { tk: new TimekeeperClient({ ...base, fetch }), close };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// Measurement helpers

/** Latencies of successful calls plus the failures of one kind of call. */
class Series {
  readonly ms: number[] = [];
  errors = 0;
  readonly samples: string[] = [];
  /** Failures counted by a short kind ("HTTP 503 unavailable", "ECONNRESET"), to see the mix at a glance. */
  readonly kinds = new Map<string, number>();

  ok(ms: number): void {
    this.ms.push(ms);
  }

  fail(kind: string, what: string): void {
    this.errors++;
    this.kinds.set(kind, (this.kinds.get(kind) ?? 0) + 1);
    if (this.samples.length < 5) this.samples.push(what.length > 300 ? what.slice(0, 300) + '…' : what);
  }

  /** Nearest-rank percentile, so p99 of 500 samples is an observed value, not an interpolation. */
  pct(p: number): number {
    if (this.ms.length === 0) return NaN;
    const sorted = [...this.ms].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
  }

  max(): number {
    return this.ms.length ? this.ms.reduce((a, b) => Math.max(a, b), -Infinity) : NaN;
  }
}

/** Runs fn over 0..n-1 with at most `concurrency` calls in flight; returns the wall time in ms. */
async function runPool(n: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (next < n) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  return performance.now() - t0;
}

/**
 * A call counts as successful only with HTTP 2xx and, on the seed surface, envelope code 200
 * (the seed envelope carries its own code, so a 200 with another code is still a failure).
 * The latency is the whole call: request, response and reading its body.
 */
async function timed<R extends { status: number; body: unknown }>(series: Series, label: string, call: () => Promise<R>, seedEnvelope: boolean): Promise<R | undefined> {
  const t0 = performance.now();
  let r: R;
  try {
    r = await call();
  } catch (err) {
    if (err instanceof TimekeeperApiError) {
      series.fail(`HTTP ${err.status} ${problemType(err.body)}`.trim(), `${label}: HTTP ${err.status} ${text(err.body)}`);
      return undefined;
    }
    // fetch reports a network failure as "fetch failed" with the socket error as its cause.
    const e = err as Error & { code?: string; cause?: Error & { code?: string } };
    const kind = e.name === 'TimeoutError' ? 'timeout' : (e.cause?.code ?? e.code ?? e.message);
    series.fail(kind, `${label}: ${e.message}${e.cause?.message ? ` (${e.cause.message})` : ''}`);
    return undefined;
  }
  const ms = performance.now() - t0;
  if (r.status < 200 || r.status >= 300) {
    series.fail(`HTTP ${r.status} ${problemType(r.body)}`.trim(), `${label}: HTTP ${r.status} ${text(r.body)}`);
    return undefined;
  }
  const code = (r.body as { code?: unknown } | null)?.code;
  if (seedEnvelope && code !== 200) {
    series.fail(`envelope code ${code}`, `${label}: envelope code ${code} ${text(r.body)}`);
    return undefined;
  }
  series.ok(ms);
  return r;
}

/** The last path segment of a problem-details `type`, e.g. "unavailable"; empty when there is none. */
function problemType(body: unknown): string {
  const type = (body as { type?: unknown } | null)?.type;
  return typeof type === 'string' ? (type.split('/').pop() ?? '') : '';
}

const text = (body: unknown) => (typeof body === 'string' ? body : JSON.stringify(body));

// ---------------------------------------------------------------------------------------------
// One scenario against Timekeeper

interface ScenarioResult {
  spec: ScenarioSpec;
  init: Series;
  append: Series;
  read: Series;
  verify: Series;
  initWallMs: number;
  appendWallMs: number;
  verifyWallMs: number;
  /** Reads that did not yet show the append that had just been acknowledged. */
  staleReads: number;
  sessionsSkipped: number;
  integrityOk: number;
  mismatches: string[];
  clientCpuMs: number;
  raw?: RawResult;
}

async function runScenario(spec: ScenarioSpec, opts: Options, runId: string): Promise<ScenarioResult> {
  // One socket per session in flight: each session issues its calls strictly one after another.
  const { tk, close } = client(opts, spec.concurrency);
  const ids = Array.from({ length: spec.sessions }, (_, i) => `${runId}_${spec.name}_${i}`);
  const res: ScenarioResult = {
    spec,
    init: new Series(),
    append: new Series(),
    read: new Series(),
    verify: new Series(),
    initWallMs: 0,
    appendWallMs: 0,
    verifyWallMs: 0,
    staleReads: 0,
    sessionsSkipped: 0,
    integrityOk: 0,
    mismatches: [],
    clientCpuMs: 0,
  };
  const cpu0 = process.cpuUsage();
  try {
    const initialised = new Array<boolean>(spec.sessions).fill(false);
    res.initWallMs = await runPool(spec.sessions, spec.concurrency, async (i) => {
      const r = await timed(res.init, ids[i], () => tk.call('seedInit', { query: { session_id: ids[i] } }), true);
      initialised[i] = r !== undefined;
    });

    res.appendWallMs = await runPool(spec.sessions, spec.concurrency, async (i) => {
      if (!initialised[i]) {
        res.sessionsSkipped++;
        return;
      }
      await appendSession(tk, ids[i], spec.events, opts, res);
    });

    res.verifyWallMs = await runPool(spec.sessions, spec.concurrency, async (i) => {
      await verifySession(tk, ids[i], 1 + spec.events, res);
    });
  } finally {
    close();
  }
  const cpu = process.cpuUsage(cpu0);
  res.clientCpuMs = (cpu.user + cpu.system) / 1000;
  return res;
}

/** Appends `events` events in order, USER_INPUT and LLM_RESPONSE alternating, each optionally read back. */
async function appendSession(tk: TimekeeperClient, sessionId: string, events: number, opts: Options, res: ScenarioResult): Promise<void> {
  let acked = 0;
  for (let k = 1; k <= events; k++) {
    // Randomised, and staggered before the first append, so sessions do not arrive in lockstep.
    if (opts.thinkMs > 0) await sleep(opts.thinkMs * (k === 1 ? Math.random() : 0.5 + Math.random()));
    const user = k % 2 === 1;
    const query = {
      session_id: sessionId,
      event_type: user ? 'USER_INPUT' : 'LLM_RESPONSE',
      content: JSON.stringify(user ? { input: `bench question ${k}` } : { response: `bench answer ${k}` }),
    } as const;
    const label = `${sessionId} append ${k}`;
    if (await timed(res.append, label, () => tk.call('seedAppend', { query }), true)) acked++;
    if (!opts.reads) continue;

    const rlabel = `${sessionId} read ${k}`;
    const r = await timed(res.read, rlabel, () => tk.call('seedGet', { query: { session_id: sessionId } }), true);
    if (r) {
      // Appends are acknowledged after their transaction commits, so a read must already see them.
      const seen = r.body.data?.events?.length ?? 0;
      if (seen < 1 + acked) res.staleReads++;
    }
  }
}

/** The chain must verify and hold exactly SESSION_CREATE plus every requested append. */
async function verifySession(tk: TimekeeperClient, sessionId: string, expected: number, res: ScenarioResult): Promise<void> {
  const r = await timed(res.verify, `${sessionId} verify`, () => tk.call('verifySession', { params: { id: sessionId } }), false);
  if (!r) {
    res.mismatches.push(`${sessionId}: verify request failed`);
    return;
  }
  const v = r.body;
  if (typeof v !== 'object' || v === null) {
    res.mismatches.push(`${sessionId}: verify answered with something other than JSON: ${text(v).slice(0, 200)}`);
    return;
  }
  if (!v.ok) res.mismatches.push(`${sessionId}: chain broken at seq ${v.head_seq ?? 0}+1: ${v.reason} ${v.detail ?? ''}`);
  else if (v.checked !== expected || v.head_seq !== expected) res.mismatches.push(`${sessionId}: ${v.checked} events (head seq ${v.head_seq}), expected ${expected}`);
  else res.integrityOk++;
}

// ---------------------------------------------------------------------------------------------
// Raw PostgreSQL baseline: the same database, one autocommitted single-row INSERT per statement

interface RawResult {
  clients: number;
  capNote: string;
  wallMs: number;
  insert: Series;
}

/**
 * PostgreSQL refuses connections past max_connections, and the running Timekeeper holds some
 * itself, so the client count is capped at what is free (leaving a small margin for others).
 */
async function freeConnectionSlots(admin: Pool): Promise<{ free: number; max: number }> {
  const { rows } = await admin.query(
    `SELECT current_setting('max_connections')::int AS max,
            current_setting('superuser_reserved_connections')::int AS reserved,
            (SELECT count(*)::int FROM pg_stat_activity WHERE backend_type = 'client backend') AS used`,
  );
  const { max, reserved, used } = rows[0];
  return { free: Math.max(1, max - reserved - used - 5), max };
}

async function rawInsertBaseline(databaseUrl: string, concurrency: number, rows: number, runId: string): Promise<RawResult> {
  const table = `bench_raw_${runId.replace(/[^a-z0-9_]/gi, '_')}`.toLowerCase();
  const admin = new Pool({ connectionString: databaseUrl, max: 1, application_name: 'timekeeper-bench' });
  let pool: Pool | undefined;
  try {
    const { free, max } = await freeConnectionSlots(admin);
    const clients = Math.min(concurrency, free);
    const capNote = clients < concurrency ? ` (capped from ${concurrency}: max_connections=${max}, the rest are in use)` : '';
    // Shaped like timeline_events (text + bigint key, uuid, jsonb, two hashes) without its triggers.
    await admin.query(
      `CREATE TABLE ${table} (
         session_id text NOT NULL, seq bigint NOT NULL, event_id uuid NOT NULL UNIQUE, event_type text NOT NULL,
         ts bigint NOT NULL, content jsonb NOT NULL, prev_hash text, hash text NOT NULL,
         PRIMARY KEY (session_id, seq))`,
    );
    pool = new Pool({ connectionString: databaseUrl, max: clients, application_name: 'timekeeper-bench' });
    // Open every connection before timing, as Timekeeper's own pool is already warm.
    const warm = await Promise.all(Array.from({ length: clients }, () => pool!.connect()));
    warm.forEach((c) => c.release());

    const insert = new Series();
    const hash = 'ab'.repeat(32);
    const p = pool;
    const wallMs = await runPool(rows, clients, async (i) => {
      const t0 = performance.now();
      try {
        await p.query(
          `INSERT INTO ${table} (session_id, seq, event_id, event_type, ts, content, prev_hash, hash)
           VALUES ($1, $2, gen_random_uuid(), $3, $4, $5, $6, $7)`,
          [`raw_${i % 1000}`, Math.floor(i / 1000) + 1, i % 2 ? 'LLM_RESPONSE' : 'USER_INPUT', Date.now(), JSON.stringify({ input: `bench question ${i}` }), hash, hash],
        );
        insert.ok(performance.now() - t0);
      } catch (err) {
        const e = err as Error & { code?: string };
        insert.fail(e.code ?? e.message, e.message);
      }
    });
    return { clients, capNote, wallMs, insert };
  } finally {
    await pool?.end().catch(() => undefined);
    await admin.query(`DROP TABLE IF EXISTS ${table}`).catch((e: Error) => console.error(`could not drop ${table}: ${e.message}`));
    await admin.end().catch(() => undefined);
  }
}

// ---------------------------------------------------------------------------------------------
// Report

const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
const rate = (count: number, ms: number) => (ms > 0 ? (count * 1000) / ms : NaN);

function latencyRow(label: string, s: Series, wallMs?: number): string {
  const cells = [label.padEnd(8), String(s.ms.length).padStart(6), String(s.errors).padStart(5)];
  for (const v of [s.pct(50), s.pct(95), s.pct(99), s.max()]) cells.push(f1(v).padStart(8));
  cells.push(wallMs === undefined ? '' : `${(wallMs / 1000).toFixed(2).padStart(7)} s  ${f1(rate(s.ms.length, wallMs)).padStart(7)}/s`);
  return '  ' + cells.join(' ');
}

interface Target {
  label: string;
  pass: boolean;
  actual: string;
}

function targetsFor(r: ScenarioResult): Target[] {
  const errors = r.init.errors + r.append.errors + r.read.errors;
  const appendsPerS = rate(r.append.ms.length, r.appendWallMs);
  const common: Target[] = [
    { label: 'zero errors', pass: errors === 0, actual: `${errors} errors` },
    { label: 'every chain verifies with the expected count', pass: r.mismatches.length === 0 && r.verify.errors === 0, actual: `${r.mismatches.length} mismatches` },
  ];
  if (r.spec.name === 'seed') {
    return [
      ...common,
      { label: 'append p99 <= 50 ms', pass: r.append.pct(99) <= 50, actual: `${f1(r.append.pct(99))} ms` },
      { label: 'read p99 <= 20 ms', pass: r.read.pct(99) <= 20, actual: r.read.ms.length ? `${f1(r.read.pct(99))} ms` : 'no reads' },
    ];
  }
  return [...common, { label: '>= 300 appends/s', pass: appendsPerS >= 300, actual: `${f1(appendsPerS)} appends/s` }];
}

function report(r: ScenarioResult, opts: Options): Target[] {
  const { spec } = r;
  const reads = opts.reads;
  const think = opts.thinkMs > 0 ? `, ~${opts.thinkMs} ms think time before each append` : '';
  console.log(`\n== ${spec.name}: ${spec.sessions} sessions x ${spec.events} events, concurrency cap ${spec.concurrency} sessions in flight${reads ? ', one read after each append' : ', no reads'}${think} ==`);
  console.log(`  ${'call'.padEnd(8)} ${'ok'.padStart(6)} ${'err'.padStart(5)} ${'p50 ms'.padStart(8)} ${'p95 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'max ms'.padStart(8)}   phase wall / rate`);
  console.log(latencyRow('init', r.init, r.initWallMs));
  console.log(latencyRow('append', r.append, r.appendWallMs));
  if (reads) console.log(latencyRow('read', r.read));
  console.log(latencyRow('verify', r.verify, r.verifyWallMs));
  const appendsPerS = rate(r.append.ms.length, r.appendWallMs);
  console.log(`  appends/s: ${f1(appendsPerS)} (${r.append.ms.length} appends in ${(r.appendWallMs / 1000).toFixed(2)} s of append-phase wall clock${reads ? ', reads included' : ''}${think ? ', think time included' : ''})`);

  const errors = [...r.init.samples, ...r.append.samples, ...r.read.samples].slice(0, 5);
  console.log(`  errors: init ${r.init.errors}, append ${r.append.errors}, read ${r.read.errors}${r.sessionsSkipped ? `; ${r.sessionsSkipped} sessions skipped (init failed)` : ''}`);
  for (const [call, s] of [['init', r.init], ['append', r.append], ['read', r.read]] as const) {
    if (s.errors > 0) console.log(`    ${call} by kind: ${[...s.kinds].map(([k, n]) => `${k} x${n}`).join(', ')}`);
  }
  for (const e of errors) console.log(`    ${e}`);
  console.log(`  integrity: ${r.integrityOk}/${spec.sessions} sessions verify ok with ${1 + spec.events} events; ${r.mismatches.length} mismatches`);
  for (const m of r.mismatches.slice(0, 5)) console.log(`    ${m}`);
  if (reads) console.log(`  read-after-append: ${r.staleReads} reads missed the just-acknowledged event`);
  console.log(`  bench client CPU: ${(r.clientCpuMs / 1000).toFixed(2)} s over ${((r.initWallMs + r.appendWallMs + r.verifyWallMs) / 1000).toFixed(2)} s wall`);

  if (r.raw) {
    const raw = r.raw;
    const rawPerS = rate(raw.insert.ms.length, raw.wallMs);
    console.log(`  raw PostgreSQL: ${raw.insert.ms.length} single-row autocommit INSERTs from ${raw.clients} clients${raw.capNote}`);
    console.log(latencyRow('insert', raw.insert, raw.wallMs));
    for (const e of raw.insert.samples) console.log(`    ${e}`);
    console.log(`  ratio Timekeeper appends/s / raw inserts/s: ${f1(appendsPerS)} / ${f1(rawPerS)} = ${(appendsPerS / rawPerS).toFixed(3)}`);
  }

  const targets = targetsFor(r);
  console.log('  targets:');
  for (const t of targets) console.log(`    [${t.pass ? 'PASS' : 'MISS'}] ${t.label}: ${t.actual}`);
  return targets;
}

// ---------------------------------------------------------------------------------------------

async function checkReachable(opts: Options): Promise<void> {
  const { tk, close } = client(opts, 1, 5000);
  try {
    const r = await tk.call('readiness');
    if (r.status !== 200) throw new Error(`${opts.url}/readyz answered ${r.status}: ${JSON.stringify(r.body)}`);
  } catch (err) {
    const e = err as Error & { cause?: Error };
    throw new Error(`Timekeeper is not ready at ${opts.url} (${e.message}${e.cause?.message ? `: ${e.cause.message}` : ''}); start it first, e.g. npm start`);
  } finally {
    close();
  }
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  await checkReachable(opts);
  const runId = `bench_${Date.now()}`;
  console.log(`Timekeeper timeline bench  ${new Date().toISOString()}  url=${opts.url}  session prefix=${runId}_`);

  if (opts.warmup) {
    // First requests pay for JIT, workflow-cache and connection set-up; keep them out of the figures.
    const w = await runScenario({ name: 'seed', sessions: 10, events: 2, concurrency: 10 }, { ...opts, thinkMs: 0 }, `${runId}_warmup`);
    console.log(`warm-up: 10 sessions x 2 events, ${w.init.errors + w.append.errors + w.read.errors} errors (not counted)`);
  }

  let missed = 0;
  for (const spec of opts.scenarios) {
    const r = await runScenario(spec, opts, runId);
    if (opts.raw) r.raw = await rawInsertBaseline(opts.databaseUrl, spec.concurrency, Math.max(spec.sessions * spec.events, 5000), `${runId}_${spec.name}`);
    missed += report(r, opts).filter((t) => !t.pass).length;
  }
  console.log(`\n${missed === 0 ? 'all targets met' : `${missed} target(s) missed`}`);
  if (opts.strict && missed > 0) process.exitCode = 1;
}

main().catch((err) => {
  console.error(`bench failed: ${(err as Error).message}`);
  process.exitCode = 2;
});
