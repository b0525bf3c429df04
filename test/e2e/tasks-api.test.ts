/**
 * The task routes over HTTP against the real system through the typed client (every answer
 * checked against its route contract; raw requests for input the contract's types do not
 * allow): create, read, change, pause, trigger, delete, preview, refusals.
 */
import type { CallRequest, TimekeeperClient } from '../../sdk/client';
import { refusal, startTestSystem, TestSystem, eventually, uid, expectProblem } from '../support';
import { chatAnswer, fakeServer, FakeServer, protocolAnswer } from '../support/fake-services';

type CreateTask = CallRequest<'createTask'>['body'];

let sys: TestSystem;
let tk: TimekeeperClient;
let llm: FakeServer;

beforeAll(async () => {
  sys = await startTestSystem({ config: { outboundAllowHosts: ['127.0.0.1'], agentSecrets: ['LLM_API_KEY', 'OPENCLAW_HOOKS_TOKEN'] }, secrets: { LLM_API_KEY: 'sk-test-123' } });
  tk = sys.tk;
  llm = await fakeServer((r) => {
    const body = JSON.parse(r.body);
    const system: string = body.messages[0].content;
    const taskId = /task_id is "([^"]+)"/.exec(system)?.[1] ?? '?';
    return { body: chatAnswer(protocolAnswer(taskId)) };
  });
});
afterAll(async () => {
  await llm?.close();
  await sys?.stop();
});

const agent = (): CreateTask['agent'] => ({ type: 'openai', base_url: `${llm.url}/v1`, model: 'qwen2.5', api_key_env: 'LLM_API_KEY', persona: '舆情分析师', prompt_template: '请生成摘要 {{date}}' });
const body = (id: string, extra: Partial<CreateTask> = {}): CreateTask => ({
  task_id: id,
  name: '每日舆情摘要',
  trigger: { type: 'cron', expression: '0 17 * * 1-5', timezone: 'Asia/Shanghai' },
  agent: agent(),
  delivery: { type: 'webhook', url: 'https://robot.example/hook', format: 'markdown' },
  retry: { max_attempts: 3, backoff_seconds: [60, 300] },
  ...extra,
});

test('POST /v1/tasks stores the article example with defaults, and GET shows next fire times and the trigger in words', async () => {
  const id = uid('digest');
  const created = await tk.call('createTask', { body: body(id) });
  expect(created.status).toBe(201);
  expect(created.headers.get('location')).toBe(`/v1/tasks/${id}`);
  expect(created.body).toMatchObject({ task_id: id, status: 'pending', enabled: true, version: 1 });
  expect(created.body.definition).toMatchObject({ timeout_s: 900, overlap: 'skip', misfire: 'run_latest', memory_runs: 3, auto_disable_after: 10, priority: 'default' });
  expect(created.body.definition.delivery).toEqual([{ type: 'webhook', url: 'https://robot.example/hook', format: 'markdown' }]);

  const got = await tk.call('getTask', { params: { id } });
  expect(got.status).toBe(200);
  expect(got.body.trigger_text).toBe('cron "0 17 * * 1-5" in Asia/Shanghai: at 17:00 on Monday to Friday');
  expect(got.body.next_fire_times).toHaveLength(5);
  for (const t of got.body.next_fire_times) {
    const d = new Date(t);
    expect(d.getUTCHours()).toBe(9); // 17:00 in Shanghai
    expect(d.getUTCMinutes()).toBe(0);
    expect([1, 2, 3, 4, 5]).toContain(d.getUTCDay());
  }
  expect(got.body.next_run).toBe(got.body.next_fire_times[0]);
  expect(got.body.history.map((h) => h.action)).toEqual(['create']);
  // The key is named, never stored.
  expect(JSON.stringify(got.body)).not.toContain('sk-test-123');

  const dup = await refusal(tk.tasks.create(body(id)));
  expect(dup.status).toBe(409);
  expect(dup.body.type).toMatch(/task_exists$/);
});

// Sent raw: most of these are not a CreateTask by type; all are refused by the server alike.
test.each([
  ['an invalid cron', { trigger: { type: 'cron', expression: '61 * * * *' } }, 'trigger.expression'],
  ['a cron with 7 fields', { trigger: { type: 'cron', expression: '0 0 0 * * * 2030' } }, 'trigger.expression'],
  ['an unknown time zone', { trigger: { type: 'cron', expression: '0 17 * * *', timezone: 'Mars/Olympus' } }, 'trigger.timezone'],
  ['two triggers in one', { trigger: { type: 'cron', expression: '0 17 * * *', every_s: 60 } }, 'trigger.every_s'],
  ['a zero interval', { trigger: { type: 'interval', every_s: 0 } }, 'trigger.every_s'],
  ['a negative interval', { trigger: { type: 'interval', every_s: -5 } }, 'trigger.every_s'],
  ['an unknown trigger type', { trigger: { type: 'lunar', phase: 'full' } }, 'trigger.type'],
  ['an unknown agent type', { agent: { type: 'carrier-pigeon', prompt_template: 'x' } }, 'agent.type'],
  ['an unknown delivery type', { delivery: { type: 'fax', number: '1' } }, 'delivery.0.type'],
  ['a negative backoff', { retry: { max_attempts: 3, backoff_seconds: [1, -2] } }, 'retry.backoff_seconds.1'],
  ['both retry styles at once', { retry: { max_attempts: 3, backoff_seconds: [1], initial_interval_s: 2, backoff_coefficient: 2 } }, 'retry.backoff_coefficient'],
  ['a backoff coefficient without initial_interval_s', { retry: { max_attempts: 3, backoff_coefficient: 2 } }, 'retry.initial_interval_s'],
  ['a maximum interval below the initial one', { retry: { max_attempts: 3, initial_interval_s: 60, maximum_interval_s: 30 } }, 'retry.maximum_interval_s'],
  ['a backoff coefficient below 1', { retry: { max_attempts: 3, initial_interval_s: 1, backoff_coefficient: 0.5 } }, 'retry.backoff_coefficient'],
  ['an openclaw agent without token_env', { agent: { type: 'openclaw', url: 'http://127.0.0.1:18789', prompt_template: 'x' } }, 'agent.token_env'],
  ['an openclaw token_env that is no variable name', { agent: { type: 'openclaw', url: 'http://127.0.0.1:18789', token_env: 'my token', prompt_template: 'x' } }, 'agent.token_env'],
  ['an openclaw agent with a field OpenClaw has not', { agent: { type: 'openclaw', url: 'http://127.0.0.1:18789', token_env: 'OPENCLAW_HOOKS_TOKEN', prompt_template: 'x', channel_secret: 'x' } }, 'agent.channel_secret'],
  ['an openclaw url that is not http(s)', { agent: { type: 'openclaw', url: 'ws://127.0.0.1:18789', token_env: 'OPENCLAW_HOOKS_TOKEN', prompt_template: 'x' } }, 'agent.url'],
  ['an unknown template variable', { agent: { type: 'webhook', url: 'https://a.example/agent', prompt_template: 'hi {{weather}}' } }, 'agent.prompt_template'],
  ['a timeout out of range', { timeout_s: 0 }, 'timeout_s'],
  ['a timeout too long', { timeout_s: 10 ** 9 }, 'timeout_s'],
  ['an at time in the past', { trigger: { type: 'at', at: '2001-01-01T00:00:00Z' } }, 'trigger.at'],
  ['an unknown field', { colour: 'blue' }, 'colour'],
  ['a delay without an event', { trigger: { type: 'delay', seconds: 60 } }, 'trigger.event'],
  ['a negative delay', { trigger: { type: 'delay', event: 'deploy', seconds: -1 } }, 'trigger.seconds'],
  ['a delay longer than a week', { trigger: { type: 'delay', event: 'deploy', seconds: 10 ** 7 } }, 'trigger.seconds'],
  ['a dedupe key with an unknown variable', { trigger: { type: 'delay', event: 'deploy', seconds: 5, deduplicate: true, dedupe_key: '{{host}}' } }, 'trigger.dedupe_key'],
  ['a dedupe key without deduplicate', { trigger: { type: 'delay', event: 'deploy', seconds: 5, dedupe_key: '{{name}}' } }, 'trigger.dedupe_key'],
  ['a condition node of no known shape', { trigger: { type: 'condition', when: { metric: 'x' } } }, 'trigger.when'],
  ['a condition with an unknown operator', { trigger: { type: 'condition', when: { all: [{ signal: 'x', op: '~', value: 1 }] } } }, 'trigger.when.all.0.op'],
  ['an unknown field in a condition leaf', { trigger: { type: 'condition', when: { any: [{ signal: 'x', op: '>', value: 1, for_minutes: 3 }] } } }, 'trigger.when.any.0.for_minutes'],
  ['an ordering operator on a string', { trigger: { type: 'condition', when: { signal: 'x', op: '>', value: 'high' } } }, 'trigger.when.value'],
  ['a window time that is not HH:MM', { trigger: { type: 'condition', when: { window: { from: '9am', to: '17:00' } } } }, 'trigger.when.window.from'],
  ['a window day out of range', { trigger: { type: 'condition', when: { window: { days: [7] } } } }, 'trigger.when.window.days.0'],
  ['a condition in an unknown zone', { trigger: { type: 'condition', when: { signal: 'x', op: '>', value: 1 }, timezone: 'Mars/Olympus' } }, 'trigger.timezone'],
  ['a negative cooldown', { trigger: { type: 'condition', when: { signal: 'x', op: '>', value: 1 }, cooldown_s: -1 } }, 'trigger.cooldown_s'],
  ['an empty all', { trigger: { type: 'condition', when: { all: [] } } }, 'trigger.when.all'],
  ['a run-outcome leaf with a bad task id', { trigger: { type: 'condition', when: { task_id: '../x', status: 'failed' } } }, 'trigger.when.task_id'],
] as [string, Record<string, unknown>, string][])('refuses %s with a 400 naming the field, and stores nothing', async (_what, extra, field) => {
  const id = uid('bad');
  const r = await tk.raw('POST', '/v1/tasks', { body: { ...body(id), ...extra } });
  expectProblem(r, 400);
  expect(r.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  expect((await refusal(tk.tasks.get(id))).status).toBe(404);
  const n = await sys.pool.query('SELECT count(*)::int AS n FROM task_history WHERE task_id = $1', [id]);
  expect(n.rows[0].n).toBe(0);
});

test('exponential retry settings are stored with their defaults; an openclaw agent with its defaults', async () => {
  const id = uid('expo');
  const created = await tk.tasks.create({
    ...body(id),
    agent: { type: 'openclaw', url: 'http://127.0.0.1:18789', token_env: 'OPENCLAW_HOOKS_TOKEN', prompt_template: 'digest {{date}}' },
    retry: { max_attempts: 4, initial_interval_s: 30 },
  });
  expect(created.definition.retry).toEqual({ max_attempts: 4, initial_interval_s: 30, backoff_coefficient: 2, maximum_interval_s: 3000 });
  expect(created.definition.agent).toEqual({ type: 'openclaw', url: 'http://127.0.0.1:18789', hooks_path: '/hooks', token_env: 'OPENCLAW_HOOKS_TOKEN', prompt_template: 'digest {{date}}', deliver: false });
  // A PATCH may switch the style: the whole retry object is replaced.
  const patched = await tk.tasks.update(id, { retry: { max_attempts: 2, backoff_seconds: [5] } });
  expect(patched.definition.retry).toEqual({ max_attempts: 2, backoff_seconds: [5] });
  await tk.tasks.delete(id);
});

test('POST /v1/runs/{run_id}/result: an answer outside the protocol is a 400 naming the field; an unknown run is a 404', async () => {
  const answer = { task_id: 'x', status: 'success', processed: 1, errors: [], summary: 'ok', next_action: null };
  const unknown = await refusal(tk.runs.reportResult('run/no-such-task/2026-01-01T00:00:00.000Z', answer as never));
  expect(unknown.status).toBe(404);
  expect(unknown.body.errors?.[0]?.field).toBe('run_id');
  for (const [bad, field] of [
    [{ ...answer, status: 'done' }, 'status'],
    [{ ...answer, processed: -1 }, 'processed'],
    [{ ...answer, summary: undefined }, 'summary'],
    [{ ...answer, attempt: 0 }, 'attempt'],
    [{ ...answer, verdict: 'fine' }, 'verdict'],
  ] as const) {
    const r = await tk.raw('POST', `/v1/runs/${encodeURIComponent('run/no-such-task/2026-01-01T00:00:00.000Z')}/result`, { body: bad });
    expectProblem(r, 400);
    expect(r.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  }
});

test('PATCH changes a task and validates the result; pause and resume are recorded; DELETE keeps history readable', async () => {
  const id = uid('edit');
  expect((await tk.call('createTask', { body: body(id, { tags: ['ops'] }) })).status).toBe(201);
  const patched = await tk.call('patchTask', { params: { id }, body: { trigger: { type: 'cron', expression: '0 30 15 * * 1-5', timezone: 'Asia/Shanghai' } } });
  expect(patched.status).toBe(200);
  expect(patched.body.version).toBe(2);
  expect(patched.body.definition).toMatchObject({ trigger: { expression: '0 30 15 * * 1-5' }, name: '每日舆情摘要' });
  expect(new Date(patched.body.next_fire_times[0]).getUTCHours()).toBe(7); // 15:30 Shanghai

  const bad = await refusal(tk.tasks.update(id, { retry: { max_attempts: 2, initial_interval_s: 10, maximum_interval_s: 5 } }));
  expect(bad.status).toBe(400);
  expect(bad.body.errors?.[0]?.field).toBe('retry.maximum_interval_s');
  expect((await tk.tasks.get(id)).version).toBe(2);

  const paused = await tk.tasks.pause(id);
  expect(paused).toMatchObject({ enabled: false, next_fire_times: [], next_run: null });
  const listed = await tk.tasks.list({ tag: 'ops', enabled: 'false' });
  expect(listed.tasks.map((t) => t.task_id)).toContain(id);
  const resumed = await tk.tasks.resume(id);
  expect(resumed.enabled).toBe(true);
  expect(resumed.next_fire_times).toHaveLength(5);

  const deleted = await tk.call('deleteTask', { params: { id } });
  expect(deleted.status).toBe(200);
  expect(deleted.body.deleted).toBe(true);
  const after = await tk.call('getTask', { params: { id } });
  expect(after.status).toBe(200);
  expect(after.body.history.map((h) => h.action)).toEqual(['create', 'update', 'pause', 'resume', 'delete']);
  expect((await refusal(tk.tasks.update(id, { name: 'x' }))).status).toBe(409);
  expect((await tk.tasks.list({ tag: 'ops' })).tasks.map((t) => t.task_id)).not.toContain(id);
  // The history is append-only for the application role.
  await expect(sys.pool.query('DELETE FROM task_history WHERE task_id = $1', [id])).rejects.toThrow();
});

test('PATCH with null removes an optional field; the rest of the definition stays', async () => {
  const id = uid('unset');
  await tk.tasks.create(body(id, { alert: { url: 'https://alert.example/hook' }, calendar: { skip_weekends: true } }));
  const patched = await tk.tasks.update(id, { alert: null, calendar: null });
  expect(patched.version).toBe(2);
  expect(patched.definition).not.toHaveProperty('alert');
  expect(patched.definition).not.toHaveProperty('calendar');
  expect(patched.definition).toMatchObject({ name: '每日舆情摘要', trigger: { expression: '0 17 * * 1-5' } });
});

test('trigger runs a paused task now with its own run id; the run is readable with its result and log', async () => {
  const id = uid('now');
  expect((await tk.call('createTask', { body: body(id, { enabled: false, delivery: [] }) })).status).toBe(201);
  const t = await tk.call('triggerTask', { params: { id } });
  expect(t.status).toBe(202);
  expect(t.body.run_id).toMatch(new RegExp(`^run/${id}/manual/\\d{4}-`));
  // The url is the run's route, its id percent-encoded, and the Location too.
  expect(t.body.url).toBe(`/v1/runs/${encodeURIComponent(t.body.run_id)}`);
  expect(t.headers.get('location')).toBe(t.body.url);
  const run = await eventually(async () => {
    const r = await tk.runs.get(t.body.run_id);
    return r.status === 'success' ? r : undefined;
  });
  expect(run).toMatchObject({ task_id: id, trigger: 'manual', attempt: 1, processed: 128, error_count: 2, summary: 'all good', needs_attention: false });
  expect(run.log.map((l) => l.status)).toEqual(['running', 'success']);
  // The agent got the key from the named variable, and the time context in its system prompt.
  const req = llm.received.find((r) => r.body.includes(id))!;
  expect(req.headers.authorization).toBe('Bearer sk-test-123');
  const sent = JSON.parse(req.body);
  expect(sent.messages[0].content).toContain('(Asia/Shanghai)');
  expect(sent.messages[0].content).toContain('someone triggered it by hand');
  expect(sent.messages[1].content).toMatch(/^请生成摘要 \d{4}-\d{2}-\d{2}$/);
  const listed = await tk.tasks.runs(id);
  expect(listed.runs.map((r) => r.run_id)).toEqual([t.body.run_id]);
  expect((await tk.tasks.get(id)).status).toBe('success');
});

test('GET /v1/schedules/preview lists UTC fire times after `from` under the time-zone policy', async () => {
  const r = await tk.call('previewSchedule', { query: { cron: '30 2 * * *', timezone: 'America/New_York', from: '2026-03-07T12:00:00Z', count: 2 } });
  expect(r.status).toBe(200);
  expect(r.body.fire_times).toEqual(['2026-03-08T07:00:00.000Z', '2026-03-09T06:30:00.000Z']);
  const bad = await refusal(tk.schedules.preview({ cron: 'nope', timezone: 'Nowhere/Land' }));
  expect(bad.status).toBe(400);
  expect(bad.body.errors?.map((e) => e.field).sort()).toEqual(['cron', 'timezone']);
});

test('/openapi.json covers the task routes', async () => {
  const doc = (await tk.call('openapi')).body;
  expect(Object.keys(doc.paths as Record<string, unknown>)).toEqual(expect.arrayContaining(['/v1/tasks', '/v1/tasks/{id}', '/v1/tasks/{id}/trigger', '/v1/runs/{id}', '/v1/runs/{id}/result', '/v1/schedules/preview']));
});
