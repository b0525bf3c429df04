/**
 * Overlap policies firing for real (skip is in task-firing.test.ts): buffer_one, allow with
 * max_concurrency, cancel_previous. A slow stand-in agent (a local webhook that answers
 * after a delay) and a 1-2 s aligned interval make fire times land while a run is running.
 * Real Temporal and PostgreSQL.
 */
import type { CallRequest, ResponseBody } from '../../sdk/client';
import { schedulerWorkflowId } from '../../lib/domain/tasks';
import { TaskStore } from '../../lib/store/tasks';
import { protocolAnswer } from '../support/fake-services';
import { eventually } from '../support';
import { useTaskTestSystem } from '../support/task-system';

type RunView = ResponseBody<'listTaskRuns'>['runs'][number];

const t = useTaskTestSystem();

/** A webhook agent that takes `delayMs` to answer, counting how many calls it has at once. */
async function slowAgent(delayMs: number) {
  const seen = { inFlight: 0, maxInFlight: 0 };
  const s = await t.server(async (r) => {
    seen.inFlight++;
    seen.maxInFlight = Math.max(seen.maxInFlight, seen.inFlight);
    await new Promise((ok) => setTimeout(ok, delayMs));
    seen.inFlight--;
    return { body: protocolAnswer(JSON.parse(r.body).task_id) };
  });
  return { url: s.url, seen };
}

type Body = CallRequest<'createTask'>['body'];
/** A task on an aligned `everyS` grid that calls the stand-in agent, with its overlap settings. */
const createTask = (id: string, agentUrl: string, everyS: number, overlap: Pick<Body, 'overlap' | 'max_concurrency' | 'auto_disable_after'>) =>
  t.tk.tasks.create({ task_id: id, trigger: { type: 'interval', every_s: everyS, mode: 'aligned' }, agent: { type: 'webhook', url: agentUrl, prompt_template: 'go' }, ...overlap });
const runs = (taskId: string) => t.runsOldestFirst(taskId);
const ms = (iso: string | null) => Date.parse(iso!);

/**
 * Deletes the task and waits until its scheduler has ended (it logs a fire time still
 * buffered as skipped on its way out) and every run it started has finished; returns them all.
 */
async function stopAndSettle(taskId: string): Promise<RunView[]> {
  await t.tk.tasks.delete(taskId);
  await t.sys.client.workflow.getHandle(schedulerWorkflowId(taskId)).result();
  return eventually(async () => {
    const rs = await runs(taskId);
    return rs.every((r) => r.status !== 'running' && r.status !== 'retry') ? rs : undefined;
  }, 20_000);
}

/** Waits until the task has at least two successful runs and one skipped fire time. */
const untilTwoRanAndOneSkipped = (taskId: string) =>
  eventually(async () => {
    const rs = await runs(taskId);
    return rs.filter((r) => r.status === 'success').length >= 2 && rs.some((r) => r.status === 'skipped') ? rs : undefined;
  }, 20_000);

/** Every fire time of the aligned grid between the first and the last is in the log exactly once. */
function expectEveryFireTimeOnce(all: RunView[], everyMs: number) {
  const nominal = all.map((r) => ms(r.scheduled_at));
  expect(new Set(nominal).size).toBe(nominal.length);
  for (const [i, t] of nominal.entries()) {
    expect(t % everyMs).toBe(0);
    if (i > 0) expect(t - nominal[i - 1]).toBe(everyMs);
  }
}

test('buffer_one: a fire time during a run waits and starts right after it; a third is skipped with the reason recorded', async () => {
  const agent = await slowAgent(2500);
  const id = t.uid('buffer');
  await createTask(id, agent.url, 1, { overlap: 'buffer_one' });
  await untilTwoRanAndOneSkipped(id);
  const all = await stopAndSettle(id);

  expect(agent.seen.maxInFlight).toBe(1);
  const [a, b, c] = all;
  expect(a.status).toBe('success');
  // B fired one second after A, while A ran: it waited (not skipped) and started once A had finished.
  expect(b).toMatchObject({ status: 'success', trigger: 'schedule', run_id: `run/${id}/${b.scheduled_at}` });
  expect(ms(b.scheduled_at) - ms(a.scheduled_at)).toBe(1000);
  expect(ms(b.started_at)).toBeGreaterThanOrEqual(ms(a.finished_at));
  expect(b.lateness_ms).toBeGreaterThan(1000);
  // "Right after": on A's end, not on a later fire time of the 1 s grid.
  expect(ms(b.started_at) - ms(a.finished_at)).toBeLessThan(1000);
  // C fired while A ran and B already waited.
  expect(c.status).toBe('skipped');
  expect(c.reason).toBe('overlap buffer_one: a run is running and another is already waiting');
  // Runs never overlap: each starts after the previous started one finished.
  const started = all.filter((r) => r.started_at);
  for (let i = 1; i < started.length; i++) expect(ms(started[i].started_at)).toBeGreaterThanOrEqual(ms(started[i - 1].finished_at));
  expectEveryFireTimeOnce(all, 1000);
});

test('allow with max_concurrency 2: two runs at once, a third fire time is skipped', async () => {
  const agent = await slowAgent(2500);
  const id = t.uid('allow');
  await createTask(id, agent.url, 1, { overlap: 'allow', max_concurrency: 2 });
  await untilTwoRanAndOneSkipped(id);
  const all = await stopAndSettle(id);

  expect(agent.seen.maxInFlight).toBe(2);
  const [a, b, c] = all;
  expect([a.status, b.status]).toEqual(['success', 'success']);
  // A and B ran at the same time.
  expect(ms(b.started_at)).toBeLessThan(ms(a.finished_at));
  expect(c.status).toBe('skipped');
  expect(c.reason).toBe('overlap allow: 2 runs already running (max_concurrency 2)');
  // Never more than two at once, by the run log: at each start, at most one other run is open.
  const started = all.filter((r) => r.started_at);
  for (const r of started) {
    const open = started.filter((o) => o !== r && ms(o.started_at) <= ms(r.started_at) && ms(o.finished_at) > ms(r.started_at));
    expect(open.length).toBeLessThanOrEqual(1);
  }
  expectEveryFireTimeOnce(all, 1000);
});

test('cancel_previous: the running run is cancelled and recorded as cancelled; the new one runs', async () => {
  const agent = await slowAgent(3000);
  const id = t.uid('cancel');
  await createTask(id, agent.url, 2, { overlap: 'cancel_previous', auto_disable_after: 1 });
  await eventually(async () => ((await runs(id)).filter((r) => r.reason?.startsWith('cancelled:')).length >= 2 ? true : undefined), 20_000);
  // Deleting stops the fire times; the newest run is left alone and finishes.
  const all = await stopAndSettle(id);

  const cancelled = all.filter((r) => r.reason?.startsWith('cancelled:'));
  for (const r of cancelled) {
    expect(r).toMatchObject({ status: 'failed', reason: 'cancelled: a newer run replaced it (overlap cancel_previous)', needs_attention: false });
    // The run that replaced it is the next fire time, and it was started (not skipped).
    const next = all.find((o) => ms(o.scheduled_at) === ms(r.scheduled_at) + 2000)!;
    expect(next.started_at).not.toBeNull();
    expect(ms(r.finished_at)).toBeLessThan(ms(r.started_at) + 3000);
  }
  // Only the last fire time ran to its end; nothing was skipped.
  const last = all[all.length - 1];
  expect(last.status).toBe('success');
  expect(all.filter((r) => r.status === 'success')).toEqual([last]);
  expect(all.some((r) => r.status === 'skipped')).toBe(false);
  // Cancelled runs are not failures of the task: no needs-attention entry, no auto-disable (auto_disable_after 1).
  expect((await t.tk.runs.list({ status: 'needs_attention', task_id: id })).runs).toEqual([]);
  const task = await t.tk.tasks.get(id);
  expect(task.history.map((h) => h.action)).toEqual(['create', 'delete']);
  expectEveryFireTimeOnce(all, 2000);
});

test('a cancelled run neither counts towards auto-disable nor breaks a row of real failures', async () => {
  const store = new TaskStore(t.sys.pool);
  const taskId = t.uid('count');
  const log = (n: number, status: 'failed' | 'success', reason?: string) =>
    store.recordRun({ runId: `run/${taskId}/${n}`, taskId, status, reason, trigger: 'schedule', nominalMs: n * 1000, startedMs: n * 1000, finishedMs: n * 1000 + 1, attempt: 1 });
  await log(1, 'failed', 'failed after 1 attempt: boom');
  await log(2, 'failed', 'cancelled: a newer run replaced it (overlap cancel_previous)');
  await log(3, 'failed', 'failed after 1 attempt: boom');
  await log(4, 'failed', 'cancelled: a newer run replaced it (overlap cancel_previous)');
  expect(await store.consecutiveFailures(taskId)).toBe(2);
});
