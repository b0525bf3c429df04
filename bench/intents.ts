/**
 * `npm run bench:intents`: intent latencies against a RUNNING Timekeeper (it starts nothing),
 * through the typed client (sdk/client.ts, tk.intents).
 *
 *   BENCH_URL=http://127.0.0.1:8123 DATABASE_URL=postgres://…/timekeeper npm run bench:intents
 *   npm run bench:intents -- --agents 20,100 --intents 10 --seed 100000 --pending-queries 200
 *
 * Phases:
 *   floor     before each agents phase, at the same concurrency on the same Temporal server: the
 *             same life with a workflow that does nothing (bench/floor/workflow.ts, run by a
 *             worker inside this process): update-with-start (what create uses), then two
 *             updates (what a transition is), and a bare workflow start. The agents' figures are
 *             printed beside it as ratios, so the machine's noise can be told from our own cost.
 *   durable   the same life through the durable REST floor (bench/floor/durable.ts): an HTTP front
 *             in its own process, update-with-start or an update that commits one row to the
 *             database through one local activity. What the least design with Timekeeper's
 *             promises (HTTP, each call committed before it is answered) costs; printed as ratios too.
 *   agents    for each concurrency C in --agents: C agents at once, each running --intents
 *             intents one after another as OML's pattern does: create (requested), PATCH
 *             in-progress, PATCH done. Each call is timed (request to parsed answer), so
 *             create and transition latencies include the intent workflow's update and the
 *             stored, hash-chained row. Target: p99 <= 100 ms at 20 agents.
 *   seed      tops the database up to --seed intents stored in total. These rows are written
 *             DIRECTLY through the store (lib/store/intents.ts, IntentWriteTx: the same INSERTs,
 *             hashes and chain-guard trigger the recordTransition activity uses, in transactions
 *             of 100 intents), not through the API: seeding 100,000 intents through their
 *             workflows would take most of an hour on 2 cores, and the pending query reads only
 *             PostgreSQL. No workflow runs for them (a later PATCH would start one from the
 *             stored head). --seed-open of them stay requested; the rest are done.
 *   pending   --pending-queries GET /api/events/pending calls one after another (the recovery
 *             call an agent makes at start-up), then as many with older_than. Target: p99 <= 50 ms
 *             with 100,000 intents stored.
 */
import { readFlags } from './cli';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Client, WithStartWorkflowOperation } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { Pool } from 'pg';
import { TimekeeperApiError, TimekeeperClient } from '../sdk/client';
import { computeTransitionHash } from '../lib/hash-chain';
import { IntentStatus, headerContent, intentWorkflowId, type IntentHeader, type StoredTransition } from '../lib/domain/intents';
import { IntentStore } from '../lib/store/intents';
import { finishUpdate, floorWorkflow, openUpdate, stepUpdate } from './floor/workflow';
import { floorThreadsLikeTimekeeper } from './floor/threads';
import { startFloor as startDurableFloor, type Floor as DurableFloor } from './floor/floor';
import type { BenchTarget } from './target';
import { LIMITS } from '../lib/domain/limits';
import { keepAliveFetch } from './http';

interface Options {
  url: string;
  apiKey: string | undefined;
  databaseUrl: string;
  agents: number[];
  intents: number;
  seed: number;
  seedOpen: number;
  pendingQueries: number;
  /** The Temporal server Timekeeper uses, for the floor; undefined: no floor. */
  temporal: string | undefined;
  namespace: string;
  strict: boolean;
}

const USAGE = `usage: npm run bench:intents -- [options]
  --url URL              Timekeeper base URL (default $BENCH_URL or http://127.0.0.1:8000)
  --agents LIST          concurrent agents, comma-separated (default 20,100)
  --intents N            intents per agent, each create + in-progress + done (default 10)
  --seed N               intents stored in total before the pending phase (default 100000; 0: no seeding)
  --seed-open N          of the seeded ones, this many stay requested (default 100)
  --pending-queries N    pending calls of each kind (default 200)
  --temporal ADDRESS     the Temporal server Timekeeper uses, for the floor (default $TEMPORAL_ADDRESS or 127.0.0.1:7233)
  --namespace NAME       its namespace (default $TEMPORAL_NAMESPACE or default)
  --no-floor             skip the floor
  --strict               exit with status 1 when a target is missed
env: BENCH_URL, BENCH_API_KEY, DATABASE_URL (for seeding; the database the server uses)`;

function parseArgs(argv: string[]): Options {
  const flags = readFlags(argv, USAGE, { values: ['url', 'agents', 'intents', 'seed', 'seed-open', 'pending-queries', 'temporal', 'namespace'], switches: ['strict', 'no-floor'] });
  const strict = flags.has('strict');
  const floor = !flags.has('no-floor');
  const int = (k: string, d: number, min = 0): number => flags.int(k, min) ?? d;
  const agents = (flags.value('agents') ?? '20,100').split(',').map((x) => Number(x));
  if (agents.some((n) => !Number.isInteger(n) || n < 1)) throw new Error('--agents must be a comma-separated list of positive integers');
  return {
    url: (flags.value('url') ?? process.env.BENCH_URL ?? 'http://127.0.0.1:8000').replace(/\/+$/, ''),
    apiKey: process.env.BENCH_API_KEY || undefined,
    databaseUrl: process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/timekeeper',
    agents,
    intents: int('intents', 10, 1),
    seed: int('seed', 100_000),
    seedOpen: int('seed-open', 100),
    pendingQueries: int('pending-queries', 200, 1),
    temporal: floor ? (flags.value('temporal') ?? process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233') : undefined,
    namespace: flags.value('namespace') ?? process.env.TEMPORAL_NAMESPACE ?? 'default',
    strict,
  };
}

/** Latencies of successful calls and the failures, by kind. */
class Series {
  readonly ms: number[] = [];
  errors = 0;
  readonly kinds = new Map<string, number>();
  pct(p: number): number {
    if (this.ms.length === 0) return NaN;
    const sorted = [...this.ms].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
  }
  async time<T>(call: () => Promise<T>): Promise<T | undefined> {
    const t0 = performance.now();
    try {
      const r = await call();
      this.ms.push(performance.now() - t0);
      return r;
    } catch (err) {
      this.errors++;
      const kind = err instanceof TimekeeperApiError ? `HTTP ${err.status} ${err.errorCode}` : (err as Error).name + ': ' + (err as Error).message.slice(0, 80);
      this.kinds.set(kind, (this.kinds.get(kind) ?? 0) + 1);
      return undefined;
    }
  }
}

const f1 = (n: number) => (Number.isNaN(n) ? '-' : n.toFixed(1));
const row = (label: string, s: Series) =>
  `  ${label.padEnd(40)} n=${String(s.ms.length).padStart(6)}  p50 ${f1(s.pct(50)).padStart(7)} ms  p99 ${f1(s.pct(99)).padStart(7)} ms  max ${f1(s.pct(100)).padStart(7)} ms  errors ${s.errors}` +
  (s.kinds.size ? `  (${[...s.kinds].map(([k, n]) => `${k} x${n}`).join(', ')})` : '');

interface Target {
  what: string;
  ok: boolean;
}

async function agentsPhase(tk: TimekeeperClient, agents: number, perAgent: number, runId: string): Promise<{ create: Series; transition: Series; wallMs: number }> {
  const create = new Series();
  const transition = new Series();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: agents }, async (_, a) => {
      for (let i = 0; i < perAgent; i++) {
        const id = `BENCH-${runId}-${agents}-${a}-${i}`;
        const made = await create.time(() => tk.intents.create({ event_id: id, domain: 'bench', action: 'send-daily-summary', tags: ['bench'], data: { agent: a, n: i } }));
        if (!made) continue;
        if (!(await transition.time(() => tk.intents.transition(id, { status: 'in-progress', note: 'working' })))) continue;
        await transition.time(() => tk.intents.transition(id, { status: 'done', note: 'sent', data: { message_id: `m-${a}-${i}` } }));
      }
    }),
  );
  return { create, transition, wallMs: performance.now() - t0 };
}

/** The floor: a do-nothing workflow's start and updates, timed like the intents (see the header). */
interface Floor {
  client: Client;
  taskQueue: string;
  close(): Promise<void>;
}

async function startFloor(address: string, namespace: string, runId: string): Promise<Floor> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const connection = await NativeConnection.connect({ address });
  const taskQueue = `bench-floor-${runId}`;
  const quiet = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: console.error };
  const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('./floor/workflow'), logger: quiet });
  floorThreadsLikeTimekeeper();
  const worker = await Worker.create({ connection, namespace, taskQueue, workflowBundle: { code } });
  const running = worker.run();
  return {
    client: new Client({ connection, namespace }),
    taskQueue,
    close: async () => {
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}

async function floorPhase(f: Floor, agents: number, perAgent: number, runId: string): Promise<{ start: Series; create: Series; transition: Series }> {
  const start = new Series();
  const create = new Series();
  const transition = new Series();
  const wf = f.client.workflow;
  await Promise.all(
    Array.from({ length: agents }, async (_, a) => {
      for (let i = 0; i < perAgent; i++) {
        const id = `bench-floor/${runId}-${agents}-${a}-${i}`;
        const op = new WithStartWorkflowOperation(floorWorkflow, { workflowId: id, taskQueue: f.taskQueue, args: [{ steps: 2 }], workflowIdConflictPolicy: 'FAIL' });
        if ((await create.time(() => wf.executeUpdateWithStart(openUpdate, { startWorkflowOperation: op }))) === undefined) continue;
        const h = wf.getHandle(id);
        if ((await transition.time(() => h.executeUpdate(stepUpdate))) === undefined) continue;
        await transition.time(() => h.executeUpdate(finishUpdate));
      }
    }),
  );
  // Apart from the updates, so that these runs' workflow tasks do not load the timings above.
  await Promise.all(
    Array.from({ length: agents }, async (_, a) => {
      for (let i = 0; i < perAgent; i++) {
        await start.time(() => wf.start(floorWorkflow, { workflowId: `bench-floor/${runId}-${agents}-${a}-${i}-start`, taskQueue: f.taskQueue, args: [{ steps: 0 }] }));
      }
    }),
  );
  return { start, create, transition };
}

/** The same life through the durable REST floor: create = its init (row 0), the two transitions = rows 1 and 2. */
async function durablePhase(target: BenchTarget, agents: number, perAgent: number, runId: string): Promise<{ create: Series; transition: Series }> {
  const create = new Series();
  const transition = new Series();
  // Series.time answers undefined for a failed call; the target's calls answer nothing, so true marks success.
  const ok = (call: () => Promise<void>) => async () => (await call(), true);
  await Promise.all(
    Array.from({ length: agents }, async (_, a) => {
      for (let i = 0; i < perAgent; i++) {
        const id = `bench-durable/${runId}-${agents}-${a}-${i}`;
        if ((await create.time(ok(() => target.init(id)))) === undefined) continue;
        if ((await transition.time(ok(() => target.append(id, 1)))) === undefined) continue;
        await transition.time(() => target.append(id, 2));
      }
    }),
  );
  return { create, transition };
}

const ratio = (a: number, b: number) => (Number.isNaN(a) || Number.isNaN(b) || b === 0 ? '-' : (a / b).toFixed(2));
const ratioRow = (label: string, ours: Series, floor: Series) =>
  `  ${label.padEnd(40)} p50 ${ratio(ours.pct(50), floor.pct(50)).padStart(6)}x  p99 ${ratio(ours.pct(99), floor.pct(99)).padStart(6)}x`;

/** Writes `n` intents straight through the store (see the header: what this does and does not measure). */
async function seed(pool: Pool, n: number, open: number, runId: string): Promise<number> {
  const store = new IntentStore(pool);
  const perTx = 100;
  const batches = Math.ceil(n / perTx);
  let next = 0;
  const t0 = performance.now();
  const now = Date.now();
  const worker = async () => {
    while (next < batches) {
      const b = next++;
      await store.seed(async (tx) => {
        for (let k = b * perTx; k < Math.min(n, (b + 1) * perTx); k++) {
          const id = `SEED-${runId}-${k}`;
          const header: IntentHeader = { event_id: id, domain: `seed${k % 20}`, action: 'seeded-work', tags: ['seed'], session_id: null, dedupe_key: null, ttl_s: 86400 };
          const ts = now - (n - k) * 10; // oldest first, 10 ms apart
          const wf = { workflowId: intentWorkflowId(id), runId: 'bench-seed' };
          tx.insertIntent(header, wf.workflowId, ts);
          const first: Omit<StoredTransition, 'hash'> = {
            event_id: id,
            seq: 1,
            transition_id: randomUUID(),
            ts,
            content: { from: null, to: IntentStatus.Requested, note: null, data: { k }, actor: 'agent', intent: headerContent(header) },
            prev_hash: null,
          } as Omit<StoredTransition, 'hash'>;
          const t1 = { ...first, hash: computeTransitionHash(first) } as StoredTransition;
          tx.insertTransition(t1, wf);
          if (k >= open) {
            const done = { event_id: id, seq: 2, transition_id: randomUUID(), ts: ts + 5, content: { from: IntentStatus.Requested, to: IntentStatus.Done, note: 'done', data: {}, actor: 'agent' }, prev_hash: t1.hash } as Omit<StoredTransition, 'hash'>;
            tx.insertTransition({ ...done, hash: computeTransitionHash(done) } as StoredTransition, wf);
          }
        }
      });
      if (b % 100 === 99) process.stdout.write(`\r  seeded ${Math.min(n, (b + 1) * perTx)} / ${n}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  process.stdout.write('\n');
  return performance.now() - t0;
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const maxAgents = Math.max(...opts.agents);
  const http = keepAliveFetch(maxAgents, 60_000);
  const tk = new TimekeeperClient({ baseUrl: opts.url, apiKey: opts.apiKey, fetch: http.fetch, timeoutMs: 60_000 });
  const runId = `${Date.now().toString(36)}${process.pid}`;
  const targets: Target[] = [];
  try {
    await tk.health();
  } catch (err) {
    throw new Error(`Timekeeper is not reachable at ${opts.url}: ${(err as Error).message}`);
  }
  console.log(`bench:intents against ${opts.url}, run ${runId}`);

  const floor = opts.temporal ? await startFloor(opts.temporal, opts.namespace, runId) : undefined;
  if (floor) console.log(`floor: a do-nothing workflow on ${opts.temporal} (namespace ${opts.namespace}), task queue ${floor.taskQueue}`);
  const durableFloor: DurableFloor | undefined = opts.temporal
    ? await startDurableFloor(opts.temporal, opts.namespace, { durable: { databaseUrl: opts.databaseUrl, clients: LIMITS.dbPoolMax, sockets: maxAgents } })
    : undefined;
  const durable = durableFloor?.durableTarget;
  if (durable) console.log(`durable REST floor: HTTP front in its own process, one committed row per call in ${opts.databaseUrl.replace(/\/\/[^@]*@/, '//')}`);

  // Warm-up: workflow code cached, connections open.
  await agentsPhase(tk, 5, 2, `${runId}w`);
  if (floor) await floorPhase(floor, 5, 2, `${runId}w`);
  if (durable) await durablePhase(durable, 5, 2, `${runId}w`);

  console.log('\ncreate + transition (each agent: create, in-progress, done; one after another)');
  for (const c of opts.agents) {
    const fl = floor ? await floorPhase(floor, c, opts.intents, runId) : undefined;
    const du = durable ? await durablePhase(durable, c, opts.intents, runId) : undefined;
    const r = await agentsPhase(tk, c, opts.intents, runId);
    const rate = ((r.create.ms.length + r.transition.ms.length) / r.wallMs) * 1000;
    console.log(`${c} agents x ${opts.intents} intents, ${(r.wallMs / 1000).toFixed(1)} s, ${rate.toFixed(0)} calls/s`);
    console.log(row('create (POST /api/events)', r.create));
    console.log(row('transition (PATCH …/status)', r.transition));
    if (fl) {
      console.log(row('floor: bare workflow start', fl.start));
      console.log(row('floor: update-with-start (as create)', fl.create));
      console.log(row('floor: update (as transition)', fl.transition));
      console.log(ratioRow('create / floor update-with-start', r.create, fl.create));
      console.log(ratioRow('transition / floor update', r.transition, fl.transition));
    }
    if (du) {
      console.log(row('durable REST: create (with-start + commit)', du.create));
      console.log(row('durable REST: transition (update + commit)', du.transition));
      console.log(ratioRow('create / durable REST create', r.create, du.create));
      console.log(ratioRow('transition / durable REST transition', r.transition, du.transition));
    }
    if (c === 20) {
      targets.push({ what: `create p99 ${f1(r.create.pct(99))} ms <= 100 ms at 20 agents, no errors`, ok: r.create.pct(99) <= 100 && r.create.errors === 0 });
      targets.push({ what: `transition p99 ${f1(r.transition.pct(99))} ms <= 100 ms at 20 agents, no errors`, ok: r.transition.pct(99) <= 100 && r.transition.errors === 0 });
    }
  }

  let stored = (await tk.intents.stats()).total;
  if (opts.seed > stored) {
    const n = opts.seed - stored;
    console.log(`\nseeding ${n} intents directly through the store (${Math.min(n, opts.seedOpen)} left requested), ${stored} already stored`);
    const pool = new Pool({ connectionString: opts.databaseUrl, max: 8 });
    try {
      const ms = await seed(pool, n, Math.min(n, opts.seedOpen), runId);
      console.log(`  ${n} intents in ${(ms / 1000).toFixed(1)} s (${((n / ms) * 1000).toFixed(0)} intents/s)`);
    } finally {
      await pool.end();
    }
    stored = (await tk.intents.stats()).total;
  }
  const stats = await tk.intents.stats();
  console.log(`\npending with ${stats.total} intents stored, ${stats.pending} of them pending`);
  const pending = new Series();
  const older = new Series();
  let answered = 0;
  for (let i = 0; i < opts.pendingQueries; i++) answered = (await pending.time(() => tk.intents.pending()))?.length ?? answered;
  for (let i = 0; i < opts.pendingQueries; i++) await older.time(() => tk.intents.pending({ older_than: 60 }));
  console.log(row(`GET /api/events/pending (${answered} rows)`, pending));
  console.log(row('GET /api/events/pending?older_than=60', older));
  const p99 = Math.max(pending.pct(99), older.pct(99));
  targets.push({ what: `pending p99 ${f1(p99)} ms <= 50 ms with ${stored} intents stored (>= 100000), no errors`, ok: p99 <= 50 && stored >= 100_000 && pending.errors + older.errors === 0 });

  console.log('\ntargets');
  for (const t of targets) console.log(`  ${t.ok ? 'met   ' : 'MISSED'} ${t.what}`);
  http.close();
  await durableFloor?.close();
  await floor?.close();
  if (opts.strict && targets.some((t) => !t.ok)) process.exit(1);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
