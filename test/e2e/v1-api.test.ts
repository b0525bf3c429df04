/**
 * The /v1 resource API end to end, over HTTP against the real system: sessions, appends
 * with idempotency, paging and filters, end/archive, description, listing, verification
 * and the LLM context view.
 */
import { randomUUID } from 'node:crypto';
import type { CallResponse, TimekeeperClient } from '../../sdk/client';
import { eventually, refusal, settle, uniqueSessionId, useTestSystem } from '../support';

const t = useTestSystem();

const HEX64 = /^[0-9a-f]{64}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type AppendBody = Parameters<TimekeeperClient['append']>[1];
type EventType = AppendBody['type'];
type CreateBody = Parameters<TimekeeperClient['createSession']>[0];
type ContextQuery = NonNullable<Parameters<TimekeeperClient['context']>[1]>;

async function createSession(extra: Omit<CreateBody, 'session_id'> = {}, prefix = 'v1'): Promise<string> {
  const sid = uniqueSessionId(prefix);
  const r = await t.tk.call('createSession', { body: { session_id: sid, ...extra } });
  expect(r.status).toBe(201);
  return sid;
}

async function append(sid: string, type: EventType, content: unknown, extra: Omit<AppendBody, 'type' | 'content'> = {}) {
  const r = await t.tk.call('appendEvent', { params: { id: sid }, body: { type, content, ...extra } });
  if (r.status !== 201) throw new Error(`append ${type} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Appends once the clock has passed `ts` (the previous event's), so the new event has a millisecond of its own. */
async function appendAfter(ts: number, sid: string, type: EventType, content: unknown) {
  await eventually('the clock to pass the previous event', () => Date.now() > ts, { stepMs: 1 });
  return append(sid, type, content);
}

async function eventRows(sid: string): Promise<number> {
  const { rows } = await t.sys.pool.query('SELECT count(*)::int AS n FROM timeline_events WHERE session_id = $1', [sid]);
  return rows[0].n;
}

async function allEvents(sid: string) {
  const r = await t.tk.call('listEvents', { params: { id: sid }, query: { limit: 1000 } });
  expect(r.status).toBe(200);
  return r.body.events;
}

describe('POST /v1/sessions', () => {
  test('201 with Location, status open, head seq 1 and the fields echoed; one row each in the tables', async () => {
    const sid = uniqueSessionId('v1_create');
    const metadata = { tenant: 'acme', tags: ['a', 'b'], nested: { n: 1 } };
    const r = await t.tk.call('createSession', { body: { session_id: sid, agent_id: 'agent-7', channel: 'web', metadata } });
    expect(r.status).toBe(201);
    expect(r.headers.get('location')).toBe(`/v1/sessions/${sid}`);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.body.session_id).toBe(sid);
    expect(r.body.timeline_id).toMatch(UUID);
    expect(r.body.status).toBe('open');
    expect(r.body.archived_ts).toBeNull();
    expect(r.body.agent_id).toBe('agent-7');
    expect(r.body.channel).toBe('web');
    expect(r.body.metadata).toEqual(metadata);
    expect(r.body.head?.seq).toBe(1);
    expect(r.body.head?.hash).toMatch(HEX64);
    expect(r.body.head?.ts).toBeGreaterThanOrEqual(r.body.created_ts);
    expect(r.body.workflow.workflow_id).toBe(`session/${sid}`);

    const sessions = await t.sys.pool.query('SELECT agent_id, channel, metadata FROM timeline_sessions WHERE session_id = $1', [sid]);
    expect(sessions.rows).toEqual([{ agent_id: 'agent-7', channel: 'web', metadata }]);
    const events = await t.sys.pool.query('SELECT seq, event_type, hash, content FROM timeline_events WHERE session_id = $1', [sid]);
    expect(events.rows).toHaveLength(1);
    expect(events.rows[0]).toMatchObject({ event_type: 'SESSION_CREATE', hash: r.body.head?.hash });
    expect(Number(events.rows[0].seq)).toBe(1);
    expect(events.rows[0].content).toMatchObject({ session_id: sid, timeline_id: r.body.timeline_id, agent_id: 'agent-7', channel: 'web', metadata });
  });

  test('a metadata key named __proto__ is kept like any other key, not dropped', async () => {
    const sid = uniqueSessionId('v1_proto');
    const raw = `{"session_id":"${sid}","metadata":{"__proto__":{"polluted":true},"plain":1}}`;
    // Raw: the key must reach the server as JSON text, not through an object.
    const r = await t.tk.raw('POST', '/v1/sessions', { body: raw });
    expect(r.status).toBe(201);
    const { rows } = await t.sys.pool.query('SELECT metadata::text AS m FROM timeline_sessions WHERE session_id = $1', [sid]);
    expect(rows[0].m).toMatch(/"__proto__": \{"polluted": true\}/);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined(); // and no prototype was polluted
    expect((await t.tk.verify(sid)).ok).toBe(true);
  });

  test('a duplicate session_id is 409 session_exists and writes nothing', async () => {
    const sid = await createSession({ agent_id: 'first' });
    const dup = await refusal(t.tk.createSession({ session_id: sid, agent_id: 'second' }));
    expect(dup.status).toBe(409);
    expect(dup.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(dup.body.type).toMatch(/session_exists$/);
    expect(dup.body.errors?.[0]?.field).toBe('session_id');
    expect(await eventRows(sid)).toBe(1);
    const s = await t.tk.session(sid);
    expect(s.agent_id).toBe('first');
  });

  test('concurrent creates of one session id: exactly one 201, the rest 409', async () => {
    const sid = uniqueSessionId('v1_race');
    const results = await Promise.all([1, 2, 3, 4].map((i) => settle(t.tk.call('createSession', { body: { session_id: sid, agent_id: `racer-${i}` } }))));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409]);
    expect(await eventRows(sid)).toBe(1);
    const { rows } = await t.sys.pool.query('SELECT count(*)::int AS n FROM timeline_sessions WHERE session_id = $1', [sid]);
    expect(rows[0].n).toBe(1);
  });
});

describe('POST /v1/sessions/:id/events', () => {
  test('201 with seq, hash and prev_hash chained to the previous event', async () => {
    const sid = await createSession();
    const head = (await t.tk.session(sid)).head!;
    const a = await t.tk.call('appendEvent', { params: { id: sid }, body: { type: 'USER_INPUT', content: { input: 'hello' } } });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ session_id: sid, seq: 2, type: 'USER_INPUT', content: { input: 'hello' }, prev_hash: head.hash, deduplicated: false, idempotency_key: null });
    expect(a.body.hash).toMatch(HEX64);
    expect(a.body.event_id).toMatch(UUID);
    expect(a.body.ts).toBeGreaterThanOrEqual(head.ts);
    const b = await t.tk.call('appendEvent', { params: { id: sid }, body: { type: 'LLM_RESPONSE', content: 'plain string content' } });
    expect(b.status).toBe(201);
    expect(b.body.seq).toBe(3);
    expect(b.body.prev_hash).toBe(a.body.hash);
    expect(b.body.content).toBe('plain string content');
    expect(b.body.hash).not.toBe(a.body.hash);
    expect(await eventRows(sid)).toBe(3);
  });

  test('idempotency_key: a retry returns 200 and the same event, deduplicated; the row count does not change', async () => {
    const sid = await createSession();
    const req = { type: 'TOOL_CALL', content: { tool_name: 'search', params: { q: 'x' } }, idempotency_key: 'call-1' } as const;
    const first = await t.tk.call('appendEvent', { params: { id: sid }, body: req });
    expect(first.status).toBe(201);
    expect(first.body.deduplicated).toBe(false);
    expect(first.body.idempotency_key).toBe('call-1');
    expect(await eventRows(sid)).toBe(2);

    for (let i = 0; i < 2; i++) {
      const retry = await t.tk.call('appendEvent', { params: { id: sid }, body: req });
      expect(retry.status).toBe(200);
      expect(retry.body.deduplicated).toBe(true);
      for (const k of ['event_id', 'seq', 'hash', 'prev_hash', 'ts'] as const) expect(retry.body[k]).toEqual(first.body[k]);
    }
    expect(await eventRows(sid)).toBe(2);

    // The next new append continues the chain right after the deduplicated event.
    const next = await append(sid, 'TOOL_RESULT', { result: 'ok' });
    expect(next.seq).toBe(3);
    expect(next.prev_hash).toBe(first.body.hash);
  });

  test('idempotency_key reused with different content or type is 409 and writes nothing', async () => {
    const sid = await createSession();
    const first = await t.tk.call('appendEvent', { params: { id: sid }, body: { type: 'USER_INPUT', content: { input: 'a' }, idempotency_key: 'k-1' } });
    expect(first.status).toBe(201);
    const otherContent = await refusal(t.tk.append(sid, { type: 'USER_INPUT', content: { input: 'b' }, idempotency_key: 'k-1' }));
    expect(otherContent.status).toBe(409);
    expect(otherContent.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(otherContent.body.errors?.[0]?.field).toBe('idempotency_key');
    const otherType = await refusal(t.tk.append(sid, { type: 'LLM_RESPONSE', content: { input: 'a' }, idempotency_key: 'k-1' }));
    expect(otherType.status).toBe(409);
    expect(otherType.body.errors?.[0]?.field).toBe('idempotency_key');
    expect(await eventRows(sid)).toBe(2);
    // The key is scoped to the session: another session may use it freely.
    const sid2 = await createSession();
    const elsewhere = await t.tk.call('appendEvent', { params: { id: sid2 }, body: { type: 'USER_INPUT', content: { input: 'b' }, idempotency_key: 'k-1' } });
    expect(elsewhere.status).toBe(201);
  });

  test('concurrent retries with one idempotency_key store one event and all get it', async () => {
    const sid = await createSession();
    const req = { type: 'USER_INPUT', content: { input: 'burst' }, idempotency_key: 'burst-1' } as const;
    const results = await Promise.all(Array.from({ length: 5 }, () => settle(t.tk.call('appendEvent', { params: { id: sid }, body: req }))));
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 201]);
    expect(new Set(results.map((r) => r.body.event_id)).size).toBe(1);
    expect(results.filter((r) => r.body.deduplicated === false)).toHaveLength(1);
    expect(await eventRows(sid)).toBe(2);
  });

  test('a client-supplied event_id retried returns the same event; reused for other content it is 409', async () => {
    const sid = await createSession();
    const eventId = randomUUID();
    const req = { type: 'USER_INPUT', content: { input: 'with my id' }, event_id: eventId } as const;
    const first = await t.tk.call('appendEvent', { params: { id: sid }, body: req });
    expect(first.status).toBe(201);
    expect(first.body.event_id).toBe(eventId);
    const retry = await t.tk.call('appendEvent', { params: { id: sid }, body: req });
    expect(retry.status).toBe(200);
    expect(retry.body.deduplicated).toBe(true);
    expect(retry.body).toMatchObject({ event_id: eventId, seq: first.body.seq, hash: first.body.hash });
    // The same UUID in upper case is the same id.
    const upper = await t.tk.call('appendEvent', { params: { id: sid }, body: { ...req, event_id: eventId.toUpperCase() } });
    expect(upper.status).toBe(200);
    expect(upper.body.seq).toBe(first.body.seq);
    expect(await eventRows(sid)).toBe(2);

    const conflict = await refusal(t.tk.append(sid, { ...req, content: { input: 'different' } }));
    expect(conflict.status).toBe(409);
    expect(conflict.body.errors?.[0]?.field).toBe('event_id');
    const sid2 = await createSession();
    const otherSession = await refusal(t.tk.append(sid2, req));
    expect(otherSession.status).toBe(409);
    expect(otherSession.body.errors?.[0]?.field).toBe('event_id');
    expect(await eventRows(sid)).toBe(2);
    expect(await eventRows(sid2)).toBe(1);
  });
});

describe('GET /v1/sessions/:id/events', () => {
  let sid: string;
  const types: EventType[] = ['USER_INPUT', 'LLM_RESPONSE', 'TOOL_CALL', 'TOOL_RESULT', 'LLM_RESPONSE', 'USER_INPUT', 'TOOL_CALL'];
  beforeAll(async () => {
    sid = await createSession();
    let last = Date.now(); // not before the create's ts
    for (let i = 0; i < types.length; i++) {
      // Distinct millisecond timestamps, so time-range filters have exact answers.
      last = (await appendAfter(last, sid, types[i], { i })).ts;
    }
  });

  test('all events in seq order, chained', async () => {
    const events = await allEvents(sid);
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(events.map((e) => e.type)).toEqual(['SESSION_CREATE', ...types]);
    for (let i = 1; i < events.length; i++) {
      expect(events[i].prev_hash).toBe(events[i - 1].hash);
      expect(events[i].ts).toBeGreaterThan(events[i - 1].ts);
    }
  });

  test.each([1, 3, 4, 7, 8, 9])('after_seq paging with limit=%i walks every event exactly once', async (limit) => {
    const seen: number[] = [];
    let after: number | null = 0;
    let pages = 0;
    while (after !== null) {
      const r: CallResponse<'listEvents'> = await t.tk.call('listEvents', { params: { id: sid }, query: { after_seq: after, limit } });
      expect(r.status).toBe(200);
      const page = r.body.events;
      expect(page.length).toBeLessThanOrEqual(limit);
      seen.push(...page.map((e) => e.seq));
      if (r.body.next_after_seq !== null) expect(r.body.next_after_seq).toBe(page[page.length - 1].seq);
      after = r.body.next_after_seq;
      if (++pages > 20) throw new Error('paging does not terminate');
    }
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(pages).toBe(Math.ceil(8 / limit));
  });

  test('after_seq alone skips up to and including that seq', async () => {
    const r = await t.tk.events(sid, { after_seq: 6 });
    expect(r.events.map((e) => e.seq)).toEqual([7, 8]);
    expect(r.next_after_seq).toBeNull();
    const past = await t.tk.events(sid, { after_seq: 8 });
    expect(past.events).toEqual([]);
  });

  test('from_ts and to_ts are inclusive bounds', async () => {
    const events = await allEvents(sid);
    const from = events[2].ts;
    const to = events[5].ts;
    const both = await t.tk.events(sid, { from_ts: from, to_ts: to });
    expect(both.events.map((e) => e.seq)).toEqual([3, 4, 5, 6]);
    const onlyFrom = await t.tk.events(sid, { from_ts: events[6].ts });
    expect(onlyFrom.events.map((e) => e.seq)).toEqual([7, 8]);
    const onlyTo = await t.tk.events(sid, { to_ts: events[1].ts });
    expect(onlyTo.events.map((e) => e.seq)).toEqual([1, 2]);
    const empty = await t.tk.events(sid, { from_ts: to, to_ts: from });
    expect(empty.events).toEqual([]);
    // Combined with paging.
    const paged = await t.tk.events(sid, { from_ts: from, to_ts: to, limit: 2 });
    expect(paged.events.map((e) => e.seq)).toEqual([3, 4]);
    expect(paged.next_after_seq).toBe(4);
    const rest = await t.tk.events(sid, { from_ts: from, to_ts: to, limit: 2, after_seq: 4 });
    expect(rest.events.map((e) => e.seq)).toEqual([5, 6]);
    expect(rest.next_after_seq).toBeNull();
  });

  test('types filter returns only the listed types, in seq order', async () => {
    const r = await t.tk.call('listEvents', { params: { id: sid }, query: { types: 'USER_INPUT,TOOL_CALL' } });
    expect(r.status).toBe(200);
    expect(r.body.events.map((e) => [e.seq, e.type])).toEqual([
      [2, 'USER_INPUT'],
      [4, 'TOOL_CALL'],
      [7, 'USER_INPUT'],
      [8, 'TOOL_CALL'],
    ]);
    const create = await t.tk.events(sid, { types: 'SESSION_CREATE' });
    expect(create.events.map((e) => e.seq)).toEqual([1]);
    const none = await t.tk.events(sid, { types: 'SESSION_END' });
    expect(none.events).toEqual([]);
    const withSpaces = await t.tk.events(sid, { types: ' LLM_RESPONSE , TOOL_RESULT ' });
    expect(withSpaces.events.map((e) => e.seq)).toEqual([3, 5, 6]);
  });
});

describe('POST /v1/sessions/:id/end', () => {
  test('200 with the SESSION_END event; then archived, and appends are 409', async () => {
    const sid = await createSession();
    const last = await append(sid, 'USER_INPUT', { input: 'bye' });
    const end = await t.tk.call('endSession', { params: { id: sid }, body: { reason: 'user left' } });
    expect(end.status).toBe(200);
    expect(end.body).toMatchObject({ session_id: sid, seq: 3, type: 'SESSION_END', content: { reason: 'user left' }, prev_hash: last.hash, deduplicated: false });

    const s = await t.tk.session(sid);
    expect(s.status).toBe('archived');
    expect(s.archived_ts).toBe(end.body.ts);
    expect(s.head).toEqual({ seq: 3, hash: end.body.hash, ts: end.body.ts });

    const after = await refusal(t.tk.append(sid, { type: 'USER_INPUT', content: { input: 'late' } }));
    expect(after.status).toBe(409);
    expect(after.body.type).toMatch(/session_archived$/);
    expect(after.body.errors?.[0]?.field).toBe('session_id');
    const again = await refusal(t.tk.end(sid, {}));
    expect(again.status).toBe(409);
    expect(await eventRows(sid)).toBe(3);
  });

  test('with no body the reason is "ended"; SESSION_END appended as an event also archives', async () => {
    const sid = await createSession();
    const end = await t.tk.call('endSession', { params: { id: sid } }); // no body at all
    expect(end.status).toBe(200);
    expect(end.body.content).toEqual({ reason: 'ended' });

    const sid2 = await createSession();
    const viaAppend = await t.tk.call('appendEvent', { params: { id: sid2 }, body: { type: 'SESSION_END', content: { reason: 'timeout' } } });
    expect(viaAppend.status).toBe(201);
    expect((await t.tk.session(sid2)).status).toBe('archived');
    expect((await refusal(t.tk.append(sid2, { type: 'USER_INPUT', content: 1 }))).status).toBe(409);
  });
});

describe('GET /v1/sessions/:id', () => {
  test('counts by type, the head, and a Temporal UI link with the encoded workflow id', async () => {
    const sid = await createSession({ agent_id: 'describer' });
    await append(sid, 'USER_INPUT', { input: '1' });
    await append(sid, 'LLM_RESPONSE', { response: '2' });
    const last = await append(sid, 'USER_INPUT', { input: '3' });
    const r = await t.tk.call('getSession', { params: { id: sid } });
    expect(r.status).toBe(200);
    expect(r.body.counts).toEqual({ events: 4, by_type: { SESSION_CREATE: 1, USER_INPUT: 2, LLM_RESPONSE: 1 } });
    expect(r.body.head).toEqual({ seq: 4, hash: last.hash, ts: last.ts });
    expect(r.body.workflow.workflow_id).toBe(`session/${sid}`);
    expect(r.body.workflow.ui_url).toContain(`session%2F${sid}`);
    expect(r.body.workflow.ui_url.startsWith(`${t.sys.config.temporalUiUrl}/namespaces/`)).toBe(true);
    expect(r.body.workflow.status).toBe('open');
    expect(r.body.workflow.run).toBe(1);
  });
});

describe('GET /v1/sessions', () => {
  const agent = `lister_${process.pid}_${Date.now().toString(36)}`;
  const ids: string[] = [];
  let ended: string;
  beforeAll(async () => {
    for (const channel of ['web', 'sms', 'web', 'web', 'sms']) ids.push(await createSession({ agent_id: agent, channel }, 'v1_list'));
    ended = ids[3];
    expect((await t.tk.call('endSession', { params: { id: ended }, body: { reason: 'done' } })).status).toBe(200);
  });
  const sessionIds = (r: { body: { sessions: { session_id: string }[] } }) => r.body.sessions.map((s) => s.session_id);
  const list = (query: NonNullable<Parameters<TimekeeperClient['listSessions']>[0]>) => t.tk.call('listSessions', { query });

  test('agent_id, channel and status filters', async () => {
    const all = await list({ agent_id: agent });
    expect(all.status).toBe(200);
    expect(new Set(sessionIds(all))).toEqual(new Set(ids));
    expect(all.body.next_cursor).toBeNull();
    for (const s of all.body.sessions) expect(s.agent_id).toBe(agent);

    const web = await list({ agent_id: agent, channel: 'web' });
    expect(new Set(sessionIds(web))).toEqual(new Set([ids[0], ids[2], ids[3]]));
    const archived = await list({ agent_id: agent, status: 'archived' });
    expect(sessionIds(archived)).toEqual([ended]);
    expect(archived.body.sessions[0].status).toBe('archived');
    const open = await list({ agent_id: agent, status: 'open' });
    expect(new Set(sessionIds(open))).toEqual(new Set(ids.filter((i) => i !== ended)));
    const openSms = await list({ agent_id: agent, status: 'open', channel: 'sms' });
    expect(new Set(sessionIds(openSms))).toEqual(new Set([ids[1], ids[4]]));
    const nobody = await list({ agent_id: `${agent}_nobody` });
    expect(nobody.body.sessions).toEqual([]);
  });

  test.each([1, 2, 3, 5])('cursor paging with limit=%i lists each session exactly once, in order', async (limit) => {
    const whole = sessionIds(await list({ agent_id: agent }));
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await list({ agent_id: agent, limit, ...(cursor ? { cursor } : {}) });
      expect(r.status).toBe(200);
      expect(r.body.sessions.length).toBeLessThanOrEqual(limit);
      seen.push(...sessionIds(r));
      cursor = r.body.next_cursor;
      if (++pages > 10) throw new Error('paging does not terminate');
    } while (cursor);
    expect(seen).toEqual(whole);
    expect(pages).toBe(Math.ceil(5 / limit));
  });
});

describe('GET /v1/sessions/:id/verify', () => {
  test('an intact chain verifies: checked is the event count, head_hash the last hash', async () => {
    const sid = await createSession();
    for (const t of ['USER_INPUT', 'LLM_RESPONSE', 'TOOL_CALL', 'TOOL_RESULT'] as const) await append(sid, t, { t });
    let events = await allEvents(sid);
    let r = await t.tk.call('verifySession', { params: { id: sid } });
    expect(r.status).toBe(200);
    const head = events[events.length - 1].hash;
    expect(r.body).toEqual({ session_id: sid, ok: true, checked: 5, head_seq: 5, head_hash: head, anchor: { source: 'workflow', seq: 5, hash: head, ok: true }, log: expect.objectContaining({ ok: true }) });

    await t.tk.end(sid, { reason: 'verified' });
    events = await allEvents(sid);
    r = await t.tk.call('verifySession', { params: { id: sid } });
    expect(r.body).toMatchObject({ ok: true, checked: 6, head_seq: 6, head_hash: events[5].hash });
    expect(events[5].type).toBe('SESSION_END');
  });
});

describe('GET /v1/sessions/:id/context', () => {
  let sid: string;
  let events: { seq: number; ts: number }[];
  beforeAll(async () => {
    sid = await createSession();
    const script: [EventType, unknown][] = [
      ['USER_INPUT', { input: '北京今天天气怎么样？' }],
      ['TOOL_CALL', { tool_name: 'weather', params: { city: '北京' } }],
      ['TOOL_RESULT', { result: '晴，25度' }],
      ['LLM_RESPONSE', { response: '北京今天晴，25度。' }],
      ['USER_INPUT', { input: '谢谢' }],
    ];
    let last = Date.now();
    for (const [type, content] of script) last = (await appendAfter(last, sid, type, content)).ts;
    events = await allEvents(sid);
  });
  const ctx = (query: ContextQuery) => t.tk.call('getContext', { params: { id: sid }, query });

  test("lang=zh gives the seed's lines", async () => {
    const r = await ctx({ lang: 'zh', timestamps: 'false' });
    expect(r.status).toBe(200);
    expect(r.body.text.split('\n')).toEqual([
      '会话创建',
      '用户：北京今天天气怎么样？',
      '调用工具：weather，参数：{"city":"北京"}',
      '工具返回：晴，25度',
      '智能体：北京今天晴，25度。',
      '用户：谢谢',
    ]);
    expect(r.body.events_included).toBe(6);
    expect(r.body.truncated).toBe(false);
    expect(r.body.as_of).toEqual({ seq: 6, ts: events[5].ts, requested_seq: null, requested_ts: null });
  });

  test('English labels and ISO timestamps by default; messages carry roles', async () => {
    const r = await ctx({});
    const lines = r.body.text.split('\n');
    expect(lines).toHaveLength(6);
    lines.forEach((line, i) => expect(line.startsWith(`[${new Date(events[i].ts).toISOString()}] `)).toBe(true));
    expect(lines[1]).toMatch(/\] User: 北京今天天气怎么样？$/);
    expect(lines[2]).toMatch(/\] Tool call: weather, params: \{"city":"北京"\}$/);
    expect(lines[4]).toMatch(/\] Agent: 北京今天晴，25度。$/);
    expect(r.body.messages.map((m) => m.role)).toEqual(['system', 'user', 'tool', 'tool', 'assistant', 'user']);
    expect(r.body.messages[1]).toEqual({ role: 'user', content: '北京今天天气怎么样？', seq: 2, ts: events[1].ts, occurred_at: null });
    expect(r.body.messages[4].content).toBe('北京今天晴，25度。');
    const zh = await ctx({ lang: 'zh' });
    expect(zh.body.messages[3].content).toBe('工具返回：晴，25度');
  });

  test('as_of_seq never includes anything after the as-of point', async () => {
    for (const asOf of [1, 3, 4]) {
      const r = await ctx({ as_of_seq: asOf, lang: 'zh', timestamps: 'false' });
      expect(r.body.events_included).toBe(asOf);
      expect(r.body.messages.map((m: { seq: number }) => m.seq)).toEqual(Array.from({ length: asOf }, (_, i) => i + 1));
      expect(r.body.as_of).toMatchObject({ seq: asOf, requested_seq: asOf });
      expect(r.body.text.split('\n')).toHaveLength(asOf);
    }
    const r3 = await ctx({ as_of_seq: 3, lang: 'zh', timestamps: 'false' });
    expect(r3.body.text).not.toContain('工具返回');
    expect(r3.body.text).not.toContain('谢谢');
  });

  test('as_of_ts never includes anything after the as-of point', async () => {
    const r = await ctx({ as_of_ts: events[3].ts });
    expect(r.body.messages.map((m: { seq: number }) => m.seq)).toEqual([1, 2, 3, 4]);
    for (const m of r.body.messages) expect(m.ts).toBeLessThanOrEqual(events[3].ts);
    expect(r.body.as_of).toMatchObject({ seq: 4, ts: events[3].ts, requested_ts: events[3].ts });
    const between = await ctx({ as_of_ts: events[4].ts - 1 });
    expect(between.body.messages.map((m: { seq: number }) => m.seq)).toEqual([1, 2, 3, 4]);
    const before = await ctx({ as_of_ts: events[0].ts - 1 });
    expect(before.body).toMatchObject({ events_included: 0, text: '', messages: [], truncated: false, as_of: { seq: null, ts: null } });
  });

  test('max_events keeps the last N and sets truncated', async () => {
    const r = await ctx({ max_events: 2, lang: 'zh', timestamps: 'false' });
    expect(r.body.truncated).toBe(true);
    expect(r.body.events_included).toBe(2);
    expect(r.body.messages.map((m: { seq: number }) => m.seq)).toEqual([5, 6]);
    expect(r.body.text).toBe('智能体：北京今天晴，25度。\n用户：谢谢');
    const exact = await ctx({ max_events: 6 });
    expect(exact.body.truncated).toBe(false);
    expect(exact.body.events_included).toBe(6);
    const withAsOf = await ctx({ max_events: 2, as_of_seq: 4 });
    expect(withAsOf.body.messages.map((m: { seq: number }) => m.seq)).toEqual([3, 4]);
    expect(withAsOf.body.truncated).toBe(true);
    const asOfExact = await ctx({ max_events: 4, as_of_seq: 4 });
    expect(asOfExact.body.truncated).toBe(false);
  });
});
