/**
 * Structured logs and request ids: a caller's X-Request-Id (when acceptable) or a generated
 * one comes back on the answer, and every log line of that request carries it, down to the
 * writer activities that stored its event or intent transition.
 */
import { startTestSystem, TestSystem, uniqueSessionId, eventually } from '../support';

type Line = Record<string, any>;
const lines: Line[] = [];
let sys: TestSystem;
beforeAll(async () => {
  sys = await startTestSystem({ logDestination: { write: (s: string) => void lines.push(JSON.parse(s)) } });
});
afterAll(async () => {
  await sys?.stop();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const of = (id: string) => lines.filter((l) => l.request_id === id);

test('an append with X-Request-Id gets it back, and its request and writer log lines carry it', async () => {
  const sid = uniqueSessionId('reqid');
  await sys.tk.createSession({ session_id: sid });
  const rid = `append-${Date.now()}`;
  const r = await sys.tk.call('appendEvent', { params: { id: sid }, body: { type: 'USER_INPUT', content: { input: 'hi' } }, headers: { 'X-Request-Id': rid } });
  expect(r.status).toBe(201);
  expect(r.headers.get('x-request-id')).toBe(rid);
  const mine = await eventually(async () => (of(rid).some((l) => l.msg === 'request') ? of(rid) : undefined));
  // The access line: JSON with the contract path, status, duration and a level.
  const access = mine.find((l) => l.msg === 'request')!;
  expect(access).toMatchObject({ method: 'POST', route: '/v1/sessions/:id/events', status: 201, level: 30, service: 'timekeeper' });
  expect(typeof access.duration_ms).toBe('number');
  expect(typeof access.time).toBe('string');
  // The writer activity's line for the stored event, in the worker, with the same id.
  const stored = mine.find((l) => l.msg === 'event stored');
  expect(stored).toMatchObject({ session_id: sid, seq: r.body.seq, event_id: r.body.event_id, type: 'USER_INPUT', component: 'writer', workflow_id: `session/${sid}` });
  // Nothing of another request is tagged with this id.
  expect(mine.every((l) => l.msg === 'request' || l.session_id === sid)).toBe(true);
});

test('an intent create and transition carry their request ids into the intent writer log', async () => {
  const eventId = `REQID-${process.pid}-${Date.now()}`;
  await sys.tk.intents.create({ event_id: eventId, domain: 'ops', action: 'log it' }, { headers: { 'x-request-id': `create-${eventId}` } });
  await sys.tk.intents.transition(eventId, { status: 'done' }, { headers: { 'x-request-id': `done-${eventId}` } });
  const created = await eventually(async () => of(`create-${eventId}`).find((l) => l.msg === 'intent transition stored'));
  const done = await eventually(async () => of(`done-${eventId}`).find((l) => l.msg === 'intent transition stored'));
  expect(created).toMatchObject({ event_id: eventId, seq: 1, from: null, to: 'requested', actor: 'agent' });
  expect(done).toMatchObject({ event_id: eventId, seq: 2, from: 'requested', to: 'done', actor: 'agent' });
});

test('without X-Request-Id, or with an unacceptable one, a new id is generated and returned', async () => {
  const none = await sys.tk.raw('GET', '/healthz');
  expect(none.headers.get('x-request-id')).toMatch(UUID);
  for (const bad of ['has spaces in it', 'x'.repeat(129), 'quote"s', 'new\u00e9line']) {
    const r = await sys.tk.raw('GET', '/healthz', { headers: { 'x-request-id': encodeURIComponent(bad) === bad ? bad : bad } }).catch(() => undefined);
    if (!r) continue; // fetch itself refuses a header value it cannot send
    expect(r.headers.get('x-request-id')).toMatch(UUID);
  }
  const ok = await sys.tk.raw('GET', '/healthz', { headers: { 'x-request-id': 'trace-0af7651916cd43dd' } });
  expect(ok.headers.get('x-request-id')).toBe('trace-0af7651916cd43dd');
  // Refusals carry it too, and are logged with it.
  const refused = await sys.tk.raw('GET', '/v1/sessions/no_such_session_xyz', { headers: { 'x-request-id': 'refused-1' } });
  expect(refused.status).toBe(404);
  expect(refused.headers.get('x-request-id')).toBe('refused-1');
  await eventually(async () => of('refused-1').find((l) => l.msg === 'request' && l.status === 404 && l.route === '/v1/sessions/:id'));
});
