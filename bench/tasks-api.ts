/**
 * `npm run bench:tasks-api`: the task API at scale, on a private rig (test/support/fault-rig.ts:
 * its own Temporal dev server and embedded PostgreSQL, the API in this process, one worker
 * child process unless --no-worker).
 *
 *   npm run bench:tasks-api
 *   npm run bench:tasks-api -- --creates 500 --concurrency 20 --tasks 10000 --runs 300000 --lists 300
 *   npm run bench:tasks-api -- --idle 10000 --idle-seconds 60 --creates 0 --tasks 0 --lists 0
 *
 * Phases:
 *   idle    only with --idle N (default 0: off), before everything else. At rest first with no
 *           task: once no workflow task waits on the main task queue, --idle-seconds S (default
 *           60) of nothing, over which it reads from /proc the CPU (utime + stime) of the worker
 *           child, the Temporal dev server, PostgreSQL (the postmaster, its backends and the ones
 *           it reaped) and this process (the API), as % of one core, and at the end their memory
 *           (VmRSS; PostgreSQL: PSS summed over its processes, shared buffers counted once) and
 *           the open workflows (Temporal's count of ExecutionStatus="Running"). Then N daily
 *           crons POST /v1/tasks from --concurrency callers (real schedulers), each at its own
 *           minute of the day within the 12 hours that start 12 hours from now (wrapping when N
 *           > 720), so none fires during the bench (checked: the first fire time is printed);
 *           once the N are on the shared fire schedule (plain crons start no scheduler) and no
 *           workflow task waits, the same S seconds at rest,
 *           printed beside the first, with the runs started meanwhile (0 expected). Then, with
 *           the N tasks stored, the CLI as the README runs it (`npx timekeeper`, TIMEKEEPER_URL
 *           at the rig's API), 5 times each: `--help` (the floor: process start), `tasks`,
 *           `tasks --tag ops`, `tasks --status pending`, and a walk of 3 pages by --cursor (one
 *           process per page, the walk's wall time), and the dashboard's tasks page data
 *           (api/dashboard/src/tasks.ts tasksPage: GET /v1/tasks?limit=25 beside the
 *           needs-attention runs, then what those lead it to fetch) 50 times unfiltered, with
 *           tag=ops and with status=pending: latency p50/p99 (processes: wall time).
 *   create  --creates POST /v1/tasks (daily crons, each at its own minute) from --concurrency
 *           callers: creates/s and latency p50/p99. Beside it the floor at the same concurrency:
 *           one INSERT of the same history row into a scratch table plus one bare workflow start
 *           (bench/floor/workflow.ts, steps 0) — what any create that stores first and then starts
 *           a workflow costs on this machine at this moment.
 *   seed    tops the store up to --tasks tasks and --runs execution-log rows, written DIRECTLY in
 *           SQL (as the intent bench seeds): history rows of daily crons (a fifth of them changed
 *           once, one in seven paused, one in ten tagged `ops`) and runs (a running and a success
 *           row each) spread over the first thousand tasks. No workflows run for them: the list
 *           reads only PostgreSQL.
 *   list    --lists GET /v1/tasks?limit=50 one after another in each order (newest, the default,
 *           and id), walking the pages by next_cursor
 *           (wrapping at the end), then as many with each filter (status=success, tag=ops,
 *           enabled=false): latency p50/p99. The floor: the same page's SELECT
 *           (what lib/store/tasks/index.ts listTasks sends), timed from this process on its own
 *           connection: PostgreSQL's own cost of the answer.
 * Prints the load average at start and end. Targets (issue 15): >= 100 creates/s, list p99
 * <= 100 ms at 10,000 tasks.
 */
import { execFile } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Worker, bundleWorkflowCode } from '@temporalio/worker';
import type { CallRequest } from '../sdk/client';
import { decodeKeyset } from '../lib/platform/keyset';
import { configureLogger } from '../lib/log';
import { cronFireTimes } from '../lib/domain/tasks/schedule';
import { startFaultRig, type FaultRig } from '../test/support/fault-rig';
import { floorWorkflow } from './floor/workflow';
import { floorThreadsLikeTimekeeper } from './floor/threads';
import { LATENCY_HEADER, Series, f1, latencyRow, runPool, sleep, timed } from './measure';
import { rigProcessReaders } from './procs';

type CreateTask = CallRequest<'createTask'>['body'];

interface Options {
  creates: number;
  concurrency: number;
  tasks: number;
  runs: number;
  lists: number;
  idle: number;
  idleSeconds: number;
  worker: boolean;
  /** --idle: rename each idle task once after the creates (their schedulers start, register version 2 and end). */
  rename: boolean;
}

const USAGE = `usage: npm run bench:tasks-api -- [options]
  --creates N       tasks created through the API (default 1000)
  --concurrency C   callers creating at once (default 20)
  --tasks N         tasks stored in all before the list phase (default 10000)
  --runs N          execution-log rows stored before the list phase (default 300000)
  --lists N         list requests per variant (default 300)
  --idle N          first: N daily crons created through the API, the rig at rest with 0 and N
                    tasks, then the CLI and the dashboard's tasks page with N stored (default 0: off)
  --idle-seconds S  the window at rest (default 60)
  --rename          --idle: then rename each task once (PATCH), as a change starts its scheduler,
                    and measure at rest after that
  --no-worker       no worker process (nothing fires; plain crons need none to be created)`;

function parseArgs(argv: string[]): Options {
  const o: Options = { creates: 1000, concurrency: 20, tasks: 10_000, runs: 300_000, lists: 300, idle: 0, idleSeconds: 60, worker: true, rename: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') {
      console.log(USAGE);
      process.exit(0);
    }
    if (a === '--no-worker') {
      o.worker = false;
      continue;
    }
    if (a === '--rename') {
      o.rename = true;
      continue;
    }
    const key = a.replace(/^--/, '').replace(/-(\w)/g, (_, c: string) => c.toUpperCase()) as keyof Options;
    const n = Number(argv[++i]);
    if (!['creates', 'concurrency', 'tasks', 'runs', 'lists', 'idle', 'idleSeconds'].includes(key) || !Number.isInteger(n) || n < 0) throw new Error(`bad argument ${a}\n${USAGE}`);
    (o as unknown as Record<string, number>)[key] = n;
  }
  return o;
}

const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');
const row = (label: string, s: Series, wallMs?: number) => latencyRow(label.padEnd(34), s, wallMs) + (s.kinds.size ? `  (${[...s.kinds].map(([k, n]) => `${k} x${n}`).join(', ')})` : '');

const ZONE = 'Asia/Shanghai';
const definition = (id: string, i: number, expression = `${i % 60} ${i % 24} * * *`) => ({
  task_id: id,
  name: `daily digest ${i}`,
  trigger: { type: 'cron', expression, timezone: ZONE },
  agent: { type: 'webhook', url: 'http://127.0.0.1:9/agent', prompt_template: 'Summarise the day for {{date}}' },
  tags: [i % 10 === 0 ? 'ops' : 'digest'],
});

// ---- idle (--idle) -------------------------------------------------------------------

const ROOT = path.resolve(__dirname, '..');
const execFileP = promisify(execFile);
/** Hours from now before the first idle task fires, and the span of minutes of the day they take after that. */
const QUIET_HOURS = 12;
const CLI_RUNS = 5;
const DASHBOARD_CALLS = 50;
/** The dashboard's tasks page size (api/dashboard/src/tasks.ts PAGE). */
const DASHBOARD_PAGE = 25;

/** Task i's cron: minute (start + i) of the day in ZONE, within the QUIET_HOURS after the first QUIET_HOURS from now. */
function idleCron(i: number, nowMs: number): string {
  const [h, m] = new Intl.DateTimeFormat('en-GB', { timeZone: ZONE, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(nowMs).split(':').map(Number);
  const minute = (h * 60 + m + QUIET_HOURS * 60 + 1 + (i % (QUIET_HOURS * 60))) % 1440;
  return `${minute % 60} ${Math.floor(minute / 60)} * * *`;
}

const openWorkflows = async (rig: FaultRig, type?: string) => (await rig.client.workflow.count(`ExecutionStatus="Running"${type ? ` AND WorkflowType="${type}"` : ''}`)).count;

const fireRows = async (rig: FaultRig) => Number((await rig.pool.query('SELECT count(*) FROM task_fire_schedule')).rows[0].count);

/**
 * Waits until `schedulers` schedulers are open, `rows` tasks are on the shared fire schedule (a
 * plain daily cron is a row there and starts no scheduler) and (with a worker) no workflow task
 * waits, twice in a row; resolves with the seconds it took.
 */
async function settle(rig: FaultRig, schedulers: number, rows: number, worker: boolean): Promise<number> {
  const t0 = performance.now();
  const deadline = Date.now() + 300_000 + (schedulers + rows) * 100;
  let calm = 0;
  for (;;) {
    const [open, on, waiting] = await Promise.all([openWorkflows(rig, 'taskSchedulerWorkflow'), fireRows(rig), worker ? rig.workflowBacklog() : 0]);
    calm = open >= schedulers && on >= rows && waiting === 0 ? calm + 1 : 0;
    if (calm >= 2) return (performance.now() - t0) / 1000;
    if (Date.now() > deadline) throw new Error(`not at rest: ${open} of ${schedulers} schedulers open, ${on} of ${rows} tasks on the fire schedule, ${waiting} workflow tasks waiting`);
    await sleep(500);
  }
}

interface Rest {
  open: number;
  runs: number;
  /** CPU % of one core and memory MiB per process. */
  procs: Map<string, { cpu: number; mib: number }>;
}

/** `seconds` of nothing, and what each process used meanwhile. */
async function atRest(rig: FaultRig, seconds: number): Promise<Rest> {
  const readers = rigProcessReaders(rig.pids(), 'API (this process)');
  const runsLogged = async () => Number((await rig.pool.query('SELECT count(*) FROM task_run_log')).rows[0].count);
  const runs0 = await runsLogged();
  const t0 = performance.now();
  const cpu0 = readers.map((p) => p.cpuMs());
  await sleep(seconds * 1000);
  const cpu1 = readers.map((p) => p.cpuMs());
  const wall = performance.now() - t0;
  const procs = new Map(readers.map((p, k) => [p.label, { cpu: ((cpu1[k] - cpu0[k]) / wall) * 100, mib: p.mib() }]));
  return { open: await openWorkflows(rig), runs: (await runsLogged()) - runs0, procs };
}

function printRest(n: number, seconds: number, before: Rest, after: Rest): void {
  const cells = (...v: (string | number)[]) => v.map((x) => String(x).padStart(11)).join('');
  console.log(`  ${''.padEnd(32)}${'CPU % of a core'.padStart(22)}${'MiB'.padStart(22)}`);
  console.log(`  ${'process'.padEnd(32)}${cells('0 tasks', `${n} tasks`, '0 tasks', `${n} tasks`)}`);
  for (const [label, b] of before.procs) {
    const a = after.procs.get(label);
    console.log(`  ${label.padEnd(32)}${cells(b.cpu.toFixed(2), a ? a.cpu.toFixed(2) : '-', f1(b.mib), a ? f1(a.mib) : '-')}`);
  }
  console.log(`  ${'open workflows'.padEnd(32)}${cells(before.open, after.open)}`);
  console.log(`  ${`runs started in the ${seconds} s`.padEnd(32)}${cells(before.runs, after.runs)}`);
}

/** The `timekeeper` CLI as the README runs it in a checkout, against the rig's API; resolves with its stdout. */
async function cli(rig: FaultRig, args: string[]): Promise<string> {
  const r = await execFileP('npx', ['timekeeper', ...args], { cwd: ROOT, env: { ...process.env, TIMEKEEPER_URL: rig.baseUrl, TIMEKEEPER_API_KEY: '' }, maxBuffer: 64 * 2 ** 20 });
  return r.stdout;
}

/** The next page's cursor a `timekeeper tasks` page prints under itself. */
const cursorOf = (out: string) => /\(more: --cursor (\S+), or --all\)/.exec(out)?.[1];

/** The requests api/dashboard/src/tasks.ts tasksPage makes for one page of the list. */
async function dashboardTasksPage(rig: FaultRig, filter: Record<string, string>, list: Series): Promise<void> {
  const { tk } = rig;
  const [res, attention] = await Promise.all([
    timed(list, 'listTasks', () => tk.call('listTasks', { query: { ...filter, limit: DASHBOARD_PAGE } as never })),
    tk.call('listRuns', { query: { status: 'needs_attention', limit: 50 } }),
  ]);
  await Promise.all([
    ...(res?.body.tasks ?? []).filter((t) => t.last_run).map((t) => tk.call('listTaskRuns', { params: { id: t.task_id }, query: { limit: 1 } })),
    ...attention.body.runs.map((r) => tk.call('getRun', { params: { id: r.run_id } })),
  ]);
}

async function idlePhase(rig: FaultRig, opts: Options, run: string): Promise<void> {
  const n = opts.idle;
  const base = await openWorkflows(rig, 'taskSchedulerWorkflow');
  const baseRows = await fireRows(rig);
  await settle(rig, base, baseRows, opts.worker);
  const before = await atRest(rig, opts.idleSeconds);

  const now = Date.now();
  const expressions = Array.from({ length: n }, (_, i) => idleCron(i, now));
  const firstFire = Math.min(...[...new Set(expressions)].map((expression) => cronFireTimes({ expression, dom_dow: 'or', timezone: ZONE }, now, 1)[0]));
  if (firstFire < now + (QUIET_HOURS - 1) * 3_600_000) throw new Error(`an idle task would fire at ${new Date(firstFire).toISOString()}, within the bench`);
  const idleId = (i: number) => `idle-${run}-${String(i).padStart(6, '0')}`;
  const creates = new Series();
  const wall = await runPool(n, opts.concurrency, async (i) => {
    await timed(creates, 'create', () => rig.tk.tasks.create(definition(idleId(i), i, expressions[i]) as CreateTask));
  });
  let settled = await settle(rig, base, baseRows + n, opts.worker);
  const renames = new Series();
  let renameWall: number | undefined;
  if (opts.rename) {
    renameWall = await runPool(n, opts.concurrency, async (i) => {
      await timed(renames, 'rename', () => rig.tk.tasks.update(idleId(i), { name: `idle ${i}, renamed` }));
    });
    settled = await settle(rig, base, baseRows + n, opts.worker);
    // Every change registered: all n rows at version 2.
    for (;;) {
      const v2 = Number((await rig.pool.query(`SELECT count(*) FROM task_fire_schedule WHERE task_id LIKE $1 AND version = 2`, [`idle-${run}-%`])).rows[0].count);
      if (v2 === n) break;
      await sleep(500);
    }
  }
  const after = await atRest(rig, opts.idleSeconds);
  console.log(`\nidle (${n} daily crons created through the API${opts.rename ? ', then each renamed once' : ''}, none firing before ${new Date(firstFire).toISOString()}; at rest ${settled.toFixed(1)} s after the last ${opts.rename ? 'rename' : 'create'}; load ${load()})`);
  console.log(LATENCY_HEADER);
  console.log(row('POST /v1/tasks', creates, wall));
  if (opts.rename) console.log(row('PATCH /v1/tasks/{id} (rename)', renames, renameWall));
  console.log(`\nat rest over ${opts.idleSeconds} s, before the creates and with the ${n} tasks (load ${load()})`);
  printRest(n, opts.idleSeconds, before, after);

  // ---- the CLI and the dashboard's tasks page with N tasks stored ----------------------
  const commands: [string, string[]][] = [
    ['timekeeper --help', ['--help']],
    ['timekeeper tasks', ['tasks']],
    ['timekeeper tasks --tag ops', ['tasks', '--tag', 'ops']],
    ['timekeeper tasks --status pending', ['tasks', '--status', 'pending']],
  ];
  const series = commands.map(() => new Series());
  const walk = new Series();
  const pages = Math.min(3, Math.ceil(n / 50)); // the CLI's default page: 50
  for (let r = 0; r < CLI_RUNS; r++) {
    for (const [k, [label, args]] of commands.entries()) await timed(series[k], label, () => cli(rig, args));
    await timed(walk, 'walk', async () => {
      let cursor: string | undefined;
      for (let page = 1; page <= pages; page++) {
        const out = await cli(rig, ['tasks', ...(cursor ? ['--cursor', cursor] : [])]);
        cursor = cursorOf(out);
        if (!cursor && page < pages) throw new Error(`page ${page} printed no cursor`);
      }
    });
  }
  console.log(`\ncli (npx timekeeper, ${n} tasks stored, ${CLI_RUNS} runs each, wall time of the process; load ${load()})`);
  console.log(LATENCY_HEADER);
  for (const [k, [label]] of commands.entries()) console.log(row(label, series[k]));
  console.log(row(`tasks, ${pages} pages by --cursor (walk)`, walk));

  console.log(`\ndashboard tasks page data (limit ${DASHBOARD_PAGE} + needs-attention runs, ${DASHBOARD_CALLS} calls each; load ${load()})`);
  console.log(LATENCY_HEADER);
  for (const [label, filter] of [['first page', {}], ['tag=ops', { tag: 'ops' }], ['status=pending', { status: 'pending' }]] as [string, Record<string, string>][]) {
    const page = new Series();
    const list = new Series();
    for (let i = 0; i < DASHBOARD_CALLS; i++) await timed(page, 'page', () => dashboardTasksPage(rig, filter, list));
    console.log(row(`page data ${label}`, page));
    console.log(row(`  of it GET /v1/tasks`, list));
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  configureLogger({ level: 'warn' });
  console.log(`bench:tasks-api ${JSON.stringify(opts)}; load average at start ${load()} (${os.cpus().length} cores)`);
  const rig = await startFaultRig({ config: { outboundAllowHosts: ['127.0.0.1'] } });
  try {
    if (opts.worker) await rig.startWorker();
    const { tk, pool: db, client } = rig;
    const run = Date.now().toString(36);
    if (opts.idle > 0) await idlePhase(rig, opts, run);

    // ---- create, and its floor --------------------------------------------------------
    await db.query('CREATE TABLE IF NOT EXISTS bench_floor_history (task_id text, version int, action text, definition jsonb, enabled boolean, recorded_at timestamptz DEFAULT clock_timestamp(), UNIQUE (task_id, version))');
    const noop = () => undefined;
    const floorQueue = `bench-floor-${run}`;
    const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('./floor/workflow'), logger: { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: console.error } });
    floorThreadsLikeTimekeeper();
    const floorWorker = await Worker.create({ connection: client.connection as never, namespace: rig.config.temporalNamespace, taskQueue: floorQueue, workflowBundle: { code }, activities: { echo: async (x: number) => x } });
    const floorRunning = floorWorker.run();
    for (let w = 0; w < 10; w++) await tk.tasks.create(definition(`warm-${run}-${w}`, w) as CreateTask); // first-request costs (bundles, pools) out of the figures

    const floor = new Series();
    const floorWall = await runPool(opts.creates, opts.concurrency, async (i) => {
      await timed(floor, 'floor', async () => {
        const id = `floor-${run}-${i}`;
        await db.query('INSERT INTO bench_floor_history (task_id, version, action, definition, enabled) VALUES ($1, 1, $2, $3, true)', [id, 'create', JSON.stringify(definition(id, i))]);
        await client.workflow.start(floorWorkflow, { workflowId: `bench-floor/${id}`, taskQueue: floorQueue, args: [{ steps: 0 }] });
      });
    });
    const creates = new Series();
    const createWall = await runPool(opts.creates, opts.concurrency, async (i) => {
      await timed(creates, 'create', () => tk.tasks.create(definition(`bench-${run}-${String(i).padStart(6, '0')}`, i) as CreateTask));
    });
    console.log(`\ncreate (${opts.creates} at concurrency ${opts.concurrency}; load ${load()})`);
    console.log(LATENCY_HEADER);
    console.log(row('POST /v1/tasks', creates, createWall));
    console.log(row('floor: INSERT + workflow start', floor, floorWall));
    floorWorker.shutdown();
    await floorRunning;

    // ---- seed ------------------------------------------------------------------------
    const have = Number((await db.query('SELECT count(*) FROM task_history WHERE version = 1')).rows[0].count);
    const add = Math.max(0, opts.tasks - have);
    const t0 = performance.now();
    await db.query(
      `INSERT INTO task_history (task_id, version, action, definition, enabled)
       SELECT 'seed-' || lpad(i::text, 6, '0'), 1, 'create',
              jsonb_build_object('task_id', 'seed-' || lpad(i::text, 6, '0'), 'name', 'daily digest ' || i,
                'trigger', jsonb_build_object('type', 'cron', 'expression', (i % 60) || ' ' || (i % 24) || ' * * *', 'timezone', 'Asia/Shanghai', 'dom_dow', 'or', 'tolerant', true),
                'agent', jsonb_build_object('type', 'webhook', 'url', 'http://127.0.0.1:9/agent', 'prompt_template', 'Summarise the day for {{date}}'),
                'delivery', '[]'::jsonb, 'retry', jsonb_build_object('max_attempts', 1, 'backoff_seconds', '[]'::jsonb), 'timeout_s', 900, 'overlap', 'skip',
                'max_concurrency', 1, 'priority', 'default', 'misfire', 'run_latest', 'misfire_grace_s', 60, 'memory_runs', 3, 'auto_disable_after', 10,
                'tags', CASE WHEN i % 10 = 0 THEN '["ops"]'::jsonb ELSE '["digest"]'::jsonb END, 'lang', 'en'),
              i % 7 <> 0
         FROM generate_series(1, $1::int) i`,
      [add],
    );
    await db.query(`INSERT INTO task_history (task_id, version, action, definition, enabled) SELECT task_id, 2, 'update', definition, enabled FROM task_history WHERE version = 1 AND task_id LIKE 'seed-%' AND right(task_id, 1) IN ('0', '5')`);
    const logged = Number((await db.query('SELECT count(*) FROM task_run_log')).rows[0].count);
    const runs = Math.max(0, Math.floor((opts.runs - logged) / 2));
    await db.query(
      `INSERT INTO task_run_log (run_id, task_id, status, trigger, nominal_at, started_at, finished_at, attempt)
       SELECT 'run/seed-' || lpad((r % 1000 + 1)::text, 6, '0') || '/' || r, 'seed-' || lpad((r % 1000 + 1)::text, 6, '0'), s.status, 'schedule',
              timestamptz '2026-01-01' + make_interval(mins => r), timestamptz '2026-01-01' + make_interval(mins => r, secs => 1),
              CASE WHEN s.status = 'success' THEN timestamptz '2026-01-01' + make_interval(mins => r, secs => 2) END, 1
         FROM generate_series(1, $1::int) r CROSS JOIN (VALUES (1, 'running'), (2, 'success')) s(k, status) ORDER BY r, s.k`,
      [runs],
    );
    await db.query('ANALYZE task_history; ANALYZE task_run_log');
    const counts = (await db.query('SELECT (SELECT count(*) FROM task_history WHERE version = 1) AS tasks, (SELECT count(*) FROM task_run_log) AS log')).rows[0];
    console.log(`\nseed: ${counts.tasks} tasks, ${counts.log} execution-log rows (${((performance.now() - t0) / 1000).toFixed(1)} s)`);

    // ---- list, and its floor ---------------------------------------------------------
    const variants: [string, Record<string, string>][] = [
      ['all', {}],
      ['status=success', { status: 'success' }],
      ['tag=ops', { tag: 'ops' }],
      ['enabled=false', { enabled: 'false' }],
    ];
    for (const order of ['newest', 'id'] as const) {
      console.log(`\nlist order=${order} (limit 50, pages walked by next_cursor; load ${load()})`);
      console.log(LATENCY_HEADER);
      for (const [label, filter] of variants) {
        const api = new Series();
        const sql = new Series();
        let cursor: string | undefined;
        for (let i = 0; i < opts.lists; i++) {
          const page = await timed(api, 'list', () => tk.call('listTasks', { query: { ...filter, order, limit: 50, cursor } as never }));
          // The floor: the same page as the store asks for it (lib/store/tasks/index.ts listTasks), on the bench's own connection.
          const where = `NOT deleted${filter.status ? ` AND last_run_status = '${filter.status}'` : ''}${filter.tag ? ` AND jsonb_exists(definition->'tags', '${filter.tag}')` : ''}${filter.enabled ? ` AND enabled = ${filter.enabled}` : ''}`;
          const key = cursor && order === 'newest' ? decodeKeyset(cursor, ['newest'], () => true) : undefined;
          await timed(sql, 'select', () =>
            order === 'id'
              ? db.query(`SELECT * FROM tasks WHERE ${where}${cursor ? ' AND task_id > $1' : ''} ORDER BY task_id LIMIT 51`, cursor ? [cursor] : [])
              : db.query(
                  `SELECT *, (extract(epoch FROM created_at) * 1000000)::bigint AS created_us FROM tasks WHERE ${where}${key ? " AND (created_at, task_id) < (timestamptz 'epoch' + $1::bigint * interval '1 microsecond', $2)" : ''} ORDER BY created_at DESC, task_id DESC LIMIT 51`,
                  key ? [key.time, key.id] : [],
                ),
          );
          cursor = page?.body.next_cursor ?? undefined;
        }
        console.log(row(`GET /v1/tasks ${label}`, api));
        console.log(row(`  floor: its SELECT`, sql));
      }
    }
    console.log(`\nload average at end ${load()}`);
  } finally {
    await rig.stop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
