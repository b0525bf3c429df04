/**
 * Stored data is exactly what was sent, or refused: bytes that are not UTF-8 in a query
 * string or a form body are a 400 naming the field (never replaced with U+FFFD), and a
 * repeated parameter is a 400 that says it is repeated. Nothing is written for either.
 */
import { startTestSystem, TestSystem, uniqueSessionId } from '../support';

let sys: TestSystem;
beforeAll(async () => {
  sys = await startTestSystem();
});
afterAll(async () => {
  await sys?.stop();
});

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

async function eventCount(id: string): Promise<number> {
  const { rows } = await sys.pool.query('SELECT count(*)::int AS n FROM timeline_events WHERE session_id = $1', [id]);
  return rows[0].n;
}

function expect400(r: { status: number; body: { type: string; errors?: { field: string; reason: string }[] } }, field: string, reason: RegExp): void {
  expect(r.status).toBe(400);
  expect(r.body.type).toMatch(/validation_error$/);
  expect(r.body.errors?.[0]?.field).toBe(field);
  expect(r.body.errors?.[0]?.reason).toMatch(reason);
}

describe('invalid UTF-8', () => {
  test('a seed append with %FF%FE in its query content is refused naming content, and nothing is stored', async () => {
    const id = uniqueSessionId('utf8');
    await sys.tk.seed.init(id);
    const r = await sys.tk.raw('POST', `/timeline/append?session_id=${id}&event_type=USER_INPUT&content=%22%FF%FE%22`);
    expect400(r, 'content', /not valid UTF-8/);
    expect(await eventCount(id)).toBe(1);
  });

  test('the same bytes percent-encoded in a form body, and raw in a form body, are refused too', async () => {
    const id = uniqueSessionId('utf8_form');
    await sys.tk.seed.init(id);
    const escaped = await sys.tk.raw('POST', '/timeline/append', { headers: FORM, body: `session_id=${id}&event_type=USER_INPUT&content=%22%FF%FE%22` });
    expect400(escaped, 'content', /not valid UTF-8/);
    const rawBytes = new Uint8Array([...Buffer.from(`session_id=${id}&event_type=USER_INPUT&content=%22`), 0xff, 0xfe, ...Buffer.from('%22')]);
    const raw = await sys.tk.raw('POST', '/timeline/append', { headers: FORM, body: rawBytes });
    expect400(raw, 'body', /not valid UTF-8/);
    expect(await eventCount(id)).toBe(1);
  });

  test('valid multi-byte UTF-8 in query and form is stored exactly', async () => {
    const id = uniqueSessionId('utf8_ok');
    await sys.tk.seed.init(id);
    const q = await sys.tk.raw('POST', `/timeline/append?session_id=${id}&event_type=USER_INPUT&content=${encodeURIComponent('{"input":"北京 🌧"}')}`);
    expect(q.status).toBe(200);
    const f = await sys.tk.raw('POST', '/timeline/append', { headers: FORM, body: `session_id=${id}&event_type=USER_INPUT&content=${encodeURIComponent('"天气"')}` });
    expect(f.status).toBe(200);
    const events = await sys.tk.events(id);
    expect(events.events.slice(1).map((e) => e.content)).toEqual([{ input: '北京 🌧' }, '天气']);
  });

  test('a /v1 read with a non-UTF-8 query value is refused naming the parameter', async () => {
    const id = uniqueSessionId('utf8_v1');
    await sys.tk.createSession({ session_id: id });
    expect400(await sys.tk.raw('GET', `/v1/sessions?agent_id=%C3%28`), 'agent_id', /not valid UTF-8/);
  });
});

describe('repeated parameters', () => {
  test('a repeated query parameter is refused saying it is repeated, on both surfaces', async () => {
    expect400(await sys.tk.raw('GET', '/timeline/get?session_id=a&session_id=b'), 'session_id', /given 2 times/);
    const id = uniqueSessionId('rep');
    await sys.tk.createSession({ session_id: id });
    expect400(await sys.tk.raw('GET', `/v1/sessions/${id}/events?limit=1&limit=2`), 'limit', /given 2 times/);
  });

  test('a repeated form field is refused, and nothing is stored', async () => {
    const id = uniqueSessionId('rep_form');
    await sys.tk.seed.init(id);
    const r = await sys.tk.raw('POST', '/timeline/append', { headers: FORM, body: `session_id=${id}&event_type=USER_INPUT&content=1&content=2` });
    expect400(r, 'content', /given 2 times/);
    expect(await eventCount(id)).toBe(1);
  });
});
