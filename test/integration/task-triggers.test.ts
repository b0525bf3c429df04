/**
 * Delay and condition triggers firing for real (scaled-down seconds): signals sent through
 * POST /v1/signals reach the task schedulers, a deduplicated delay starts one run for a
 * burst of events and a new one after it ran, a condition fires when sustained, not inside
 * its cooldown and not outside its window, and a condition reads another task's run
 * outcomes. Real Temporal and PostgreSQL; a local HTTP server is the webhook agent.
 */
import type { CallRequest, TimekeeperClient } from '../../sdk/client';
import { startTestSystem, TestSystem, eventually, uid, sleep } from '../support';
import { fakeServer, FakeServer, protocolAnswer, Received } from '../support/fake-services';
import { schedulerAtRest } from '../support/task-system';

let sys: TestSystem;
let tk: TimekeeperClient;
let agent: FakeServer;

beforeAll(async () => {
  sys = await startTestSystem({ config: { outboundAllowHosts: ['127.0.0.1'] } });
  tk = sys.tk;
  // Answers for any task; tasks whose id starts with "flaky" fail (HTTP 500).
  agent = await fakeServer((r: Received) => {
    const body = JSON.parse(r.body);
    return body.task_id.startsWith('flaky') ? { status: 500, body: { error: 'down' } } : { body: protocolAnswer(body.task_id) };
  });
});
afterAll(async () => {
  await agent?.close();
  await sys?.stop();
});

type Trigger = CallRequest<'createTask'>['body']['trigger'];
const createTask = (task_id: string, trigger: Trigger) => tk.tasks.create({ task_id, trigger, agent: { type: 'webhook', url: agent.url, prompt_template: 'go' }, overlap: 'allow', max_concurrency: 10 });
const runs = async (taskId: string) => (await tk.tasks.runs(taskId, { limit: 1000 })).runs;
const promptsOf = (taskId: string) => agent.received.map((r) => JSON.parse(r.body)).filter((b) => b.task_id === taskId);

test('delay with deduplicate: three events inside the delay start exactly one run; an event after it ran starts a new one', async () => {
  const id = uid('followup');
  const event = uid('deploy');
  await createTask(id, { type: 'delay', event, seconds: 2, deduplicate: true, dedupe_key: '{{values.host}}' });
  const sent = [];
  for (let i = 0; i < 3; i++) {
    sent.push(await tk.signals.send({ name: event, values: { host: 'web-1', n: i }, signal_id: `${event}-${i}` }));
    await sleep(200);
  }
  expect(sent.map((s) => s.delivered_to)).toEqual([[id], [id], [id]]);
  // A retried send of the first one is stored once and dropped by the scheduler.
  const retry = await tk.signals.send({ name: event, values: { host: 'web-1', n: 0 }, signal_id: `${event}-0` });
  expect(retry).toMatchObject({ deduplicated: true, seq: sent[0].seq });

  const first = await eventually(async () => (await runs(id)).find((r) => r.status === 'success'), 15_000);
  expect(first.run_id).toBe(`run/${id}/delay/key:web-1/${sent[0].at}`);
  expect(first.trigger).toBe('delay');
  expect(Date.parse(first.scheduled_at) - Date.parse(sent[0].at)).toBe(2000);
  expect(Date.parse(first.started_at!)).toBeGreaterThanOrEqual(Date.parse(first.scheduled_at));
  // The time context says which event woke it.
  const prompt = promptsOf(id)[0];
  expect(prompt.time_context).toContain(`signal "${event}" (${event}-0)`);
  expect(prompt.time_context).toContain('2 more events with its dedupe key joined this run');
  // Every event is taken in and nothing waits any more: the events deduplicated into this run start none of their own.
  await schedulerAtRest(sys, id, { signals: 3 });
  expect(await runs(id)).toHaveLength(1);

  // After the run: a new event opens a new wait.
  const later = await tk.signals.send({ name: event, values: { host: 'web-1' } });
  const all = await eventually(async () => {
    const rs = await runs(id);
    return rs.filter((r) => r.status === 'success').length === 2 ? rs : undefined;
  });
  expect(all.map((r) => r.run_id).sort()).toEqual([first.run_id, `run/${id}/delay/key:web-1/${later.at}`].sort());
  expect(promptsOf(id)).toHaveLength(2);
});

test('condition with window and cooldown: fires when sustained, not inside the cooldown, not outside its window', async () => {
  const name = uid('error_rate');
  const today = new Date().getUTCDay();
  const when = (days: number[]) => ({ all: [{ signal: name, op: '>' as const, value: 0.05, for_s: 1.5 }, { window: { days, from: '00:00', to: '24:00' } }] });
  const id = uid('diagnose');
  const closed = uid('closed');
  await createTask(id, { type: 'condition', when: when([today]), timezone: 'UTC', delay_s: 0.5, cooldown_s: 6 });
  await createTask(closed, { type: 'condition', when: when([(today + 3) % 7]), timezone: 'UTC' });

  const high = await tk.signals.send({ name, value: 0.07 });
  expect(high.delivered_to.sort()).toEqual([closed, id].sort());
  // Sustained for_s (1.5 s of signal time), then delay_s (0.5 s): one run, named by its nominal time.
  const r1 = await eventually(async () => (await runs(id)).find((r) => r.status === 'success'));
  const firedAt = Date.parse(high.at) + 1500;
  expect(r1.run_id).toBe(`run/${id}/${new Date(firedAt + 500).toISOString()}`);
  expect(r1.trigger).toBe('condition');
  expect(promptsOf(id)[0].time_context).toMatch(/its condition held \(at .*, when its for_s, window or cooldown came due; latest readings: signal ".*" = 0\.07 at /);

  // Inside the cooldown (6 s from the fire): false, then sustained true again, then false before it ends.
  await tk.signals.send({ name, value: 0.01 });
  await tk.signals.send({ name, value: 0.2 });
  await sleep(2500);
  await tk.signals.send({ name, value: 0.0 });
  const cooldownEnd = firedAt + 6000;
  // Past the cooldown's end, with all four readings taken in and nothing due there: what held inside the cooldown started nothing.
  await eventually('the cooldown to end', () => Date.now() > cooldownEnd);
  await schedulerAtRest(sys, id, { signals: 4, noWakeBefore: cooldownEnd + 60_000 });
  expect((await runs(id)).map((r) => r.run_id)).toEqual([r1.run_id]);

  // After the cooldown: sustained again → a second run.
  const again = await tk.signals.send({ name, value: 0.3 });
  const r2 = await eventually(async () => (await runs(id)).find((r) => r.run_id !== r1.run_id && r.status === 'success'));
  expect(r2.run_id).toBe(`run/${id}/${new Date(Date.parse(again.at) + 2000).toISOString()}`);
  // The task whose window is closed today never ran.
  expect(await runs(closed)).toEqual([]);
  const detail = await tk.tasks.get(id);
  expect(detail.trigger_text).toBe(`when ${name} > 0.05 for 1.5 s and between 00:00 and 24:00 on ${['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][today]} (UTC), run 0.5 s later; cooldown 6 s`);
});

test('a run-outcome condition: task X failed twice in a row → the diagnosis task runs once', async () => {
  const flaky = uid('flaky');
  const diag = uid('diag');
  await tk.tasks.create({ task_id: flaky, trigger: { type: 'at', at: new Date(Date.now() + 3_600_000).toISOString() }, agent: { type: 'webhook', url: agent.url, prompt_template: 'go' } });
  await createTask(diag, { type: 'condition', when: { task_id: flaky, status: 'failed', consecutive: 2 } });
  const failNow = async (n: number) => {
    await tk.tasks.trigger(flaky);
    await eventually(async () => (await runs(flaky)).filter((r) => r.status === 'failed').length === n);
  };
  await failNow(1);
  // The first outcome is taken in and nothing waits: one failure starts no diagnosis.
  await schedulerAtRest(sys, diag, { signals: 1 });
  expect(await runs(diag)).toEqual([]);
  await failNow(2);
  const r = await eventually(async () => (await runs(diag)).find((x) => x.status === 'success'));
  expect(r.trigger).toBe('condition');
  expect(promptsOf(diag)[0].time_context).toContain(`signal "task_run:${flaky}" = 2`);
  // Each outcome is stored once as a signal, with its streak.
  const stored = await sys.pool.query("SELECT signal_values FROM signals WHERE name = $1 AND source = 'task_run' ORDER BY seq", [`task_run:${flaky}`]);
  expect(stored.rows.map((x) => [x.signal_values.status, x.signal_values.streak])).toEqual([
    ['failed', 1],
    ['failed', 2],
  ]);
  // A third failure keeps the condition true: cooldown 0 fires again only after it was false.
  await failNow(3);
  await schedulerAtRest(sys, diag, { signals: 3 });
  expect(await runs(diag)).toHaveLength(1);
});

test('a scheduler that was lost takes the stored signals in again when it starts afresh: the missed wait runs, nothing runs twice', async () => {
  const id = uid('catchup');
  const event = uid('deploy');
  await createTask(id, { type: 'delay', event, seconds: 2, deduplicate: true, dedupe_key: '{{values.host}}' });
  const a = await tk.signals.send({ name: event, values: { host: 'web-1' } });
  // The scheduler is lost with its waiting run (terminated: its state is gone).
  await sys.client.workflow.getHandle(`task/${id}`).terminate('test: lose the scheduler');
  // The next signal starts it afresh (signal-with-start); it reads back what was stored since its version.
  const b = await tk.signals.send({ name: event, values: { host: 'web-2' } });
  expect(b.delivered_to).toEqual([id]);
  const done = await eventually(async () => {
    const rs = (await runs(id)).filter((r) => r.status === 'success');
    return rs.length === 2 ? rs : undefined;
  });
  expect(done.map((r) => r.run_id).sort()).toEqual([`run/${id}/delay/key:web-1/${a.at}`, `run/${id}/delay/key:web-2/${b.at}`].sort());
  // Once more: a third start of the scheduler reads both back again; their runs are not started twice.
  await sys.client.workflow.getHandle(`task/${id}`).terminate('test: lose it again');
  await tk.signals.send({ name: event, values: { host: 'web-2' }, signal_id: `${event}-late` });
  await eventually(async () => {
    const rs = await runs(id);
    return rs.length === 3 && rs.every((r) => r.status === 'success');
  });
  // The fresh scheduler took the late signal in and has nothing waiting: the runs it read back start no second time.
  await schedulerAtRest(sys, id, { signals: 1 });
  expect((await runs(id)).length).toBe(3);
  expect(promptsOf(id)).toHaveLength(3);
});
