/**
 * The input gate (api/input-gate.ts) on every surface, with the cases of issue 16: invalid
 * UTF-8 bytes, lone surrogates, NUL and duplicate member names are refused with 400 naming
 * the field path and the rule, nothing is stored, and no id is wedged (a clean request with
 * the same id works right after). Refusals state the rule that failed (api/contract.ts).
 */
import type { RawResponse, TimekeeperClient } from '../../sdk/client';
import { startTestSystem, TestSystem, uniqueSessionId } from '../support';

let sys: TestSystem;
let tk: TimekeeperClient;
const P = `hostile-${process.pid}-`;
let n = 0;
const id = (what: string) => `${P}${what}-${n++}`;

beforeAll(async () => {
  // A short write deadline: a request that reaches a wedged workflow shows up as a 503 within seconds.
  sys = await startTestSystem({ config: { writeTimeoutMs: 8_000, outboundAllowHosts: ['127.0.0.1'] } });
  tk = sys.tk.with({ timeoutMs: 20_000 });
});
afterAll(async () => {
  await sys?.stop();
});

function expectRefusal(r: RawResponse, field: string, rule: RegExp, status = 400): void {
  const e = r.body?.errors?.[0];
  if (r.status !== status || e?.field !== field || !rule.test(e?.reason ?? '')) {
    throw new Error(`expected ${status} naming ${field} (${rule}), got ${r.status} ${JSON.stringify(r.body).slice(0, 500)}`);
  }
  expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
}

const rows = async (sql: string, args: unknown[]) => (await sys.pool.query(sql, args)).rows;
const intentRows = (eventId: string) => rows('SELECT event_id FROM intents WHERE event_id = $1', [eventId]);
const taskRows = (taskId: string) => rows('SELECT task_id FROM task_history WHERE task_id = $1', [taskId]);
const signalRows = (signalId: string) => rows('SELECT signal_id FROM signals WHERE signal_id = $1', [signalId]);

const LONE = /lone surrogate \\udc00 .*well-formed Unicode/;
const NUL = /U\+0000 \(NUL\).*must not contain NUL/;
const UTF8 = /not valid UTF-8 \(byte 0xff/;
const DUP = /given twice in one object; member names must be unique/;

const intent = (eventId: string, extra: Record<string, unknown> = {}) => ({ event_id: eventId, domain: 'test', action: 'poison-check', ...extra });
const webhookTask = (taskId: string, agent: Record<string, unknown> = {}) => ({
  task_id: taskId,
  name: 'hostile',
  trigger: { type: 'interval', every_s: 3600 },
  agent: { type: 'webhook', url: 'http://127.0.0.1:9/agent', prompt_template: 'hello', ...agent },
  enabled: false,
});

describe('intents: a poison value is refused at once and wedges nothing', () => {
  test('a lone surrogate in a create note: 400 naming note; the id stays free (GET 404, a clean create 201)', async () => {
    const eid = id('create');
    expectRefusal(await tk.raw('POST', '/api/events', { body: intent(eid, { note: '\udc00' }) }), 'note', LONE);
    expect(await intentRows(eid)).toEqual([]);
    expect((await tk.raw('GET', `/api/events/${eid}`)).status).toBe(404);
    const clean = await tk.raw('POST', '/api/events', { body: intent(eid, { note: 'clean' }) });
    expect(clean.status).toBe(201);
    expect(clean.body.note).toBe('clean');
  });

  test('a lone surrogate or NUL in a PATCH: 400 naming the field; later PATCHes of the intent work', async () => {
    const eid = id('patch');
    expect((await tk.raw('POST', '/api/events', { body: intent(eid) })).status).toBe(201);
    expectRefusal(await tk.raw('PATCH', `/api/events/${eid}/status`, { body: { status: 'in-progress', note: '\udc00' } }), 'note', LONE);
    expectRefusal(await tk.raw('PATCH', `/api/events/${eid}/status`, { body: { status: 'in-progress', data: { step: { name: 'a\u0000' } } } }), 'data.step.name', NUL);
    const ok = await tk.raw('PATCH', `/api/events/${eid}/status`, { body: { status: 'in-progress', note: 'clean' } });
    expect(ok.status).toBe(200);
    expect(ok.body.transition.seq).toBe(2);
    expect((await rows('SELECT count(*)::int AS n FROM intent_transitions WHERE event_id = $1', [eid]))[0].n).toBe(2);
  });

  test('a lone surrogate in action, a tag or a data key: 400 naming it, nothing stored', async () => {
    for (const [extra, field] of [
      [{ action: 'a\udc00' }, 'action'],
      [{ tags: ['ok', '\udc00'] }, 'tags.1'],
      [{ data: { ['k\udc00']: 1 } }, 'data'],
    ] as const) {
      const eid = id('fields');
      expectRefusal(await tk.raw('POST', '/api/events', { body: intent(eid, extra) }), field, /lone surrogate/);
      expect(await intentRows(eid)).toEqual([]);
    }
  });
});

describe('tasks and signals: a poison value is 400 naming the field, not a 500', () => {
  test.each([
    ['agent.prompt_template', { prompt_template: 'a\u0000b' }, NUL],
    ['agent.prompt_template', { prompt_template: 'a\udc00b' }, LONE],
    ['agent.secret', { secret: 'secret-\u0000-value' }, NUL],
    ['agent.secret', { secret: 'secret-\udc00-value' }, LONE],
  ])('POST /v1/tasks with a hostile %s', async (field, agent, rule) => {
    const taskId = id('task');
    expectRefusal(await tk.raw('POST', '/v1/tasks', { body: webhookTask(taskId, agent) }), field, rule);
    expect(await taskRows(taskId)).toEqual([]);
  });

  test('alert.secret on create, and every hostile field on PATCH, are refused; the task is unchanged', async () => {
    const taskId = id('task');
    const alert = { type: 'webhook', url: 'http://127.0.0.1:9/alert', secret: 'alert-\u0000-secret' };
    expectRefusal(await tk.raw('POST', '/v1/tasks', { body: { ...webhookTask(taskId), alert } }), 'alert.secret', NUL);
    expect((await tk.raw('POST', '/v1/tasks', { body: webhookTask(taskId) })).status).toBe(201);
    const before = (await taskRows(taskId)).length;
    expectRefusal(await tk.raw('PATCH', `/v1/tasks/${taskId}`, { body: { agent: { type: 'webhook', url: 'http://127.0.0.1:9/a', prompt_template: '\udc00' } } }), 'agent.prompt_template', LONE);
    expectRefusal(await tk.raw('PATCH', `/v1/tasks/${taskId}`, { body: { alert: { ...alert, secret: 'alert-\udc00-secret' } } }), 'alert.secret', LONE);
    expect((await taskRows(taskId)).length).toBe(before);
    expect((await tk.raw('PATCH', `/v1/tasks/${taskId}`, { body: { name: 'clean' } })).status).toBe(200);
  });

  test('a /v1/signals value or field with NUL or a lone surrogate is 400 naming it, nothing stored', async () => {
    for (const [body, field, rule] of [
      [{ value: 'a\u0000' }, 'value', NUL],
      [{ value: '\udc00' }, 'value', LONE],
      [{ values: { host: 'web\u0000' } }, 'values.host', NUL],
    ] as const) {
      const signalId = id('sig');
      expectRefusal(await tk.raw('POST', '/v1/signals', { body: { name: 'hostile_check', signal_id: signalId, ...body } }), field, rule);
      expect(await signalRows(signalId)).toEqual([]);
    }
  });
});

describe('bytes and duplicate names', () => {
  const bytes = (before: string, after: string) => Buffer.concat([Buffer.from(before), Buffer.from([0xff, 0x28]), Buffer.from(after)]);

  test('invalid UTF-8 in a JSON string is refused naming that field, on every JSON surface; nothing stored', async () => {
    const taskId = id('task');
    const task = JSON.stringify(webhookTask(taskId)).replace('"name":"hostile"', '"name":"ab\u0001cd"').split('\u0001');
    expectRefusal(await tk.raw('POST', '/v1/tasks', { body: bytes(task[0], task[1]) }), 'name', UTF8);
    expect(await taskRows(taskId)).toEqual([]);

    const eid = id('utf8');
    expectRefusal(await tk.raw('POST', '/api/events', { body: bytes(`{"event_id":"${eid}","domain":"test","action":"a`, 'b"}') }), 'action', UTF8);
    expect(await intentRows(eid)).toEqual([]);

    const sid = uniqueSessionId('hostile');
    expect((await tk.raw('POST', '/v1/sessions', { body: { session_id: sid } })).status).toBe(201);
    expectRefusal(await tk.raw('POST', `/v1/sessions/${sid}/events`, { body: bytes('{"type":"USER_INPUT","content":{"input":["ok","', '"]}}') }), 'content.input.1', UTF8);
    expect((await rows('SELECT count(*)::int AS n FROM timeline_events WHERE session_id = $1', [sid]))[0].n).toBe(1);

    // Outside any string the body as a whole is refused.
    expectRefusal(await tk.raw('POST', '/v1/signals', { body: bytes('{"name":"x"', '}') }), 'body', UTF8);
  });

  test('a duplicate member name is refused naming it, at the top and nested; the first value is not stored either', async () => {
    const eid = id('dup');
    const body = `{"event_id":"${eid}","event_id":"${eid}-b","domain":"test","action":"a"}`;
    expectRefusal(await tk.raw('POST', '/api/events', { body }), 'event_id', DUP);
    expect(await intentRows(eid)).toEqual([]);
    expect(await intentRows(`${eid}-b`)).toEqual([]);
    const nested = `{"event_id":"${eid}","domain":"test","action":"a","data":{"x":{"k":1,"\\u006b":2}}}`;
    expectRefusal(await tk.raw('POST', '/api/events', { body: nested }), 'data.x.k', DUP);
    const signalId = id('sig');
    expectRefusal(await tk.raw('POST', '/v1/signals', { body: `{"name":"a","name":"b","signal_id":"${signalId}"}` }), 'name', DUP);
    expect(await signalRows(signalId)).toEqual([]);
  });

  test('seed surface: NUL in a query parameter and duplicates inside the content text are refused', async () => {
    const sid = uniqueSessionId('hostile');
    await tk.seed.init(sid);
    const seed = (q: string) => tk.raw('POST', `/timeline/append?session_id=${sid}&event_type=USER_INPUT&${q}`);
    expectRefusal(await seed(`content=%7B%7D&idempotency_key=a%00b`), 'idempotency_key', NUL);
    expectRefusal(await seed(`content=${encodeURIComponent('{"a":1,"a":2}')}`), 'content.a', DUP);
    expectRefusal(await seed(`content=${encodeURIComponent('{"a":"\\udc00"}')}`), 'content.a', LONE);
    expect((await rows('SELECT count(*)::int AS n FROM timeline_events WHERE session_id = $1', [sid]))[0].n).toBe(1);
  });

  test('a NUL in a path parameter is refused naming it', async () => {
    expectRefusal(await tk.raw('GET', '/api/events/a%00b'), 'eventId', NUL);
  });
});

describe('messages state the rule that failed', () => {
  test('a number where a string belongs says so, not "is required"', async () => {
    const r = await tk.raw('POST', '/v1/tasks', { body: { ...webhookTask('x'), task_id: 42 } });
    expectRefusal(r, 'task_id', /^must be a string, not a number$/);
    expectRefusal(await tk.raw('POST', '/api/events', { body: intent('x', { event_id: 7 }) }), 'event_id', /^must be a string, not a number$/);
    expectRefusal(await tk.raw('POST', '/v1/signals', { body: { name: 5 } }), 'name', /^must be a string, not a number$/);
    expectRefusal(await tk.raw('POST', '/api/events', { body: { domain: 'test', action: 'a' } }), 'event_id', /^is required$/);
  });

  test('a cron over 200 characters and a 4,001-character note state the length rule', async () => {
    const cron = await tk.raw('POST', '/v1/tasks', { body: { ...webhookTask(id('task')), trigger: { type: 'cron', expression: '*'.repeat(201) } } });
    expectRefusal(cron, 'trigger.expression', /^must have at most 200 characters \(this one has 201\)$/);
    const note = await tk.raw('POST', '/api/events', { body: intent(id('note'), { note: 'n'.repeat(4001) }) });
    expectRefusal(note, 'note', /^must have at most 4000 characters \(this one has 4001\)$/);
  });
});
