/**
 * Scheduled tasks across worker failures: a worker killed with SIGKILL mid-run loses no
 * fire time and runs none twice; after a longer outage the misfire policy decides, with no
 * burst of stale runs.
 */
import type { ChildProcess } from 'node:child_process';
import type { TimekeeperClient } from '../../sdk/client';
import { eventually, sleep, spawnWorker, startTestSystem, TestSystem, uid } from '../support';
import { fakeServer, FakeServer, protocolAnswer } from '../support/fake-services';

/** A test worker whose task requests may reach the local stand-in agent; killed after each test. */
const startWorker = (taskQueue: string) => spawnWorker(taskQueue, { env: { OUTBOUND_ALLOW: '127.0.0.1' }, onSpawn: (w) => workers.push(w) });
/** The first time on a grid of `stepMs` (aligned to the epoch, as the tasks' grids are) after `ms`. */
const nextOnGrid = (ms: number, stepMs: number) => Math.floor(ms / stepMs) * stepMs + stepMs;
const kill = (w: ChildProcess) =>
  w.exitCode !== null || w.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((r) => {
        w.once('exit', () => r());
        w.kill('SIGKILL');
      });

let sys: TestSystem;
let tk: TimekeeperClient;
let agent: FakeServer;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  sys = await startTestSystem({ worker: false, config: { outboundAllowHosts: ['127.0.0.1'] } });
  tk = sys.tk;
  // Answers after 700 ms, so a kill often lands mid-run.
  agent = await fakeServer(async (r) => {
    await sleep(700);
    return { body: protocolAnswer(JSON.parse(r.body).task_id) };
  });
});
// A worker left over from a failed test must not serve the next one's queue.
afterEach(() => Promise.all(workers.map(kill)));
afterAll(async () => {
  await Promise.all(workers.map(kill));
  await agent?.close();
  await sys?.stop();
});

const runs = async (taskId: string) => (await tk.tasks.runs(taskId, { limit: 1000 })).runs;

test('SIGKILL of the worker mid-run: every fire time is run or skipped exactly once, none lost, none stuck', async () => {
  const q = sys.config.taskQueue;
  let w = await startWorker(q);
  const id = uid('crash');
  const created = await tk.call('createTask', {
    body: {
      task_id: id,
      trigger: { type: 'cron', expression: '*/2 * * * * *' },
      agent: { type: 'webhook', url: agent.url, prompt_template: 'go' },
      timeout_s: 3,
      retry: { max_attempts: 2, backoff_seconds: [0] },
      misfire_grace_s: 60,
    },
  });
  expect(created.status).toBe(201);
  await eventually(async () => (await runs(id)).some((r) => r.status === 'running'), { timeoutMs: 10_000, stepMs: 50 });
  await kill(w);
  // Down until a fire time of the 2-second grid has passed with no worker (and the killed run's attempt is lost mid-way).
  const firstWhileDown = nextOnGrid(Date.now(), 2000);
  await eventually('a fire time to pass while no worker runs', () => Date.now() > firstWhileDown + 1000, { timeoutMs: 5_000, stepMs: 50 });
  w = await startWorker(q);
  const upAt = Date.now();
  // Firing goes on after the restart: wait for a run scheduled after it to succeed, then stop the task.
  await eventually(async () => (await runs(id)).some((r) => r.status === 'success' && Date.parse(r.scheduled_at) > upAt), 40_000);
  await tk.tasks.pause(id);
  const all = await eventually(async () => {
    const rs = await runs(id);
    return rs.every((r) => ['success', 'failed', 'skipped'].includes(r.status)) ? rs : undefined;
  }, 30_000);
  const nominal = all.map((r) => Date.parse(r.scheduled_at)).sort((a, b) => a - b);
  expect(new Set(nominal).size).toBe(nominal.length);
  for (let i = 1; i < nominal.length; i++) expect(nominal[i] - nominal[i - 1]).toBe(2000);
  expect(all.filter((r) => r.status === 'success').length).toBeGreaterThanOrEqual(2);
  // The log has one "running" row per run that started (none doubled by the crash).
  const dup = await sys.pool.query(`SELECT run_id FROM task_run_log WHERE task_id = $1 GROUP BY run_id, status, attempt HAVING count(*) > 1`, [id]);
  expect(dup.rows).toEqual([]);
  await kill(w);
}, 120_000);

test.each([
  ['run_latest', 1],
  ['skip', 0],
] as const)('after an outage longer than the grace, misfire %s runs %i of the missed fire times and skips the rest', async (policy, expectedMisfireRuns) => {
  const q = sys.config.taskQueue;
  let w = await startWorker(q);
  const id = uid(`misfire-${policy}`);
  await tk.tasks.create({
    task_id: id,
    trigger: { type: 'interval', every_s: 1, mode: 'aligned' },
    agent: { type: 'webhook', url: agent.url, prompt_template: 'go' },
    overlap: 'allow',
    max_concurrency: 10,
    misfire: policy,
    misfire_grace_s: 1,
  });
  await eventually(async () => (await runs(id)).some((r) => r.status === 'success'), 10_000);
  await kill(w);
  const downAt = Date.now();
  // Down for six fire times of the 1-second grid (well past the grace of 1 s): at least four are missed beyond it.
  const sixthWhileDown = nextOnGrid(downAt, 1000) + 5000;
  await eventually('six fire times to pass while no worker runs', () => Date.now() > sixthWhileDown + 500, { timeoutMs: 10_000, stepMs: 50 });
  w = await startWorker(q);
  const upAt = Date.now();
  await eventually(async () => (await runs(id)).some((r) => Date.parse(r.scheduled_at) > upAt + 2000), 30_000);
  await tk.tasks.pause(id);
  const rs = await runs(id);
  const missed = rs.filter((r) => r.status === 'skipped' && /^misfire /.test(r.reason ?? ''));
  expect(missed.length).toBeGreaterThanOrEqual(4);
  // Exactly the policy's number of catch-up runs, for fire times inside the outage.
  const caughtUp = rs.filter((r) => r.trigger === 'misfire' && r.status !== 'skipped');
  expect(caughtUp).toHaveLength(expectedMisfireRuns);
  for (const r of caughtUp) expect(Date.parse(r.scheduled_at)).toBeGreaterThan(Math.max(...missed.map((m) => Date.parse(m.scheduled_at))));
  // No burst of stale runs: nothing scheduled during the outage ran as if on time.
  const stale = rs.filter((r) => r.trigger === 'schedule' && r.status !== 'skipped' && Date.parse(r.scheduled_at) > downAt + 1000 && Date.parse(r.scheduled_at) < upAt - 1000);
  expect(stale).toEqual([]);
  await kill(w);
}, 120_000);
