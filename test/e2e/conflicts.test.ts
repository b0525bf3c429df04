/**
 * The conflict refusals, by error code and surface, through the typed client: each is a
 * problem whose type ends in its code, names the field, and writes nothing. /v1 answers
 * them with 409; the seed endpoints keep the seed's 400 for the refusals the seed had.
 */
import { randomUUID } from 'node:crypto';
import { ProblemReply, refusal, uniqueSessionId, useTestSystem } from '../support';

const t = useTestSystem();

async function rows(id: string): Promise<{ sessions: number; events: number }> {
  const s = await t.sys.pool.query('SELECT count(*)::int AS n FROM timeline_sessions WHERE session_id = $1', [id]);
  const e = await t.sys.pool.query('SELECT count(*)::int AS n FROM timeline_events WHERE session_id = $1', [id]);
  return { sessions: s.rows[0].n, events: e.rows[0].n };
}

/** A problem of `status` whose type is exactly `…/problems/<code>`, naming `field`. */
function expectConflict(r: ProblemReply, status: number, code: string, field: string): void {
  expect({ status: r.status, type: r.body.type, field: r.body.errors?.[0]?.field }).toEqual({
    status,
    type: `https://timekeeper.dev/problems/${code}`,
    field,
  });
  expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(r.body.status).toBe(status);
  expect(r.body.code).toBe(status);
  expect(r.error.errorCode).toBe(code);
}

async function v1Session(): Promise<string> {
  const id = uniqueSessionId('conflict');
  await t.tk.createSession({ session_id: id });
  return id;
}

async function seedSession(): Promise<string> {
  const id = uniqueSessionId('conflict_seed');
  await t.tk.seed.init(id);
  return id;
}

describe('idempotency_key reused with other content', () => {
  test('/v1: 409 idempotency_key_reused, for other content and for another type', async () => {
    const id = await v1Session();
    const first = await t.tk.append(id, { type: 'USER_INPUT', content: { input: 'a' }, idempotency_key: 'k-1' });
    const before = await rows(id);
    expectConflict(await refusal(t.tk.append(id, { type: 'USER_INPUT', content: { input: 'b' }, idempotency_key: 'k-1' })), 409, 'idempotency_key_reused', 'idempotency_key');
    expectConflict(await refusal(t.tk.append(id, { type: 'LLM_RESPONSE', content: { input: 'a' }, idempotency_key: 'k-1' })), 409, 'idempotency_key_reused', 'idempotency_key');
    // /end with a key an append used: other event, same key.
    expectConflict(await refusal(t.tk.end(id, { reason: 'bye', idempotency_key: 'k-1' })), 409, 'idempotency_key_reused', 'idempotency_key');
    expect(await rows(id)).toEqual(before);
    expect((await t.tk.session(id)).status).toBe('open');
    // The stored event is untouched and a faithful retry still gets it.
    const retry = await t.tk.call('appendEvent', { params: { id }, body: { type: 'USER_INPUT', content: { input: 'a' }, idempotency_key: 'k-1' } });
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ deduplicated: true, event_id: first.event_id, seq: first.seq });
  });

  test('seed: 400 idempotency_key_reused', async () => {
    const id = await seedSession();
    const first = await t.tk.seed.append({ session_id: id, event_type: 'USER_INPUT', content: '{"input":"a"}', idempotency_key: 'k-1' });
    const before = await rows(id);
    const r = await refusal(t.tk.seed.append({ session_id: id, event_type: 'USER_INPUT', content: '{"input":"b"}', idempotency_key: 'k-1' }));
    expectConflict(r, 400, 'idempotency_key_reused', 'idempotency_key');
    expect(await rows(id)).toEqual(before);
    const retry = await t.tk.seed.append({ session_id: id, event_type: 'USER_INPUT', content: '{"input":"a"}', idempotency_key: 'k-1' });
    expect(retry.data).toEqual(first.data);
  });
});

describe('event_id reused', () => {
  test('/v1: 409 event_id_conflict for other content, and for the same id in another session', async () => {
    const id = await v1Session();
    const eventId = randomUUID();
    await t.tk.append(id, { type: 'USER_INPUT', content: { input: 'mine' }, event_id: eventId });
    const before = await rows(id);
    expectConflict(await refusal(t.tk.append(id, { type: 'USER_INPUT', content: { input: 'other' }, event_id: eventId })), 409, 'event_id_conflict', 'event_id');
    const other = await v1Session();
    expectConflict(await refusal(t.tk.append(other, { type: 'USER_INPUT', content: { input: 'mine' }, event_id: eventId })), 409, 'event_id_conflict', 'event_id');
    // The id of the SESSION_CREATE event, which the server chose, is taken too.
    const [created] = (await t.tk.events(id, { limit: 1 })).events;
    expectConflict(await refusal(t.tk.append(other, { type: 'USER_INPUT', content: {}, event_id: created.event_id })), 409, 'event_id_conflict', 'event_id');
    expect(await rows(id)).toEqual(before);
    expect(await rows(other)).toEqual({ sessions: 1, events: 1 });
  });

  test('seed: event_id_conflict is 409 there too (the seed had no event ids)', async () => {
    const id = await seedSession();
    const eventId = randomUUID();
    await t.tk.seed.append({ session_id: id, event_type: 'USER_INPUT', content: '{"input":"mine"}', event_id: eventId });
    const before = await rows(id);
    expectConflict(await refusal(t.tk.seed.append({ session_id: id, event_type: 'USER_INPUT', content: '{"input":"other"}', event_id: eventId })), 409, 'event_id_conflict', 'event_id');
    expect(await rows(id)).toEqual(before);
  });
});

describe('session exists', () => {
  test('/v1: 409 session_exists, also for a session the seed created', async () => {
    for (const id of [await v1Session(), await seedSession()]) {
      const before = await rows(id);
      expectConflict(await refusal(t.tk.createSession({ session_id: id, agent_id: 'again' })), 409, 'session_exists', 'session_id');
      expect(await rows(id)).toEqual(before);
      expect((await t.tk.session(id)).agent_id).toBeNull();
    }
  });

  test('seed: 400 session_exists, also for a session /v1 created', async () => {
    for (const id of [await seedSession(), await v1Session()]) {
      const before = await rows(id);
      expectConflict(await refusal(t.tk.seed.init(id)), 400, 'session_exists', 'session_id');
      expect(await rows(id)).toEqual(before);
    }
  });

  test('an archived session still exists', async () => {
    const id = await v1Session();
    await t.tk.end(id);
    expectConflict(await refusal(t.tk.createSession({ session_id: id })), 409, 'session_exists', 'session_id');
    expectConflict(await refusal(t.tk.seed.init(id)), 400, 'session_exists', 'session_id');
    expect(await rows(id)).toEqual({ sessions: 1, events: 2 });
  });
});

describe('session archived', () => {
  test('/v1: 409 session_archived on append, SESSION_END and /end, even with an expected_seq', async () => {
    const id = await v1Session();
    const end = await t.tk.end(id, { reason: 'done' });
    const before = await rows(id);
    expectConflict(await refusal(t.tk.append(id, { type: 'USER_INPUT', content: { input: 'late' } })), 409, 'session_archived', 'session_id');
    expectConflict(await refusal(t.tk.append(id, { type: 'SESSION_END', content: { reason: 'again' } })), 409, 'session_archived', 'session_id');
    expectConflict(await refusal(t.tk.end(id, { reason: 'again' })), 409, 'session_archived', 'session_id');
    expectConflict(await refusal(t.tk.end(id, { reason: 'again', idempotency_key: 'new-key' })), 409, 'session_archived', 'session_id');
    // Archived outranks a wrong expected_seq, and a right one does not reopen it.
    expectConflict(await refusal(t.tk.append(id, { type: 'USER_INPUT', content: { input: 'late' }, expected_seq: 1 })), 409, 'session_archived', 'session_id');
    expectConflict(await refusal(t.tk.append(id, { type: 'USER_INPUT', content: { input: 'late' }, expected_seq: end.seq })), 409, 'session_archived', 'session_id');
    expect(await rows(id)).toEqual(before);
  });

  test('seed: 400 session_archived', async () => {
    const id = await seedSession();
    await t.tk.seed.append({ session_id: id, event_type: 'SESSION_END', content: '{"reason":"done"}' });
    const before = await rows(id);
    expectConflict(await refusal(t.tk.seed.append({ session_id: id, event_type: 'USER_INPUT', content: '{"input":"late"}' })), 400, 'session_archived', 'session_id');
    expect(await rows(id)).toEqual(before);
  });
});
