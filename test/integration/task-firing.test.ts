/**
 * Scheduled tasks firing for real: a 6-field cron with seconds, the retry ladder on durable
 * timers (scaled down), the timeout, overlap skip, the answer protocol's one re-ask,
 * delivery (idempotency key, signature, SSRF guard) and the session link. Real Temporal and
 * PostgreSQL; local HTTP servers stand in for the LLM endpoint and the receivers.
 */
import { LIMITS } from '../../lib/domain/limits';
import { createHmac } from 'node:crypto';
import type { CallRequest, TimekeeperClient } from '../../sdk/client';
import { refusal, startTestSystem, TestSystem, uniqueSessionId, uid, eventually } from '../support';
import { chatAnswer, fakeServers, protocolAnswer, Received } from '../support/fake-services';
import { schedulerAtRest, schedulerState } from '../support/task-system';

let sys: TestSystem;
let tk: TimekeeperClient;
const servers = fakeServers();
const server = servers.start;

beforeAll(async () => {
  sys = await startTestSystem({ config: { outboundAllowHosts: ['127.0.0.1'] } });
  tk = sys.tk;
});
afterAll(async () => {
  await servers.closeAll();
  await sys?.stop();
});

/** A webhook agent that answers with the protocol object for whatever task asked. */
const answering = (extra: (n: number) => Record<string, unknown> = () => ({})) => (r: Received, n: number) => ({ body: protocolAnswer(JSON.parse(r.body).task_id, extra(n)) });

/** Creates a task; a refusal rejects with the server's problem (a TimekeeperApiError). */
const createTask = (body: CallRequest<'createTask'>['body']) => tk.tasks.create(body);

const runs = async (taskId: string) => (await tk.tasks.runs(taskId, { limit: 1000 })).runs;
const run = (runId: string) => tk.runs.get(runId);
const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();
/**
 * Waits until Temporal's visibility (what the Temporal UI lists) finds the run among its task's
 * runs, by the workflow id's prefix, with this RunStatus: a run sets it once it retries, waits
 * or fails (a run that succeeds at its first attempt has none).
 */
const listedWithStatus = (taskId: string, runId: string, status: string) =>
  eventually(`${runId} listed with RunStatus ${status}`, async () => {
    for await (const wf of sys.client.workflow.list({ query: `WorkflowId STARTS_WITH "run/${taskId}/" AND RunStatus = "${status}"` })) if (wf.workflowId === runId) return true;
    return undefined;
  });

test('a 6-field cron with seconds fires for real, one run per fire time with id run/<task>/<nominal UTC>, and stops when paused', async () => {
  const agent = await server(answering());
  const id = uid('every2s');
  await createTask({ task_id: id, trigger: { type: 'cron', expression: '*/2 * * * * *', timezone: 'Europe/Berlin' }, agent: { type: 'webhook', url: agent.url, prompt_template: 'tick {{scheduled_at}}' } });
  const done = await eventually(async () => {
    const rs = (await runs(id)).filter((r) => r.status === 'success');
    return rs.length >= 2 ? rs : undefined;
  }, 12_000);
  for (const r of done) {
    expect(r.run_id).toBe(`run/${id}/${r.scheduled_at}`);
    expect(new Date(r.scheduled_at).getUTCSeconds() % 2).toBe(0);
    expect(new Date(r.scheduled_at).getUTCMilliseconds()).toBe(0);
    expect(r.trigger).toBe('schedule');
    expect(r.lateness_ms).toBeGreaterThanOrEqual(0);
    // On time, not a misfire: the scheduler took it inside its on-time slack (speed is bench:tasks' job).
    expect(r.lateness_ms).toBeLessThan(LIMITS.taskOnTimeSlackMs);
  }
  // The agent's prompt had the template rendered with the nominal time.
  expect(agent.received.some((x) => JSON.parse(x.body).prompt === `tick ${done[0].scheduled_at}`)).toBe(true);
  expect(new Set(done.map((r) => r.run_id)).size).toBe(done.length);

  await tk.tasks.pause(id);
  // The scheduler took the pause in and rests with no wake set (a fire under way at the pause has finished): nothing may start from here.
  const paused = await schedulerAtRest(sys, id, { until: (st) => !st.enabled });
  const before = (await runs(id)).length;
  // A fire time of the 2-second grid passes while it is paused: still no run, and the scheduler still rests.
  const nextOnGrid = Math.ceil((Date.now() + 1) / 2000) * 2000;
  await eventually('a fire time to pass while paused', () => Date.now() > nextOnGrid + 1000);
  expect((await runs(id)).length).toBe(before);
  expect(await schedulerState(sys, id)).toMatchObject({ enabled: false, nextFireMs: null, fires: paused.fires });
});

test('retries follow the backoff list as durable timers, then succeed; an `at` task completes and is kept', async () => {
  const agent = await server((r, n) => (n <= 2 ? { status: 500, body: { error: 'overloaded' } } : answering()(r, n)));
  const id = uid('retry');
  await createTask({ task_id: id, trigger: { type: 'at', at: inSeconds(1) }, agent: { type: 'webhook', url: agent.url, prompt_template: 'go' }, retry: { max_attempts: 3, backoff_seconds: [0.5, 1.5] } });
  const r = await eventually(async () => (await runs(id)).find((x) => x.status === 'success'), 15_000);
  const detail = await run(r.run_id);
  expect(detail.log.map((l) => `${l.status}:${l.attempt}`)).toEqual(['running:1', 'retry:1', 'retry:2', 'success:3']);
  expect(detail.log[1].reason).toMatch(/HTTP 500/);
  // Its retries showed it in RunStatus, so its finish does too.
  await listedWithStatus(id, r.run_id, 'success');
  const gaps = agent.received.slice(1).map((x, i) => x.at - agent.received[i].at);
  expect(gaps[0]).toBeGreaterThanOrEqual(500);
  expect(gaps[1]).toBeGreaterThanOrEqual(1500);
  const task = await eventually(async () => {
    const t = await tk.tasks.get(id);
    return t.last_change.action === 'complete' ? t : undefined;
  });
  expect(task).toMatchObject({ enabled: false, deleted: false, status: 'success', next_fire_times: [] });
});

test('a run that outlives timeout_s fails as timed_out, enters the needs-attention queue, alerts, and auto-disables the task', async () => {
  const agent = await server(() => ({ body: {}, delayMs: 3000 }));
  const alert = await server(() => ({ body: { ok: true } }));
  const id = uid('slow');
  await createTask({
    task_id: id,
    trigger: { type: 'at', at: inSeconds(1) },
    agent: { type: 'webhook', url: agent.url, prompt_template: 'go' },
    timeout_s: 1,
    auto_disable_after: 1,
    alert: { url: alert.url },
  });
  const r = await eventually(async () => (await runs(id)).find((x) => x.status === 'failed'), 15_000);
  expect(r.reason).toMatch(/timed_out/);
  expect(r.needs_attention).toBe(true);
  const queue = (await tk.runs.list({ status: 'needs_attention', task_id: id })).runs;
  expect(queue.map((x) => x.run_id)).toEqual([r.run_id]);
  await listedWithStatus(id, r.run_id, 'failed');
  await eventually(async () => alert.received.length === 1);
  expect(JSON.parse(alert.received[0].body)).toMatchObject({ event: 'task_run_failed', task_id: id, run_id: r.run_id });
  const task = await eventually(async () => {
    const t = await tk.tasks.get(id);
    return t.last_change.action === 'auto_disable' ? t : undefined;
  });
  expect(task.enabled).toBe(false);
  expect(task.last_change.reason).toMatch(/disabled after 1 failed runs in a row/);
});

test('overlap skip: a fire time that comes while the previous run is still running is recorded as skipped, never run alongside', async () => {
  let inFlight = 0;
  let maxInFlight = 0;
  const agent = await server(async (r) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await new Promise((ok) => setTimeout(ok, 2500));
    inFlight--;
    return answering()(r, 0);
  });
  const id = uid('overlap');
  await createTask({ task_id: id, trigger: { type: 'interval', every_s: 1, mode: 'aligned' }, agent: { type: 'webhook', url: agent.url, prompt_template: 'go' }, overlap: 'skip' });
  const all = await eventually(async () => {
    const rs = await runs(id);
    return rs.filter((x) => x.status === 'success').length >= 1 && rs.filter((x) => x.status === 'skipped').length >= 2 ? rs : undefined;
  }, 15_000);
  await tk.tasks.delete(id);
  expect(maxInFlight).toBe(1);
  const skipped = all.filter((x) => x.status === 'skipped');
  expect(skipped[0].reason).toMatch(/overlap skip: the previous run .* is still running/);
  // Every fire time is accounted for exactly once, on the aligned 1-second grid.
  const nominal = all.map((x) => Date.parse(x.scheduled_at)).sort((a, b) => a - b);
  for (const [i, t] of nominal.entries()) {
    expect(t % 1000).toBe(0);
    if (i > 0) expect(t - nominal[i - 1]).toBe(1000);
  }
});

test('an answer outside the protocol is asked for again once with the validation error; a second bad answer fails the run', async () => {
  const llm = await server((r) => {
    const body = JSON.parse(r.body);
    const taskId = /task_id is "([^"]+)"/.exec(body.messages[0].content)![1];
    const stubborn = taskId.startsWith('stubborn');
    return { body: chatAnswer(body.messages.length === 2 || stubborn ? 'Sure! Here is your summary: all fine.' : protocolAnswer(taskId)) };
  });
  const ok = uid('reask');
  const bad = uid('stubborn');
  for (const id of [ok, bad]) await createTask({ task_id: id, trigger: { type: 'at', at: inSeconds(1) }, agent: { type: 'openai', base_url: llm.url, model: 'm', prompt_template: 'go' } });
  const good = await eventually(async () => (await runs(ok)).find((x) => x.status === 'success'));
  expect(good.summary).toBe('all good');
  const second = llm.received.filter((x) => x.body.includes(`task_id is \\"${ok}\\"`))[1];
  const msgs = JSON.parse(second.body).messages;
  expect(msgs).toHaveLength(4);
  expect(msgs[3].content).toMatch(/does not follow the protocol: the answer is not a JSON object/);
  const failed = await eventually(async () => (await runs(bad)).find((x) => x.status === 'failed'));
  expect(failed.reason).toMatch(/invalid_answer: .*also when asked again/);
  expect(llm.received.filter((x) => x.body.includes(`task_id is \\"${bad}\\"`))).toHaveLength(2);
});

test('delivery: JSON with Idempotency-Key and HMAC signature, markdown, the SSRF guard refusing a local name, and the session timeline', async () => {
  const agent = await server(answering());
  const hook = await server(() => ({ body: { ok: true } }));
  const sessionId = uniqueSessionId('tasklink');
  expect((await tk.call('createSession', { body: { session_id: sessionId } })).status).toBe(201);
  const id = uid('deliver');
  const secret = 'shh-its-a-secret';
  await createTask({
    task_id: id,
    name: 'Digest',
    trigger: { type: 'at', at: inSeconds(1) },
    agent: { type: 'webhook', url: agent.url, prompt_template: 'go' },
    delivery: [
      { type: 'webhook', url: `${hook.url}/json`, format: 'json', secret },
      { type: 'webhook', url: `${hook.url}/md`, format: 'markdown' },
      // localhost resolves to loopback and is not in OUTBOUND_ALLOW_HOSTS (only 127.0.0.1 is).
      { type: 'webhook', url: hook.url.replace('127.0.0.1', 'localhost') + '/ssrf' },
    ],
    session_id: sessionId,
  });
  const r = await eventually(async () => {
    const x = (await runs(id)).find((y) => y.status === 'success');
    return x && (await run(x.run_id)).deliveries.length === 4 ? x : undefined;
  });
  const json = hook.received.find((x) => x.path === '/json')!;
  expect(json.headers['idempotency-key']).toBe(r.run_id);
  expect(json.headers['x-timekeeper-signature']).toBe(`sha256=${createHmac('sha256', secret).update(json.body).digest('hex')}`);
  expect(JSON.parse(json.body)).toMatchObject({ run_id: r.run_id, task_id: id, task_name: 'Digest', status: 'success', attempt: 1, summary: 'all good', scheduled_at: r.scheduled_at });
  const md = hook.received.find((x) => x.path === '/md')!;
  expect(md.headers['content-type']).toMatch(/text\/markdown/);
  expect(md.body).toMatch(/^## Digest\n\nall good/);
  expect(md.headers['x-timekeeper-signature']).toBeUndefined();
  expect(hook.received.some((x) => x.path === '/ssrf')).toBe(false);
  const d = (await run(r.run_id)).deliveries;
  expect(d.map((x) => x.ok)).toEqual([true, true, false, true]);
  expect(d[2].detail).toMatch(/private or local address/);
  // The run is on the session's timeline as a TASK_RUN event, shown in words.
  const ctx = await tk.context(sessionId);
  expect(ctx.text).toContain(`Scheduled task Digest (scheduled ${r.scheduled_at}): success: all good`);
  // Clients cannot append TASK_RUN themselves.
  const forged = await refusal(tk.append(sessionId, { type: 'TASK_RUN', content: { task_id: 'x' } }));
  expect(forged.status).toBe(400);
});

test('a run wakes up with the time since the last run and the memory of the last memory_runs finished runs, newest first', async () => {
  // The agent answers call n with `run n` and processed n; the runs are triggered one after another.
  const agent = await server(answering((n) => ({ summary: `run ${n}`, processed: n })));
  const id = uid('memory');
  await createTask({
    task_id: id,
    trigger: { type: 'interval', every_s: 86_400 },
    agent: { type: 'webhook', url: agent.url, prompt_template: 'go' },
    memory_runs: 2,
    enabled: true,
  });
  for (let n = 1; n <= 4; n++) {
    const { run_id } = await tk.tasks.trigger(id);
    await eventually(`run ${n} to succeed`, async () => (await run(run_id)).log.some((l) => l.status === 'success'));
  }
  const calls = agent.received.map((x) => JSON.parse(x.body) as { run_id: string; started_at: string; time_context: string; memory: string });
  expect(calls).toHaveLength(4);

  expect(calls[0].memory).toBe('No earlier runs.');
  expect(calls[0].time_context).toContain('This is the first run of this task.');

  // The fourth run remembers the third and the second, newest first, with what their agent answered.
  const remembered = calls[3].memory.split('\n');
  expect(remembered).toHaveLength(2);
  expect(remembered[0]).toMatch(/^- .*: succeeded, processed 3, 2 errors, not delivered\. Summary: run 3$/);
  expect(remembered[1]).toMatch(/^- .*: succeeded, processed 2, 2 errors, not delivered\. Summary: run 2$/);
  // Its time since the last run counts from the third run's start, as the third call was told.
  expect(calls[3].time_context).toContain(`(last run started ${calls[2].started_at})`);
  expect(calls[3].time_context).not.toContain('This is the first run of this task.');
});
