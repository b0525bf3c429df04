/**
 * GET /metrics, scraped like Prometheus does: the text format, guarded by the auditor or
 * admin scope, and its key series move when an append, an intent transition and a task run
 * happen on the real system.
 */
import { startTestSystem, TestSystem, uniqueSessionId, eventually } from '../support';
import { chatAnswer, fakeServer, FakeServer, protocolAnswer } from '../support/fake-services';

const ADMIN = 'metrics-admin-key';
const AUDITOR = 'metrics-auditor-key';
const AGENT = 'metrics-agent-key';
const GATEWAY = 'metrics-gateway-key';

let sys: TestSystem;
let llm: FakeServer;
let hook: FakeServer;
beforeAll(async () => {
  sys = await startTestSystem({
    apiKeys: `${ADMIN}:admin,${AUDITOR}:auditor,${AGENT}:agent,${GATEWAY}:gateway`,
    config: { outboundAllowHosts: ['127.0.0.1'] },
    secrets: { LLM_API_KEY: 'sk-metrics' },
  });
  llm = await fakeServer((r) => {
    const system: string = JSON.parse(r.body).messages[0].content;
    return { body: chatAnswer(protocolAnswer(/task_id is "([^"]+)"/.exec(system)?.[1] ?? '?')) };
  });
  hook = await fakeServer(() => ({ body: { ok: true } }));
});
afterAll(async () => {
  await llm?.close();
  await hook?.close();
  await sys?.stop();
});

/** The sum of the samples of `name` whose labels include `labels` (Prometheus text format). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) sum += Number(m[3]);
  }
  return sum;
}

async function scrape(key = AUDITOR): Promise<string> {
  const r = await sys.tk.raw('GET', '/metrics', { headers: { authorization: `Bearer ${key}` } });
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return r.text;
}

test('is guarded by the auditor or admin scope when keys are configured', async () => {
  expect((await sys.tk.raw('GET', '/metrics')).status).toBe(401);
  expect((await sys.tk.raw('GET', '/metrics', { headers: { authorization: `Bearer ${AGENT}` } })).status).toBe(403);
  expect((await sys.tk.raw('GET', '/metrics', { headers: { authorization: `Bearer ${GATEWAY}` } })).status).toBe(403);
  await scrape(AUDITOR);
  await scrape(ADMIN);
});

test('exports process metrics, dependency health and the HTTP series labelled by contract path', async () => {
  const text = await scrape();
  expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
  expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
  expect(sample(text, 'timekeeper_dependency_up', { dependency: 'postgres' })).toBe(1);
  expect(sample(text, 'timekeeper_dependency_up', { dependency: 'temporal' })).toBe(1);
  expect(text).toMatch(/^# TYPE timekeeper_http_request_duration_seconds histogram$/m);
  // A refused scrape from the test above was counted under the route's path, with its status.
  expect(sample(text, 'timekeeper_http_requests_total', { route: '/metrics', status: '401' })).toBeGreaterThanOrEqual(1);
});

test('an append, an intent transition and a task run move their series', async () => {
  const before = await scrape();
  const gw = sys.tk.with({ apiKey: GATEWAY });
  const id = uniqueSessionId('metrics');
  await gw.createSession({ session_id: id });
  await gw.append(id, { type: 'USER_INPUT', content: { input: 'hello' } });
  await gw.append(id, { type: 'LLM_RESPONSE', content: { output: 'hi' } });

  const agent = sys.tk.with({ apiKey: AGENT });
  const intentId = `METRICS-${process.pid}-${Date.now()}`;
  await agent.intents.create({ event_id: intentId, domain: 'ops', action: 'scrape metrics' });
  await agent.intents.transition(intentId, { status: 'in-progress' });

  const taskId = `metrics-${process.pid}-${Date.now().toString(36)}`;
  const created = await gw.call('createTask', {
    body: {
      task_id: taskId,
      name: 'metrics probe',
      enabled: false,
      trigger: { type: 'cron', expression: '0 17 * * 1-5', timezone: 'UTC' },
      agent: { type: 'openai', base_url: `${llm.url}/v1`, model: 'm', api_key_env: 'LLM_API_KEY', prompt_template: 'go' },
      delivery: [{ type: 'webhook', url: `${hook.url}/done` }],
    },
  });
  expect(created.status).toBe(201);
  const t = await gw.call('triggerTask', { params: { id: taskId } });
  await eventually(async () => {
    const r = await gw.call('getRun', { params: { id: t.body.run_id } });
    return r.body.status === 'success' && r.body.deliveries?.some((d: { ok: boolean }) => d.ok);
  });
  const after = await eventually(async () => {
    const text = await scrape();
    return sample(text, 'timekeeper_task_deliveries_total', { type: 'webhook', outcome: 'ok' }) > sample(before, 'timekeeper_task_deliveries_total', { type: 'webhook', outcome: 'ok' }) ? text : undefined;
  });

  const delta = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);
  // Appends: SESSION_CREATE and the two events, in batches the writer timed.
  expect(delta('timekeeper_events_appended_total', { type: 'USER_INPUT' })).toBe(1);
  expect(delta('timekeeper_events_appended_total', { type: 'LLM_RESPONSE' })).toBe(1);
  expect(delta('timekeeper_events_appended_total', { type: 'SESSION_CREATE' })).toBe(1);
  expect(delta('timekeeper_append_batch_duration_seconds_count', { outcome: 'ok' })).toBeGreaterThanOrEqual(3);
  expect(delta('timekeeper_append_batch_size_count')).toBeGreaterThanOrEqual(3);
  expect(delta('timekeeper_append_batch_size_sum')).toBeGreaterThanOrEqual(3);
  // The create looked up; the two appends were written on the workflow's chain head, without it.
  expect(delta('timekeeper_append_batches_total', { path: 'lookup', reason: 'create' })).toBe(1);
  expect(delta('timekeeper_append_batches_total', { path: 'on_head' })).toBe(2);
  expect(delta('timekeeper_append_batches_total', { path: 'lookup', reason: 'conflict' })).toBe(0);
  // HTTP, by the contract's path rather than the URL with the session id in it.
  expect(delta('timekeeper_http_requests_total', { method: 'POST', route: '/v1/sessions/:id/events', status: '201' })).toBe(2);
  expect(delta('timekeeper_http_request_duration_seconds_count', { route: '/v1/sessions/:id/events' })).toBe(2);
  expect(after).not.toContain(id);
  // Intents: two transitions by the agent; the gauge counts the intent as in progress now.
  expect(delta('timekeeper_intent_transitions_total', { to: 'requested', actor: 'agent' })).toBe(1);
  expect(delta('timekeeper_intent_transitions_total', { to: 'in-progress', actor: 'agent' })).toBe(1);
  // The create looked up; the transition was written on the intent workflow's chain head.
  expect(delta('timekeeper_intent_writes_total', { path: 'lookup', reason: 'create' })).toBe(1);
  expect(delta('timekeeper_intent_writes_total', { path: 'on_head' })).toBe(1);
  expect(delta('timekeeper_intent_writes_total', { path: 'lookup', reason: 'conflict' })).toBe(0);
  expect(delta('timekeeper_intents', { status: 'in-progress' })).toBe(1);
  // The task run: running then success, its lateness observed once, its delivery ok.
  expect(delta('timekeeper_task_runs_total', { status: 'running', trigger: 'manual' })).toBe(1);
  expect(delta('timekeeper_task_runs_total', { status: 'success', trigger: 'manual' })).toBe(1);
  expect(delta('timekeeper_task_firing_lateness_seconds_count', { trigger: 'manual' })).toBe(1);
  expect(delta('timekeeper_task_deliveries_total', { type: 'webhook', outcome: 'ok' })).toBe(1);
  // The run's first attempt, step by step (one local activity): each step before the delivery once (the scrape waited for the delivery).
  for (const step of ['queued', 'context', 'agent', 'log']) expect(delta('timekeeper_task_first_attempt_step_seconds_count', { step })).toBe(1);
});
