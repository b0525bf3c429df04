/**
 * `npm run bench:timeline`: load benchmark against a RUNNING Timekeeper (it starts nothing of
 * Timekeeper's), side by side with the engine's floor on the same Temporal server.
 *
 *   npm run bench:timeline -- --url http://127.0.0.1:8100 --temporal 127.0.0.1:7233
 *   npm run bench:timeline -- --scenario single,open --open-seconds 40
 *   npm run bench:timeline -- --scenario large --sessions 2000 --events 10 --concurrency 200 --no-floor
 *
 * Scenarios (see bench/README.md):
 *   single one session, --single-appends appends back to back, no reads: the per-append cost.
 *   paired the single writer and every floor in the same rounds: one session each, one append to
 *          each per round, the order turned each round, after 200 uncounted rounds; ratios of
 *          p50s and the median of per-round ratios. Also the design not chosen: the durable REST
 *          floor with its commit in a regular activity instead of a local one.
 *   seed   100 sessions x 5 events, all sessions in flight at once, through the seed endpoints;
 *          a read follows every append (--no-reads drops them). Targets: zero errors, append
 *          p99 <= 50 ms, read p99 <= 20 ms.
 *   open   an agent loop, open: 100 sessions, each waiting a random 1-3 s (its LLM) before every
 *          append, USER_INPUT and LLM_RESPONSE alternating, for --open-seconds.
 *   large  1,000 sessions x 10 events, at most --concurrency sessions in flight (default 100).
 *          Target: zero errors at >= 300 appends/s.
 *
 * The floor (bench/floor/): after each Timekeeper scenario the same shape runs against a no-op
 * workflow with a no-op Update handler, served by a bench-only worker in this process on the
 * same Temporal server, and the ratios are printed (issue 9's targets: single-writer p50 <= 1.3x,
 * seed-load appends/s >= 0.8x, open-loop p50 and p99 <= 1.5x the floor's). The seed and large
 * scenarios end by verifying every chain and measuring raw single-row INSERTs (bench/raw-insert.ts).
 */
import { readFlags } from './cli';
import { performance } from 'node:perf_hooks';
import { TimekeeperClient } from '../sdk/client';
import { startFloor } from './floor/floor';
import { keepAliveFetch } from './http';
import { f1, LATENCY_HEADER, latencyRow, rate, runPool, Series, sleep, text, timed } from './measure';
import { RawResult, rawInsertBaseline } from './raw-insert';
import { BenchTarget, timekeeperTarget } from './target';
import { workflowStackTracesOf } from '../lib/config';
import { LIMITS } from '../lib/domain/limits';
import { perCall, rigCpuGroups, type CpuGroups } from './cpu-groups';

// ---------------------------------------------------------------------------------------------
// Options

type ScenarioName = 'single' | 'paired' | 'seed' | 'open' | 'large';
const SCENARIOS: ScenarioName[] = ['single', 'paired', 'seed', 'open', 'large'];
const DEFAULT_SCENARIOS: ScenarioName[] = ['single', 'seed', 'open'];

interface ScenarioSpec {
  name: ScenarioName;
  sessions: number;
  events: number;
  concurrency: number;
}

interface Options {
  url: string;
  temporalAddress: string;
  namespace: string;
  databaseUrl: string;
  apiKey: string | undefined;
  scenarios: ScenarioSpec[];
  floor: boolean;
  reads: boolean;
  /** Mean pause before each append, as an agent waits for its LLM; 0 = closed loop, no think time. */
  thinkMs: number;
  singleAppends: number;
  openSeconds: number;
  openSessions: number;
  /** The open loop's pause before each append, uniform in [min, max]. */
  pauseMinMs: number;
  pauseMaxMs: number;
  raw: boolean;
  warmup: boolean;
  timeoutMs: number;
  strict: boolean;
  /** Node's global fetch (undici) instead of the node:http keep-alive agent. */
  globalFetch: boolean;
  /** bench/rig-serve.ts's pid: print CPU per call by process for each phase. */
  cpuRig?: number;
  /** Each scenario's floors before Timekeeper's phase instead of after it. */
  floorsFirst: boolean;
}

const DEFAULTS: Record<'seed' | 'large', ScenarioSpec> = {
  seed: { name: 'seed', sessions: 100, events: 5, concurrency: 100 },
  large: { name: 'large', sessions: 1000, events: 10, concurrency: 100 },
};

const USAGE = `usage: npm run bench:timeline -- [options]
  --url URL            Timekeeper base URL (default $BENCH_URL or http://127.0.0.1:8000)
  --temporal ADDR      the Temporal server that Timekeeper uses, for the bare-Update floor
                       (default $TEMPORAL_ADDRESS or 127.0.0.1:7233); namespace $TEMPORAL_NAMESPACE
  --scenario LIST      comma-separated: single, paired, seed, open, large; or all
                       (default single,seed,open)
  --no-floor           skip the bare-Update floor and the ratios
  --floors-first       run each scenario's floors before Timekeeper's phase (default: after)
  --single-appends N   appends of the single-writer scenario, and rounds of paired (default 200)
  --open-seconds S     duration of the open-loop scenario, per target (default 50)
  --open-sessions N    sessions of the open-loop scenario (default 100)
  --pause-ms MIN-MAX   open-loop pause before each append (default 1000-3000)
  --sessions N         sessions of the seed/large scenario(s)
  --events M           appends per session (seed/large)
  --concurrency C      sessions in flight at once (seed/large; also the raw-insert client count)
  --no-reads           skip the read after each append (seed/large)
  --think-ms T         seed/large: pause about T ms (uniform 0.5T..1.5T) before each append
                       (default 0: back to back, a closed loop)
  --no-raw             skip the raw PostgreSQL insert comparison
  --no-warmup          skip the small warm-up runs before the scenarios
  --timeout-ms T       per-request timeout (default 60000)
  --strict             exit with status 1 when a target is missed
  --global-fetch       send through Node's global fetch (undici) instead of a node:http
                       keep-alive agent; costs the client about twice the CPU per request
  --cpu-rig PID        the pid of bench/rig-serve.ts --launch serving --url: print each phase's
                       CPU per call by process (API, worker, Temporal, PostgreSQL, this bench
                       with the floors' worker, the durable floor's HTTP front)
env: BENCH_URL, TEMPORAL_ADDRESS, DATABASE_URL (owner connection for the scratch table), BENCH_API_KEY`;

const BARE_FLAGS = ['no-reads', 'no-raw', 'no-warmup', 'no-floor', 'strict', 'global-fetch', 'floors-first'];
const VALUE_FLAGS = ['url', 'temporal', 'scenario', 'sessions', 'events', 'concurrency', 'timeout-ms', 'think-ms', 'single-appends', 'open-seconds', 'open-sessions', 'pause-ms', 'cpu-rig'];

function parseArgs(argv: string[]): Options {
  const flags = readFlags(argv, USAGE, { values: VALUE_FLAGS, switches: BARE_FLAGS });
  const int = (k: string, min = 1) => flags.int(k, min);
  const which = flags.value('scenario') ?? DEFAULT_SCENARIOS.join(',');
  const names = which === 'all' ? SCENARIOS : which.split(',').map((n) => n.trim());
  for (const n of names) if (!SCENARIOS.includes(n as ScenarioName)) throw new Error(`--scenario takes ${SCENARIOS.join(', ')} or all, got "${n}"`);
  // Scale flags apply to every selected closed-loop scenario; the defaults keep each one's shape.
  const scenarios = (names as ScenarioName[]).map((n) => {
    const d = n === 'seed' || n === 'large' ? DEFAULTS[n] : { name: n, sessions: 1, events: 1, concurrency: 1 };
    if (n !== 'seed' && n !== 'large') return d;
    return { ...d, sessions: int('sessions') ?? d.sessions, events: int('events') ?? d.events, concurrency: int('concurrency') ?? d.concurrency };
  });
  const pause = /^(\d+)-(\d+)$/.exec(flags.value('pause-ms') ?? '1000-3000');
  if (!pause || Number(pause[1]) > Number(pause[2])) throw new Error(`--pause-ms takes MIN-MAX in ms, e.g. 1000-3000, got "${flags.value('pause-ms')}"`);

  return {
    url: (flags.value('url') ?? process.env.BENCH_URL ?? 'http://127.0.0.1:8000').replace(/\/+$/, ''),
    temporalAddress: flags.value('temporal') ?? process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
    namespace: process.env.TEMPORAL_NAMESPACE || 'default',
    databaseUrl: process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/timekeeper',
    apiKey: process.env.BENCH_API_KEY || undefined,
    scenarios,
    floor: !flags.has('no-floor'),
    reads: !flags.has('no-reads'),
    thinkMs: int('think-ms', 0) ?? 0,
    singleAppends: int('single-appends') ?? 200,
    openSeconds: int('open-seconds') ?? 50,
    openSessions: int('open-sessions') ?? 100,
    pauseMinMs: Number(pause[1]),
    pauseMaxMs: Number(pause[2]),
    raw: !flags.has('no-raw'),
    warmup: !flags.has('no-warmup'),
    timeoutMs: int('timeout-ms') ?? 60_000,
    cpuRig: int('cpu-rig'),
    floorsFirst: flags.has('floors-first'),
    strict: flags.has('strict'),
    globalFetch: flags.has('global-fetch'),
  };
}

// ---------------------------------------------------------------------------------------------
// HTTP: the typed client (sdk/client.ts), by default on a fetch over node:http with one
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

/**
 * Runs a scenario's phases, Timekeeper's first and then the floors' as listed, or with
 * --floors-first the floors' first: a machine that drifts during a run (a server's store
 * growing, a checkpoint) then weighs on the other side, and runs of both orders show whether
 * the order moved a ratio. Answers in the listed order.
 */
async function inOrder<R>(opts: Options, phases: (() => Promise<R> | undefined)[]): Promise<(R | undefined)[]> {
  const order = opts.floorsFirst ? [...phases.keys()].slice(1).concat(0) : [...phases.keys()];
  const out = new Array<R | undefined>(phases.length);
  for (const i of order) out[i] = await phases[i]();
  return out;
}

// ---------------------------------------------------------------------------------------------
// CPU per call by process (--cpu-rig)

let readCpu: (() => CpuGroups) | undefined;

/** Starts a phase's CPU reading; the returned function prints its CPU per call. */
function cpuPhase(what: string, target: string): (calls: number) => void {
  const before = readCpu?.();
  return (calls) => {
    if (before) console.log(`  CPU per ${what} [${target}]: ${perCall(before, readCpu!(), calls)}`);
  };
}

// ---------------------------------------------------------------------------------------------
// Closed-loop scenarios (seed, large) against one target

interface ScenarioResult {
  spec: ScenarioSpec;
  target: string;
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
  /** False for the floor: it has no chains. */
  verified: boolean;
  raw?: RawResult;
}

/** Init every session, then append (and read) in order, then (Timekeeper only, `tk`) verify every chain. */
async function runScenario(spec: ScenarioSpec, target: BenchTarget, opts: Options, runId: string, tk?: TimekeeperClient): Promise<ScenarioResult> {
  const ids = Array.from({ length: spec.sessions }, (_, i) => `${runId}_${spec.name}_${i}`);
  const reads = opts.reads && target.read !== undefined;
  const res: ScenarioResult = {
    spec,
    target: target.name,
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
    verified: tk !== undefined,
  };
  const cpu0 = process.cpuUsage();
  const initialised = new Array<boolean>(spec.sessions).fill(false);
  const initCpu = cpuPhase(`${spec.name} init`, target.name);
  res.initWallMs = await runPool(spec.sessions, spec.concurrency, async (i) => {
    initialised[i] = (await timed(res.init, ids[i], async () => (await target.init(ids[i]), true))) === true;
  });

  initCpu(res.init.ms.length + res.init.errors);
  const appendCpu = cpuPhase(`${spec.name} append${reads ? ' and read' : ''}`, target.name);
  res.appendWallMs = await runPool(spec.sessions, spec.concurrency, async (i) => {
    if (!initialised[i]) {
      res.sessionsSkipped++;
      return;
    }
    let acked = 0;
    for (let k = 1; k <= spec.events; k++) {
      // Randomised, and staggered before the first append, so sessions do not arrive in lockstep.
      if (opts.thinkMs > 0) await sleep(opts.thinkMs * (k === 1 ? Math.random() : 0.5 + Math.random()));
      if (await timed(res.append, `${ids[i]} append ${k}`, async () => (await target.append(ids[i], k), true))) acked++;
      if (!reads) continue;
      const seen = await timed(res.read, `${ids[i]} read ${k}`, () => target.read!(ids[i]));
      // Appends are acknowledged after their transaction commits, so a read must already see them.
      if (seen !== undefined && seen < 1 + acked) res.staleReads++;
    }
  });

  appendCpu(res.append.ms.length + res.append.errors);
  if (tk) res.verifyWallMs = await runPool(spec.sessions, spec.concurrency, (i) => verifySession(tk, ids[i], 1 + spec.events, res));
  const cpu = process.cpuUsage(cpu0);
  res.clientCpuMs = (cpu.user + cpu.system) / 1000;
  return res;
}

/** The chain must verify and hold exactly SESSION_CREATE plus every requested append. */
async function verifySession(tk: TimekeeperClient, sessionId: string, expected: number, res: ScenarioResult): Promise<void> {
  const r = await timed(res.verify, `${sessionId} verify`, () => tk.call('verifySession', { params: { id: sessionId } }));
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
// Single writer and open loop

interface LoopResult {
  target: string;
  append: Series;
  wallMs: number;
  /** Appends sent per second over the run (successful or not): the load the agents offered. */
  offeredPerS: number;
}

/** One session, `n` appends back to back. */
async function runSingle(target: BenchTarget, n: number, runId: string): Promise<LoopResult> {
  const id = `${runId}_single`;
  const append = new Series();
  await target.init(id);
  const cpu = cpuPhase('single-writer append', target.name);
  const t0 = performance.now();
  for (let k = 1; k <= n; k++) await timed(append, `${id} append ${k}`, () => target.append(id, k));
  const wallMs = performance.now() - t0;
  cpu(n);
  return { target: target.name, append, wallMs, offeredPerS: rate(n, wallMs) };
}

/**
 * The single writer, paired: one session per target and `n` rounds, each round one append to
 * every target, one after another, the order turned by one each round. The sequential phases
 * of `single` see the machine at different minutes, and on a shared 2-core host a minute moves a
 * p50 by a third (docs/operations.md, issue 17): here every target's k-th append is sent within
 * the same ~100 ms, so drift weighs on all alike. Before the rounds, `warm` uncounted appends to
 * each target, interleaved the same way: V8 optimises a hot path after thousands of calls, and
 * the path with the most code would otherwise pay for it inside the figures. Each target's
 * ratio is also given per round (its append's time over the reference's in that round), median.
 */
async function runPaired(targets: BenchTarget[], n: number, warm: number, runId: string): Promise<{ series: Series[]; perRound: number[][] }> {
  const ids = targets.map((_, i) => `${runId}_paired${i}`);
  await Promise.all(targets.map((t, i) => t.init(ids[i])));
  const series = targets.map(() => new Series());
  const times: number[][] = targets.map(() => []);
  for (let k = 1; k <= warm + n; k++) {
    const round = new Array<number>(targets.length).fill(NaN);
    for (let j = 0; j < targets.length; j++) {
      const i = (j + k) % targets.length;
      const s = k > warm ? series[i] : new Series();
      const failed = s.errors;
      const t0 = performance.now();
      await timed(s, `${ids[i]} append ${k}`, () => targets[i].append(ids[i], k));
      if (s.errors === failed) round[i] = performance.now() - t0;
    }
    if (k > warm) round.forEach((ms, i) => times[i].push(ms));
  }
  return { series, perRound: times };
}

/** The median over rounds of a's time ÷ b's (rounds where either failed are left out). */
function medianRatio(a: number[], b: number[]): number {
  const r = a.map((x, i) => x / b[i]).filter((x) => Number.isFinite(x)).sort((x, y) => x - y);
  return r.length ? r[Math.floor((r.length - 1) / 2)] : NaN;
}

/**
 * Agents, open loop: every session waits a random pause (its LLM) before each append, whatever
 * the previous append cost, until `seconds` have passed. All sessions are created first.
 */
async function runOpenLoop(target: BenchTarget, opts: Options, runId: string): Promise<LoopResult> {
  const ids = Array.from({ length: opts.openSessions }, (_, i) => `${runId}_open_${i}`);
  const init = new Series();
  const started = new Array<boolean>(ids.length).fill(false);
  await runPool(ids.length, ids.length, async (i) => {
    started[i] = (await timed(init, ids[i], async () => (await target.init(ids[i]), true))) === true;
  });
  if (init.errors) console.log(`  ${target.name}: ${init.errors} of ${ids.length} open-loop sessions failed to start: ${init.samples[0]}`);
  const append = new Series();
  let sent = 0;
  const pause = () => opts.pauseMinMs + Math.random() * (opts.pauseMaxMs - opts.pauseMinMs);
  const cpu = cpuPhase('open-loop append', target.name);
  const t0 = performance.now();
  const end = t0 + opts.openSeconds * 1000;
  await Promise.all(
    ids.map(async (id, i) => {
      if (!started[i]) return;
      for (let k = 1; ; k++) {
        await sleep(pause());
        if (performance.now() >= end) return;
        sent++;
        await timed(append, `${id} append ${k}`, () => target.append(id, k));
      }
    }),
  );
  const wallMs = performance.now() - t0;
  cpu(sent);
  return { target: target.name, append, wallMs, offeredPerS: rate(sent, opts.openSeconds * 1000) };
}

// ---------------------------------------------------------------------------------------------
// Report

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
      ...(r.read.ms.length + r.read.errors > 0 ? [{ label: 'read p99 <= 20 ms', pass: r.read.pct(99) <= 20, actual: `${f1(r.read.pct(99))} ms` }] : []),
    ];
  }
  return [...common, { label: '>= 300 appends/s', pass: appendsPerS >= 300, actual: `${f1(appendsPerS)} appends/s` }];
}

function printErrors(series: [string, Series][]): void {
  for (const [call, s] of series) if (s.errors > 0) console.log(`    ${call} by kind: ${[...s.kinds].map(([k, n]) => `${k} x${n}`).join(', ')}`);
  for (const e of series.flatMap(([, s]) => s.samples).slice(0, 5)) console.log(`    ${e}`);
}

/** Prints a closed-loop scenario; Timekeeper's results are checked against the targets. */
function report(r: ScenarioResult, opts: Options): Target[] {
  const { spec } = r;
  const reads = r.read.ms.length + r.read.errors > 0;
  const think = opts.thinkMs > 0 ? `, ~${opts.thinkMs} ms think time before each append` : '';
  console.log(`\n== ${spec.name} [${r.target}]: ${spec.sessions} sessions x ${spec.events} events, concurrency cap ${spec.concurrency} sessions in flight${reads ? ', one read after each append' : ', no reads'}${think} ==`);
  console.log(LATENCY_HEADER);
  console.log(latencyRow('init', r.init, r.initWallMs));
  console.log(latencyRow('append', r.append, r.appendWallMs));
  if (reads) console.log(latencyRow('read', r.read));
  if (r.verified) console.log(latencyRow('verify', r.verify, r.verifyWallMs));
  const appendsPerS = rate(r.append.ms.length, r.appendWallMs);
  console.log(`  appends/s: ${f1(appendsPerS)} (${r.append.ms.length} appends in ${(r.appendWallMs / 1000).toFixed(2)} s of append-phase wall clock${reads ? ', reads included' : ''}${think ? ', think time included' : ''})`);
  console.log(`  errors: init ${r.init.errors}, append ${r.append.errors}, read ${r.read.errors}${r.sessionsSkipped ? `; ${r.sessionsSkipped} sessions skipped (init failed)` : ''}`);
  printErrors([['init', r.init], ['append', r.append], ['read', r.read]]);
  if (!r.verified) return [];
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

function reportLoop(title: string, r: LoopResult): void {
  console.log(`\n== ${title} [${r.target}] ==`);
  console.log(LATENCY_HEADER);
  console.log(latencyRow('append', r.append, r.wallMs));
  console.log(`  offered: ${f1(r.offeredPerS)} appends/s; errors: ${r.append.errors}`);
  printErrors([['append', r.append]]);
}

/** One line of the comparison: Timekeeper's figure, the floor's, their ratio and the issue's bound. */
interface Ratio {
  what: string;
  tk: number;
  floor: number;
  /** The ratio must stay at or below (`max`) or at or above (`min`) this; none: shown only. */
  bound?: { max?: number; min?: number };
}

function reportRatios(ratios: Ratio[]): Target[] {
  if (ratios.length === 0) return [];
  console.log('\n== Timekeeper against the engine floor (same Temporal server, same run) ==');
  console.log('  floor column: the bare Update, except in rows that name another one');
  console.log(`  ${'figure'.padEnd(34)} ${'Timekeeper'.padStart(11)} ${'floor'.padStart(11)} ${'ratio'.padStart(7)}   target`);
  const targets: Target[] = [];
  for (const r of ratios) {
    const ratio = r.tk / r.floor;
    const b = r.bound;
    const want = b?.max !== undefined ? `<= ${b.max}x` : b?.min !== undefined ? `>= ${b.min}x` : '';
    const pass = b?.max !== undefined ? ratio <= b.max : b?.min !== undefined ? ratio >= b.min : true;
    const verdict = want ? `${want} ${pass ? 'PASS' : 'MISS'}` : '';
    console.log(`  ${r.what.padEnd(34)} ${f1(r.tk).padStart(11)} ${f1(r.floor).padStart(11)} ${ratio.toFixed(2).padStart(6)}x   ${verdict}`);
    if (want) targets.push({ label: `${r.what} ratio ${want}`, pass, actual: `${ratio.toFixed(2)}x` });
  }
  return targets;
}

// ---------------------------------------------------------------------------------------------
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
  if (opts.cpuRig) readCpu = rigCpuGroups(opts.cpuRig);
  const runId = `bench_${Date.now()}`;
  console.log(`Timekeeper timeline bench  ${new Date().toISOString()}  url=${opts.url}  session prefix=${runId}_`);
  const sockets = Math.max(opts.openSessions, ...opts.scenarios.map((s) => s.concurrency));
  const { tk, close } = client(opts, sockets);
  const timekeeper = timekeeperTarget(tk);
  // The durable REST floor commits to the database Timekeeper uses, with as many connections as its worker's pool.
  const floor = opts.floor ? await startFloor(opts.temporalAddress, opts.namespace, { durable: { databaseUrl: opts.databaseUrl, clients: LIMITS.dbPoolMax, sockets } }) : undefined;
  if (floor) console.log(`floor: bare-Update workflows on ${opts.temporalAddress}, worker in this process (workflow stack traces ${workflowStackTracesOf() ? 'on' : 'off'}, as Timekeeper's worker: WORKFLOW_STACK_TRACES); durable REST floor committing to ${opts.databaseUrl.replace(/\/\/[^@]*@/, '//')}`);
  const durable = floor?.durableTarget;
  const targets = [timekeeper, ...(floor ? [floor.target] : []), ...(durable ? [durable] : [])];
  const ratios: Ratio[] = [];
  let missed = 0;
  try {
    if (opts.warmup) {
      // First requests pay for JIT, workflow-cache and connection set-up; keep them out of the figures.
      for (const t of targets) {
        const w = await runScenario({ name: 'seed', sessions: 10, events: 2, concurrency: 10 }, t, { ...opts, thinkMs: 0 }, `${runId}_warmup${t === timekeeper ? '' : t === durable ? '_floordu' : '_floor'}`);
        console.log(`warm-up [${t.name}]: 10 sessions x 2 events, ${w.init.errors + w.append.errors + w.read.errors} errors (not counted)`);
      }
    }
    for (const spec of opts.scenarios) {
      // Each Timekeeper scenario is followed at once by the floors' (or, with --floors-first, preceded), so all see the same machine.
      if (spec.name === 'single') {
        const [tkRun, b, c, d] = await inOrder(opts, [
          () => runSingle(timekeeper, opts.singleAppends, runId),
          () => floor && runSingle(floor.target, opts.singleAppends, runId),
          // The one-writer floor: an Update that waits for one no-op local activity (a different id prefix: its own workflows).
          () => floor && runSingle(floor.localTarget, opts.singleAppends, `${runId}la`),
          // The durable REST floor: HTTP front, Update, one local activity committing one row.
          () => durable && runSingle(durable, opts.singleAppends, `${runId}du`),
        ]);
        const a = tkRun!;
        for (const r of [a, b, c, d]) if (r) reportLoop(`single: one session, ${opts.singleAppends} appends back to back`, r);
        missed += a.append.errors > 0 ? 1 : 0;
        if (b) ratios.push({ what: 'single-writer append p50 ms', tk: a.append.pct(50), floor: b.append.pct(50), bound: { max: 1.3 } }, { what: 'single-writer append p99 ms', tk: a.append.pct(99), floor: b.append.pct(99) });
        if (b && c) {
          ratios.push(
            { what: 'Update + no-op local activity p50', tk: c.append.pct(50), floor: b.append.pct(50) },
            { what: 'single-writer p50 / (Update + LA)', tk: a.append.pct(50), floor: c.append.pct(50) },
          );
        }
        if (c && d) {
          ratios.push(
            { what: 'REST + Update + LA commit p50', tk: d.append.pct(50), floor: c.append.pct(50) },
            { what: 'single-writer p50 / durable REST', tk: a.append.pct(50), floor: d.append.pct(50) },
            { what: 'single-writer p99 / durable REST', tk: a.append.pct(99), floor: d.append.pct(99) },
          );
        }
      } else if (spec.name === 'paired') {
        const local = floor?.localTarget;
        const viaActivity = floor?.durableActivityTarget;
        const all = [timekeeper, ...(floor ? [floor.target] : []), ...(local ? [local] : []), ...(durable ? [durable] : []), ...(viaActivity ? [viaActivity] : [])];
        const { series, perRound } = await runPaired(all, opts.singleAppends, opts.warmup ? 200 : 0, `${runId}_pr`);
        console.log(`== paired: one session per target, ${opts.singleAppends} rounds of one append each, order turned each round${opts.warmup ? ' (after 200 uncounted rounds)' : ''} ==`);
        console.log('  target                               ok   err   p50 ms   p95 ms   p99 ms');
        all.forEach((t, i) => console.log(`  ${t.name.padEnd(34)} ${String(series[i].ms.length).padStart(4)} ${String(series[i].errors).padStart(5)} ${series[i].pct(50).toFixed(1).padStart(8)} ${series[i].pct(95).toFixed(1).padStart(8)} ${series[i].pct(99).toFixed(1).padStart(8)}`));
        missed += series[0].errors > 0 ? 1 : 0;
        const at = (t: BenchTarget | undefined) => (t ? all.indexOf(t) : -1);
        const pair = (what: string, a: number, b: number, bound?: { max: number }) => {
          if (a < 0 || b < 0) return;
          ratios.push({ what: `paired: ${what} p50`, tk: series[a].pct(50), floor: series[b].pct(50), ...(bound ? { bound } : {}) });
          console.log(`  ${what}: median of per-round ratios ${medianRatio(perRound[a], perRound[b]).toFixed(2)}x`);
        };
        pair('single writer / (Update + LA)', 0, at(local), { max: 1.2 });
        pair('durable REST / (Update + LA)', at(durable), at(local));
        pair('single writer / durable REST', 0, at(durable));
        pair('single writer / bare Update', 0, at(floor?.target));
        // The design not chosen: the same minimal REST service, its commit a regular activity.
        pair('single writer / REST + Update + activity commit', 0, at(viaActivity));
      } else if (spec.name === 'open') {
        const title = `open: ${opts.openSessions} agents, ${opts.pauseMinMs}-${opts.pauseMaxMs} ms pause before each append, ${opts.openSeconds} s`;
        const [tkRun, b, d] = await inOrder(opts, [
          () => runOpenLoop(timekeeper, opts, runId),
          () => floor && runOpenLoop(floor.target, opts, runId),
          () => durable && runOpenLoop(durable, opts, `${runId}du`),
        ]);
        const a = tkRun!;
        for (const r of [a, b, d]) if (r) reportLoop(title, r);
        missed += a.append.errors > 0 ? 1 : 0;
        if (b) {
          ratios.push(
            { what: 'open-loop offered appends/s', tk: a.offeredPerS, floor: b.offeredPerS },
            { what: 'open-loop append p50 ms', tk: a.append.pct(50), floor: b.append.pct(50), bound: { max: 1.5 } },
            { what: 'open-loop append p95 ms', tk: a.append.pct(95), floor: b.append.pct(95) },
            { what: 'open-loop append p99 ms', tk: a.append.pct(99), floor: b.append.pct(99), bound: { max: 1.5 } },
            { what: 'open-loop append max ms', tk: a.append.max(), floor: b.append.max() },
          );
        }
        if (d) {
          ratios.push(
            { what: 'open-loop p50 / durable REST', tk: a.append.pct(50), floor: d.append.pct(50) },
            { what: 'open-loop p99 / durable REST', tk: a.append.pct(99), floor: d.append.pct(99) },
          );
        }
      } else {
        const [tkRun, b, c, d] = await inOrder(opts, [
          () => runScenario(spec, timekeeper, opts, runId, tk),
          () => floor && runScenario(spec, floor.target, opts, `${runId}_floor`),
          // The seed load also through the one-writer floor (Update + no-op local activity).
          () => (floor && spec.name === 'seed' ? runScenario(spec, floor.localTarget, opts, `${runId}_floorla`) : undefined),
          // And through the durable REST floor (HTTP front, Update or update-with-start, one committed row).
          () => (durable && spec.name === 'seed' ? runScenario(spec, durable, opts, `${runId}_floordu`) : undefined),
        ]);
        const a = tkRun!;
        if (opts.raw) a.raw = await rawInsertBaseline(opts.databaseUrl, spec.concurrency, Math.max(spec.sessions * spec.events, 5000), `${runId}_${spec.name}`);
        missed += report(a, opts).filter((t) => !t.pass).length;
        if (b) {
          report(b, opts);
          const reads = opts.reads ? ' (Timekeeper reads included)' : '';
          ratios.push(
            { what: `${spec.name} appends/s${reads}`, tk: rate(a.append.ms.length, a.appendWallMs), floor: rate(b.append.ms.length, b.appendWallMs), bound: spec.name === 'seed' ? { min: 0.8 } : undefined },
            { what: `${spec.name} init/s`, tk: rate(a.init.ms.length, a.initWallMs), floor: rate(b.init.ms.length, b.initWallMs) },
            // The floor's init is a bare update-with-start: a workflow start and its first update, at the same concurrency.
            { what: `${spec.name} init p50 ms`, tk: a.init.pct(50), floor: b.init.pct(50), bound: spec.name === 'seed' ? { max: 1.5 } : undefined },
            { what: `${spec.name} init p99 ms`, tk: a.init.pct(99), floor: b.init.pct(99) },
            { what: `${spec.name} append p50 ms`, tk: a.append.pct(50), floor: b.append.pct(50) },
          );
        }
        // The create alternative not chosen: eager start + first Update instead of update-with-start (seed only).
        const e = floor && spec.name === 'seed' ? await runScenario(spec, floor.eagerTarget, opts, `${runId}_floorea`) : undefined;
        if (b && e) {
          report(e, opts);
          console.log(`  ${floor!.eagerStarts()} of ${e.init.ms.length} starts ran eagerly`);
          ratios.push({ what: `${spec.name} init p50: eager start + Update`, tk: e.init.pct(50), floor: b.init.pct(50) });
        }
        if (b && c) {
          report(c, opts);
          const perS = (r: typeof a) => rate(r.append.ms.length, r.appendWallMs);
          ratios.push(
            { what: `${spec.name} appends/s: Update + LA`, tk: perS(c), floor: perS(b) },
            { what: `${spec.name} appends/s / (Update + LA)`, tk: perS(a), floor: perS(c) },
          );
        }
        if (d) {
          report(d, opts);
          const perS = (r: typeof a) => rate(r.append.ms.length, r.appendWallMs);
          ratios.push(
            { what: `${spec.name} appends/s / durable REST`, tk: perS(a), floor: perS(d) },
            { what: `${spec.name} init p50 / durable REST`, tk: a.init.pct(50), floor: d.init.pct(50) },
            { what: `${spec.name} init p99 / durable REST`, tk: a.init.pct(99), floor: d.init.pct(99) },
          );
        }
      }
    }
  } finally {
    close();
    await floor?.close();
  }
  missed += reportRatios(ratios).filter((t) => !t.pass).length;
  console.log(`\n${missed === 0 ? 'all targets met' : `${missed} target(s) missed`}`);
  if (opts.strict && missed > 0) process.exitCode = 1;
}

main().then(
  // The floor's worker runtime keeps handles open; the figures are printed.
  () => process.exit(process.exitCode ?? 0),
  (err) => {
    console.error(`bench failed: ${(err as Error).message}`);
    process.exit(2);
  },
);
