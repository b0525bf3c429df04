/** The task routes over HTTP against the real system: create, read, change, pause, trigger, delete, preview, refusals. */
import { call, startTestSystem, TestSystem } from '../support/system';
import { chatAnswer, eventually, fakeServer, FakeServer, protocolAnswer } from '../support/fake-services';

let sys: TestSystem;
let llm: FakeServer;
let counter = 0;
const uid = (p: string) => `${p}-${process.pid}-${Date.now().toString(36)}-${counter++}`;

beforeAll(async () => {
  sys = await startTestSystem({ config: { outboundAllowHosts: ['127.0.0.1'] }, secrets: { LLM_API_KEY: 'sk-test-123' } });
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

const agent = () => ({ type: 'openai', base_url: `${llm.url}/v1`, model: 'qwen2.5', api_key_env: 'LLM_API_KEY', persona: '舆情分析师', prompt_template: '请生成摘要 {{date}}' });
const body = (id: string, extra: Record<string, unknown> = {}) => ({
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
  const created = await call(sys.baseUrl, 'POST', '/v1/tasks', body(id));
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ task_id: id, status: 'pending', enabled: true, version: 1 });
  expect(created.body.definition).toMatchObject({ timeout_s: 900, overlap: 'skip', misfire: 'run_latest', memory_runs: 3, auto_disable_after: 10, priority: 'default' });
  expect(created.body.definition.delivery).toEqual([{ type: 'webhook', url: 'https://robot.example/hook', format: 'markdown' }]);

  const got = await call(sys.baseUrl, 'GET', `/v1/tasks/${id}`);
  expect(got.status).toBe(200);
  expect(got.body.trigger_text).toBe('cron "0 17 * * 1-5" in Asia/Shanghai: at 17:00 on Monday to Friday');
  expect(got.body.next_fire_times).toHaveLength(5);
  for (const t of got.body.next_fire_times as string[]) {
    const d = new Date(t);
    expect(d.getUTCHours()).toBe(9); // 17:00 in Shanghai
    expect(d.getUTCMinutes()).toBe(0);
    expect([1, 2, 3, 4, 5]).toContain(d.getUTCDay());
  }
  expect(got.body.next_run).toBe(got.body.next_fire_times[0]);
  expect(got.body.history.map((h: { action: string }) => h.action)).toEqual(['create']);
  // The key is named, never stored.
  expect(JSON.stringify(got.body)).not.toContain('sk-test-123');

  const dup = await call(sys.baseUrl, 'POST', '/v1/tasks', body(id));
  expect(dup.status).toBe(409);
  expect(dup.body.type).toMatch(/task_exists$/);
});

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
  ['a backoff list longer than max_attempts - 1', { retry: { max_attempts: 2, backoff_seconds: [1, 2] } }, 'retry.backoff_seconds'],
  ['a negative backoff', { retry: { max_attempts: 3, backoff_seconds: [1, -2] } }, 'retry.backoff_seconds.1'],
  ['an unknown template variable', { agent: { ...({} as object), type: 'webhook', url: 'https://a.example/agent', prompt_template: 'hi {{weather}}' } }, 'agent.prompt_template'],
  ['a timeout out of range', { timeout_s: 0 }, 'timeout_s'],
  ['a timeout too long', { timeout_s: 10 ** 9 }, 'timeout_s'],
  ['an at time in the past', { trigger: { type: 'at', at: '2001-01-01T00:00:00Z' } }, 'trigger.at'],
  ['an unknown field', { colour: 'blue' }, 'colour'],
])('refuses %s with a 400 naming the field, and stores nothing', async (_what, extra, field) => {
  const id = uid('bad');
  const r = await call(sys.baseUrl, 'POST', '/v1/tasks', body(id, extra));
  expect(r.status).toBe(400);
  expect(r.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  expect((await call(sys.baseUrl, 'GET', `/v1/tasks/${id}`)).status).toBe(404);
  const n = await sys.pool.query('SELECT count(*)::int AS n FROM task_history WHERE task_id = $1', [id]);
  expect(n.rows[0].n).toBe(0);
});

test('PATCH changes a task and validates the result; pause and resume are recorded; DELETE keeps history readable', async () => {
  const id = uid('edit');
  expect((await call(sys.baseUrl, 'POST', '/v1/tasks', body(id, { tags: ['ops'] }))).status).toBe(201);
  const patched = await call(sys.baseUrl, 'PATCH', `/v1/tasks/${id}`, { trigger: { type: 'cron', expression: '0 30 15 * * 1-5', timezone: 'Asia/Shanghai' } });
  expect(patched.status).toBe(200);
  expect(patched.body.version).toBe(2);
  expect(patched.body.definition.trigger.expression).toBe('0 30 15 * * 1-5');
  expect(patched.body.definition.name).toBe('每日舆情摘要');
  expect(new Date(patched.body.next_fire_times[0]).getUTCHours()).toBe(7); // 15:30 Shanghai

  const bad = await call(sys.baseUrl, 'PATCH', `/v1/tasks/${id}`, { retry: { max_attempts: 1, backoff_seconds: [5] } });
  expect(bad.status).toBe(400);
  expect(bad.body.errors[0].field).toBe('retry.backoff_seconds');
  expect((await call(sys.baseUrl, 'GET', `/v1/tasks/${id}`)).body.version).toBe(2);

  const paused = await call(sys.baseUrl, 'POST', `/v1/tasks/${id}/pause`);
  expect(paused.body).toMatchObject({ enabled: false, next_fire_times: [], next_run: null });
  const listed = await call(sys.baseUrl, 'GET', `/v1/tasks?tag=ops&enabled=false`);
  expect(listed.body.tasks.map((t: { task_id: string }) => t.task_id)).toContain(id);
  const resumed = await call(sys.baseUrl, 'POST', `/v1/tasks/${id}/resume`);
  expect(resumed.body.enabled).toBe(true);
  expect(resumed.body.next_fire_times).toHaveLength(5);

  const deleted = await call(sys.baseUrl, 'DELETE', `/v1/tasks/${id}`);
  expect(deleted.status).toBe(200);
  expect(deleted.body.deleted).toBe(true);
  const after = await call(sys.baseUrl, 'GET', `/v1/tasks/${id}`);
  expect(after.status).toBe(200);
  expect(after.body.history.map((h: { action: string }) => h.action)).toEqual(['create', 'update', 'pause', 'resume', 'delete']);
  expect((await call(sys.baseUrl, 'PATCH', `/v1/tasks/${id}`, { name: 'x' })).status).toBe(409);
  expect((await call(sys.baseUrl, 'GET', '/v1/tasks?tag=ops')).body.tasks.map((t: { task_id: string }) => t.task_id)).not.toContain(id);
  // The history is append-only for the application role.
  await expect(sys.pool.query('DELETE FROM task_history WHERE task_id = $1', [id])).rejects.toThrow();
});

test('trigger runs a paused task now with its own run id; the run is readable with its result and log', async () => {
  const id = uid('now');
  expect((await call(sys.baseUrl, 'POST', '/v1/tasks', body(id, { enabled: false, delivery: [] }))).status).toBe(201);
  const t = await call(sys.baseUrl, 'POST', `/v1/tasks/${id}/trigger`);
  expect(t.status).toBe(202);
  expect(t.body.run_id).toMatch(new RegExp(`^run/${id}/manual/\\d{4}-`));
  const run = await eventually(async () => {
    const r = await call(sys.baseUrl, 'GET', t.body.url);
    return r.status === 200 && r.body.status === 'success' ? r.body : undefined;
  });
  expect(run).toMatchObject({ task_id: id, trigger: 'manual', attempt: 1, processed: 128, error_count: 2, summary: 'all good', needs_attention: false });
  expect(run.log.map((l: { status: string }) => l.status)).toEqual(['running', 'success']);
  // The agent got the key from the named variable, and the time context in its system prompt.
  const req = llm.received.find((r) => r.body.includes(id))!;
  expect(req.headers.authorization).toBe('Bearer sk-test-123');
  const sent = JSON.parse(req.body);
  expect(sent.messages[0].content).toContain('(Asia/Shanghai)');
  expect(sent.messages[0].content).toContain('someone triggered it by hand');
  expect(sent.messages[1].content).toMatch(/^请生成摘要 \d{4}-\d{2}-\d{2}$/);
  const listed = await call(sys.baseUrl, 'GET', `/v1/tasks/${id}/runs`);
  expect(listed.body.runs.map((r: { run_id: string }) => r.run_id)).toEqual([t.body.run_id]);
  expect((await call(sys.baseUrl, 'GET', `/v1/tasks/${id}`)).body.status).toBe('success');
});

test('GET /v1/schedules/preview lists UTC fire times after `from` under the time-zone policy', async () => {
  const r = await call(sys.baseUrl, 'GET', `/v1/schedules/preview?cron=${encodeURIComponent('30 2 * * *')}&timezone=America/New_York&from=2026-03-07T12:00:00Z&count=2`);
  expect(r.status).toBe(200);
  expect(r.body.fire_times).toEqual(['2026-03-08T07:00:00.000Z', '2026-03-09T06:30:00.000Z']);
  const bad = await call(sys.baseUrl, 'GET', `/v1/schedules/preview?cron=nope&timezone=Nowhere/Land`);
  expect(bad.status).toBe(400);
  expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['cron', 'timezone']);
});

test('/openapi.json covers the task routes', async () => {
  const doc = (await call(sys.baseUrl, 'GET', '/openapi.json')).body;
  expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/tasks', '/v1/tasks/{id}', '/v1/tasks/{id}/trigger', '/v1/runs/{id}', '/v1/schedules/preview']));
});
