/**
 * Results reported later through POST /v1/runs/{run_id}/result (the run workflow's `result`
 * update): a webhook agent answering 202, an OpenClaw Gateway's /hooks/agent (a local
 * stand-in speaking its protocol), the timeout and retry ladder when no result comes, the
 * same result twice, refusals while the run waits and after it ended, and exponential
 * retry on durable timers. Real Temporal and PostgreSQL.
 */
import type { CallRequest, TimekeeperClient } from '../../sdk/client';
import { refusal, startTestSystem, TestSystem, uid, eventually } from '../support';
import { fakeOpenClawGateway, fakeServers, protocolAnswer } from '../support/fake-services';
import { runStateQuery } from '../../workflows/tasks/messages';

let sys: TestSystem;
let tk: TimekeeperClient;
const servers = fakeServers();
const server = servers.start;
const OPENCLAW_TOKEN = 'oc-hooks-token-for-tests';
const PROBLEM = (code: string) => `https://timekeeper.dev/problems/${code}`;

beforeAll(async () => {
  sys = await startTestSystem({ config: { outboundAllowHosts: ['127.0.0.1'], agentSecrets: ['OPENCLAW_HOOKS_TOKEN', 'UNSET_GATEWAY_TOKEN'] }, secrets: { OPENCLAW_HOOKS_TOKEN: OPENCLAW_TOKEN } });
  tk = sys.tk;
});
afterAll(async () => {
  await servers.closeAll();
  await sys?.stop();
});

type Answer = CallRequest<'reportRunResult'>['body'];
const answerFor = (taskId: string, extra: Partial<Answer> = {}): Answer => ({ ...JSON.parse(protocolAnswer(taskId)), summary: 'reported later', ...extra });
const runs = async (taskId: string) => (await tk.tasks.runs(taskId, { limit: 100 })).runs;
const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();
/** POSTs to a result URL as an agent would (no typed client: the URL is what the run gave it). */
const postResult = async (url: string, body: unknown) => {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
};

test('webhook 202: the result posted to result_url completes the run with that answer and is delivered; the same result again answers the same outcome', async () => {
  const agent = await server(() => ({ status: 202, body: { accepted: true } }));
  const hook = await server(() => ({ body: { ok: true } }));
  const id = uid('later');
  await tk.tasks.create({ task_id: id, trigger: { type: 'at', at: inSeconds(1) }, agent: { type: 'webhook', url: agent.url, prompt_template: 'go' }, delivery: { type: 'webhook', url: hook.url } });
  await eventually(async () => agent.received.length === 1);
  const ctx = JSON.parse(agent.received[0].body);
  expect(ctx.result_url).toBe(`${sys.baseUrl}/v1/runs/${encodeURIComponent(ctx.run_id)}/result`);
  // The run waits (it took the 202 in): no outcome yet, nothing delivered.
  await eventually('the run to wait for its result', async () => (await sys.client.workflow.getHandle(ctx.run_id).query(runStateQuery)).status === 'waiting');
  expect((await tk.runs.get(ctx.run_id)).status).toBe('running');
  expect(hook.received).toHaveLength(0);

  const answer = answerFor(id, { processed: 42, summary: '42 items, 2 odd ones' });
  const first = await postResult(ctx.result_url, answer);
  expect(first).toEqual({ status: 200, body: { run_id: ctx.run_id, task_id: id, attempt: 1, outcome: 'success', deduplicated: false } });
  const again = await postResult(ctx.result_url, answer);
  expect(again.body).toEqual({ ...first.body, deduplicated: true });

  const done = await eventually(async () => {
    const r = await tk.runs.get(ctx.run_id);
    return r.status === 'success' && r.deliveries.length === 1 ? r : undefined;
  });
  expect(done.result).toEqual(answer);
  expect(done.processed).toBe(42);
  expect(done.log.map((l) => `${l.status}:${l.attempt}`)).toEqual(['running:1', 'success:1']);
  expect(JSON.parse(hook.received[0].body)).toMatchObject({ run_id: ctx.run_id, status: 'success', summary: '42 items, 2 odd ones', result: answer });

  // After the run ended: the same result still answers its outcome (from the execution log), once more nothing happens.
  expect((await tk.runs.reportResult(ctx.run_id, answer)).deduplicated).toBe(true);
  const other = await refusal(tk.runs.reportResult(ctx.run_id, { ...answer, summary: 'a second opinion' }));
  expect(other.status).toBe(409);
  expect(other.body).toMatchObject({ type: PROBLEM('run_not_waiting'), run_status: 'success', waiting: false });
  expect((await runs(id)).filter((r) => r.status === 'success')).toHaveLength(1);
  expect(hook.received).toHaveLength(1);
});

test('while the run waits: an invalid answer is a 400 naming the field, another task_id a 409, and the run still takes the valid result', async () => {
  const agent = await server(() => ({ status: 202, body: {} }));
  const id = uid('invalid');
  await tk.tasks.create({ task_id: id, trigger: { type: 'at', at: inSeconds(1) }, agent: { type: 'webhook', url: agent.url, prompt_template: 'go' } });
  await eventually(async () => agent.received.length === 1);
  const { run_id: runId } = JSON.parse(agent.received[0].body);

  const bad = await tk.raw('POST', `/v1/runs/${encodeURIComponent(runId)}/result`, { body: { ...answerFor(id), processed: 'lots' } });
  expect(bad.status).toBe(400);
  expect(bad.body.errors.map((e: { field: string }) => e.field)).toEqual(['processed']);
  const foreign = await refusal(tk.runs.reportResult(runId, answerFor('some-other-task')));
  expect(foreign.status).toBe(409);
  // `running` while the agent call is still in flight, `waiting` after its 202: results are taken in both.
  expect(foreign.body).toMatchObject({ type: PROBLEM('result_conflict'), run_status: expect.stringMatching(/^(running|waiting)$/), attempt: 1, waiting: true });
  expect(foreign.body.errors?.[0]?.field).toBe('task_id');
  const wrongAttempt = await refusal(tk.runs.reportResult(runId, { ...answerFor(id), attempt: 2 }));
  expect(wrongAttempt.body.type).toBe(PROBLEM('run_not_waiting'));

  const ok = await tk.runs.reportResult(runId, { ...answerFor(id), attempt: 1 });
  expect(ok).toMatchObject({ outcome: 'success', deduplicated: false });
  // A different result for the same attempt, before the run finished or after: refused, the first counts.
  const second = await refusal(tk.runs.reportResult(runId, answerFor(id, { summary: 'changed my mind' })));
  expect(second.status).toBe(409);
  expect([PROBLEM('result_conflict'), PROBLEM('run_not_waiting')]).toContain(second.body.type);
  const done = await eventually(async () => (await runs(id)).find((r) => r.status === 'success'));
  expect(done.summary).toBe('reported later');
});

test('no result within timeout_s: the attempt times out, the retry ladder runs (exponential settings), a reported failure retries, the last one fails the run', async () => {
  const agent = await server(() => ({ status: 202, body: {} }));
  const id = uid('silent');
  await tk.tasks.create({
    task_id: id,
    trigger: { type: 'at', at: inSeconds(1) },
    agent: { type: 'webhook', url: agent.url, prompt_template: 'go' },
    // Long enough that attempt 2's result (sent by this test once the agent saw the call) arrives in time on a loaded machine.
    timeout_s: 4,
    retry: { max_attempts: 3, initial_interval_s: 0.5, backoff_coefficient: 3 },
  });
  // Attempt 1: silence. Attempt 2 (0.5 s later): the agent reports `failed` → retry. Attempt 3 (1.5 s later): `failed` again → the run fails.
  await eventually(async () => agent.received.length === 2, { timeoutMs: 20_000, stepMs: 50 });
  const runId = JSON.parse(agent.received[1].body).run_id as string;
  expect(JSON.parse(agent.received[1].body).attempt).toBe(2);
  const failedAnswer = answerFor(id, { status: 'failed', summary: 'source down' });
  expect(await tk.runs.reportResult(runId, failedAnswer)).toMatchObject({ attempt: 2, outcome: 'retry', deduplicated: false });
  await eventually(async () => agent.received.length === 3, { timeoutMs: 20_000, stepMs: 50 });
  const last = answerFor(id, { status: 'failed', summary: 'still down' });
  expect(await tk.runs.reportResult(runId, last)).toMatchObject({ attempt: 3, outcome: 'failed' });

  const run = await eventually(async () => {
    const r = await tk.runs.get(runId);
    return r.status === 'failed' ? r : undefined;
  });
  expect(run.log.map((l) => `${l.status}:${l.attempt}`)).toEqual(['running:1', 'retry:1', 'retry:2', 'failed:3']);
  expect(run.log[1].reason).toMatch(/timed_out: no result reached POST \/v1\/runs\/.*\/result within timeout_s \(4 s\) after the webhook answered 202/);
  expect(run.log[2].reason).toMatch(/agent_reported_failure: source down/);
  expect(run.needs_attention).toBe(true);
  // Exponential waits: 0.5 s before attempt 2 (after attempt 1 timed out), 1.5 s before attempt 3 (after attempt 2's result).
  expect(run.log[1].reason).toMatch(/; attempt 2 in 0.5 s$/);
  expect(run.log[2].reason).toMatch(/; attempt 3 in 1.5 s$/);
  const at = agent.received.map((r) => r.at);
  expect(at[1] - at[0]).toBeGreaterThanOrEqual(500);
  expect(at[2] - at[1]).toBeGreaterThanOrEqual(1500);
  // The run is over: the attempt-2 result sent again answers its outcome; a new one is refused with the state.
  expect(await tk.runs.reportResult(runId, failedAnswer)).toMatchObject({ attempt: 2, outcome: 'retry', deduplicated: true });
  const late = await refusal(tk.runs.reportResult(runId, answerFor(id)));
  expect(late.status).toBe(409);
  expect(late.body).toMatchObject({ type: PROBLEM('run_not_waiting'), run_status: 'failed', attempt: 3, waiting: false });
});

test('openclaw: the Gateway gets POST /hooks/agent with the bearer token, a per-run idempotency key and the rendered message; the callback completes the run', async () => {
  const results: Promise<unknown>[] = [];
  const gateway = servers.track(await fakeOpenClawGateway({
    token: OPENCLAW_TOKEN,
    // Plays the agent: reads the callback from the message and reports there, as the instructions say.
    onTurn: (body) => {
      const url = /POST the result .* to (\S+) with Content-Type/.exec(body.message as string)![1];
      const taskId = /task_id is "([^"]+)"/.exec(body.message as string)![1];
      results.push(new Promise((r) => setTimeout(r, 200)).then(() => postResult(url, answerFor(taskId, { summary: 'openclaw did it' }))));
    },
  }));
  const id = uid('claw');
  await tk.tasks.create({
    task_id: id,
    name: 'Claw digest',
    trigger: { type: 'at', at: inSeconds(1) },
    agent: { type: 'openclaw', url: gateway.url, token_env: 'OPENCLAW_HOOKS_TOKEN', agent_id: 'main', persona: 'an analyst', prompt_template: 'Summarise {{date}} for {{task_name}}' },
  });
  const done = await eventually(async () => (await runs(id)).find((r) => r.status === 'success'));
  expect(done.summary).toBe('openclaw did it');
  expect(gateway.turns).toHaveLength(1);
  const req = gateway.received[0];
  expect(req.path).toBe('/hooks/agent');
  expect(req.headers.authorization).toBe(`Bearer ${OPENCLAW_TOKEN}`);
  expect(req.headers['idempotency-key']).toBe(`${done.run_id}#1`);
  const body = gateway.turns[0].body;
  expect(body).toMatchObject({ name: 'Timekeeper: Claw digest', agentId: 'main', wakeMode: 'now', deliver: false, timeoutSeconds: 900 });
  const message = body.message as string;
  expect(message).toContain('You are an analyst.');
  expect(message).toMatch(/Current time: .* \(UTC\)/);
  expect(message).toContain('No earlier runs.');
  expect(message).toContain(`Summarise ${done.scheduled_at.slice(0, 10)} for Claw digest`);
  expect(message).toContain(`${sys.baseUrl}/v1/runs/${encodeURIComponent(done.run_id)}/result`);
  // The token is read from the worker's environment when needed, never stored with the task.
  expect(JSON.stringify((await tk.tasks.get(id)).definition)).not.toContain(OPENCLAW_TOKEN);
  expect(((await Promise.all(results))[0] as { status: number }).status).toBe(200);
});

test('openclaw: a Gateway that refuses the token fails the attempt with its answer; no token on the worker is a clear reason', async () => {
  const gateway = servers.track(await fakeOpenClawGateway({ token: 'another-token' }));
  const id = uid('claw401');
  const noToken = uid('clawnotoken');
  await tk.tasks.create({ task_id: id, trigger: { type: 'at', at: inSeconds(1) }, agent: { type: 'openclaw', url: gateway.url, token_env: 'OPENCLAW_HOOKS_TOKEN', prompt_template: 'x' } });
  await tk.tasks.create({ task_id: noToken, trigger: { type: 'at', at: inSeconds(1) }, agent: { type: 'openclaw', url: gateway.url, token_env: 'UNSET_GATEWAY_TOKEN', prompt_template: 'x' } });
  const refused = await eventually(async () => (await runs(id)).find((r) => r.status === 'failed'));
  expect(refused.reason).toMatch(/agent_error: the OpenClaw Gateway answered HTTP 401/);
  const missing = await eventually(async () => (await runs(noToken)).find((r) => r.status === 'failed'));
  expect(missing.reason).toMatch(/agent_misconfigured: agent.token_env: the environment variable UNSET_GATEWAY_TOKEN is not set/);
  expect(gateway.turns).toHaveLength(0);
});
