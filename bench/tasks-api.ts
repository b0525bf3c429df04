/**
 * `npm run bench:tasks-api`: the task API at scale, on a private rig (test/support/fault-rig.ts:
 * its own Temporal dev server and embedded PostgreSQL, the API in this process, one worker
 * child process unless --no-worker).
 *
 *   npm run bench:tasks-api
 *   npm run bench:tasks-api -- --creates 500 --concurrency 20 --tasks 10000 --runs 300000 --lists 300
 *
 * Phases:
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
import { performance } from 'node:perf_hooks';
import os from 'node:os';
import { Worker, bundleWorkflowCode } from '@temporalio/worker';
import type { CallRequest } from '../sdk/client';
import { decodeKeyset } from '../lib/platform/keyset';
import { configureLogger } from '../lib/log';
import { startFaultRig } from '../test/support/fault-rig';
import { floorWorkflow } from './floor/workflow';
import { LATENCY_HEADER, Series, latencyRow, runPool, timed } from './measure';

type CreateTask = CallRequest<'createTask'>['body'];

interface Options {
  creates: number;
  concurrency: number;
  tasks: number;
  runs: number;
  lists: number;
  worker: boolean;
}

const USAGE = `usage: npm run bench:tasks-api -- [options]
  --creates N       tasks created through the API (default 1000)
  --concurrency C   callers creating at once (default 20)
  --tasks N         tasks stored in all before the list phase (default 10000)
  --runs N          execution-log rows stored before the list phase (default 300000)
  --lists N         list requests per variant (default 300)
  --no-worker       no worker process (the schedulers the creates start stay idle)`;

function parseArgs(argv: string[]): Options {
  const o: Options = { creates: 1000, concurrency: 20, tasks: 10_000, runs: 300_000, lists: 300, worker: true };
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
    const key = a.replace(/^--/, '') as keyof Options;
    const n = Number(argv[++i]);
    if (!['creates', 'concurrency', 'tasks', 'runs', 'lists'].includes(key) || !Number.isInteger(n) || n < 0) throw new Error(`bad argument ${a}\n${USAGE}`);
    (o as unknown as Record<string, number>)[key] = n;
  }
  return o;
}

const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');
const row = (label: string, s: Series, wallMs?: number) => latencyRow(label.padEnd(34), s, wallMs) + (s.kinds.size ? `  (${[...s.kinds].map(([k, n]) => `${k} x${n}`).join(', ')})` : '');

const definition = (id: string, i: number) => ({
  task_id: id,
  name: `daily digest ${i}`,
  trigger: { type: 'cron', expression: `${i % 60} ${i % 24} * * *`, timezone: 'Asia/Shanghai' },
  agent: { type: 'webhook', url: 'http://127.0.0.1:9/agent', prompt_template: 'Summarise the day for {{date}}' },
  tags: [i % 10 === 0 ? 'ops' : 'digest'],
});

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  configureLogger({ level: 'warn' });
  console.log(`bench:tasks-api ${JSON.stringify(opts)}; load average at start ${load()} (${os.cpus().length} cores)`);
  const rig = await startFaultRig({ config: { outboundAllowHosts: ['127.0.0.1'] } });
  try {
    if (opts.worker) await rig.startWorker();
    const { tk, pool: db, client } = rig;
    const run = Date.now().toString(36);

    // ---- create, and its floor --------------------------------------------------------
    await db.query('CREATE TABLE IF NOT EXISTS bench_floor_history (task_id text, version int, action text, definition jsonb, enabled boolean, recorded_at timestamptz DEFAULT clock_timestamp(), UNIQUE (task_id, version))');
    const noop = () => undefined;
    const floorQueue = `bench-floor-${run}`;
    const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('./floor/workflow'), logger: { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: console.error } });
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
