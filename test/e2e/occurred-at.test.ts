/**
 * Event time end to end (issue 20): occurred_at given on every append surface (/v1 events and
 * end, seed /timeline/append, the MCP session_append tool, the typed client) and on the create
 * surfaces (POST /v1/sessions, seed /timeline/init: SESSION_CREATE's) is stored beside
 * the database ts, hashed, shown by reads and the LLM context, and bounded against ts
 * (EVENT_OCCURRED_AT_MAX_PAST_S / _FUTURE_S, set small here); events without it hash by the
 * seven-member rule, so chains from before it verify unchanged.
 */
import { createHash } from 'node:crypto';
import { canonicalize } from '../../lib/domain/canonical-json';
import { callTool } from '../../integrations/mcp/server';
import { refusal, startTestSystem, TestSystem, uniqueSessionId } from '../support';
import { asDatabaseAttacker } from '../support/db-attacker';

const PAST_S = 3600;
const FUTURE_S = 30;
let sys: TestSystem;
beforeAll(async () => {
  sys = await startTestSystem({ config: { occurredAtMaxPastS: PAST_S, occurredAtMaxFutureS: FUTURE_S } });
});
afterAll(async () => {
  await sys?.stop();
});

async function newSession(): Promise<string> {
  const id = uniqueSessionId('occ');
  await sys.tk.createSession({ session_id: id });
  return id;
}

const iso = (ms: number) => new Date(ms).toISOString();

async function storedRows(id: string) {
  const { rows } = await sys.ownerPool.query('SELECT seq, ts, occurred_at, event_type, event_id, content, prev_hash, hash FROM timeline_events WHERE session_id = $1 ORDER BY seq', [id]);
  return rows.map((r) => ({ ...r, seq: Number(r.seq), ts: Number(r.ts), occurred_at: r.occurred_at === null ? null : Number(r.occurred_at) }));
}

describe('occurred_at on every append surface', () => {
  test('stored beside ts, returned, hashed, and the chain verifies', async () => {
    const id = await newSession();
    const before = Date.now() - 20 * 60_000; // an outbox delivering 20 minutes late
    const a = await sys.tk.call('appendEvent', { params: { id }, body: { type: 'USER_INPUT', content: { input: 'hi' }, idempotency_key: 'u1', occurred_at: iso(before) } });
    expect(a.status).toBe(201);
    expect(a.body.occurred_at).toBe(before);
    expect(a.body.ts).toBeGreaterThan(before);
    // With an offset: the same instant, the offset is not kept.
    const near = new Date(before + 1000);
    const plus2 = `${new Date(near.getTime() + 2 * 3600_000).toISOString().slice(0, 23)}+02:00`;
    const b = await sys.tk.append(id, { type: 'TOOL_CALL', content: { tool_name: 'read' }, idempotency_key: 't1', occurred_at: plus2 });
    expect(b.occurred_at).toBe(near.getTime());
    // Seed surface (query string) and the MCP tool.
    const seedRes = await fetch(`${sys.baseUrl}/timeline/append?session_id=${id}&event_type=TOOL_RESULT&content=${encodeURIComponent('{"ok":true}')}&occurred_at=${encodeURIComponent(iso(before + 2000))}`, { method: 'POST' });
    const seed = (await seedRes.json()) as { code: number; data: { occurred_at: number | null; seq: number } };
    expect(seed.code).toBe(200);
    expect(seed.data).toMatchObject({ seq: 4, occurred_at: before + 2000 });
    const mcp = await callTool(sys.tk, 'session_append', { session_id: id, type: 'LLM_RESPONSE', content: { response: 'done' }, occurred_at: iso(before + 3000) });
    expect(mcp.isError).toBeUndefined();
    expect(JSON.parse((mcp.content[0] as { text: string }).text)).toMatchObject({ seq: 5, occurred_at: before + 3000 });
    // One without: null everywhere.
    const plain = await sys.tk.append(id, { type: 'USER_INPUT', content: { input: 'no time' } });
    expect(plain.occurred_at).toBeNull();
    const end = await sys.tk.end(id, { reason: 'done', occurred_at: iso(before + 5000) });
    expect(end.occurred_at).toBe(before + 5000);

    // Stored in the column, and part of the hash exactly when present.
    const rows = await storedRows(id);
    expect(rows.map((r) => r.occurred_at)).toEqual([null, before, near.getTime(), before + 2000, before + 3000, null, before + 5000]);
    for (const r of rows) {
      const members = { session_id: id, seq: r.seq, event_id: r.event_id, event_type: r.event_type, ts: r.ts, content: r.content, prev_hash: r.prev_hash, ...(r.occurred_at !== null ? { occurred_at: r.occurred_at } : {}) };
      expect(createHash('sha256').update(canonicalize(members), 'utf8').digest('hex')).toBe(r.hash);
    }
    // ts stays the order even though occurred_at goes back (before + 3000 then null then ...).
    for (let i = 1; i < rows.length; i++) expect(rows[i].ts).toBeGreaterThanOrEqual(rows[i - 1].ts);
    expect(await sys.tk.verify(id)).toMatchObject({ ok: true, checked: 7 });

    // Reads: /v1 events, the seed read, the LLM context (lines timed by occurred_at when present).
    const events = await sys.tk.events(id, { limit: 100 });
    expect(events.events.map((e) => e.occurred_at)).toEqual(rows.map((r) => r.occurred_at));
    const got = (await (await fetch(`${sys.baseUrl}/timeline/get?session_id=${id}`)).json()) as { data: { events: { occurred_at: number | null }[] } };
    expect(got.data.events.map((e) => e.occurred_at)).toEqual(rows.map((r) => r.occurred_at));
    const ctx = await sys.tk.context(id, {});
    expect(ctx.text.split('\n')[1]).toBe(`[${iso(before)}] User: hi`);
    expect(ctx.text.split('\n')[5]).toBe(`[${iso(rows[5].ts)}] User: no time`);
    expect(ctx.messages[1]).toMatchObject({ role: 'user', ts: rows[1].ts, occurred_at: before });
  });

  test('a tampered occurred_at breaks the chain at that event', async () => {
    const id = await newSession();
    await sys.tk.append(id, { type: 'USER_INPUT', content: { input: 'x' }, occurred_at: iso(Date.now() - 1000) });
    await sys.tk.append(id, { type: 'LLM_RESPONSE', content: { response: 'y' } });
    await asDatabaseAttacker(sys.ownerPool, 'timeline_events', async (c) => {
      await c.query('UPDATE timeline_events SET occurred_at = occurred_at - 60000 WHERE session_id = $1 AND seq = 2', [id]);
    });
    expect(await sys.tk.verify(id)).toMatchObject({ ok: false, first_bad_seq: 2, reason: 'content_changed' });
  });

  test('events without occurred_at hash by the seven-member rule, so old chains still verify', async () => {
    const id = await newSession();
    await sys.tk.append(id, { type: 'USER_INPUT', content: { input: 'old style' } });
    await sys.tk.end(id, { reason: 'done' });
    const rows = await storedRows(id);
    for (const r of rows) {
      expect(r.occurred_at).toBeNull();
      const seven = { session_id: id, seq: r.seq, event_id: r.event_id, event_type: r.event_type, ts: r.ts, content: r.content, prev_hash: r.prev_hash };
      expect(createHash('sha256').update(canonicalize(seven), 'utf8').digest('hex')).toBe(r.hash);
    }
    expect(await sys.tk.verify(id)).toMatchObject({ ok: true, checked: 3 });
  });
});

describe('occurred_at on session create (SESSION_CREATE)', () => {
  test('POST /v1/sessions and seed init store and hash it on SESSION_CREATE; beyond the bounds 400 naming occurred_at, no session', async () => {
    const began = Date.now() - 15 * 60_000;
    const a = uniqueSessionId('occ-create');
    await sys.tk.createSession({ session_id: a, agent_id: 'agent-occ', occurred_at: iso(began) });
    const b = uniqueSessionId('occ-init');
    const init = (await (await fetch(`${sys.baseUrl}/timeline/init?session_id=${b}&occurred_at=${encodeURIComponent(iso(began + 1000))}`, { method: 'POST' })).json()) as { code: number };
    expect(init.code).toBe(200);
    const c = uniqueSessionId('occ-client-init');
    await sys.tk.seed.init(c, { occurred_at: iso(began + 2000) });
    for (const [id, at] of [[a, began], [b, began + 1000], [c, began + 2000]] as const) {
      await sys.tk.append(id, { type: 'USER_INPUT', content: { input: 'after create' } });
      const rows = await storedRows(id);
      expect(rows[0]).toMatchObject({ seq: 1, event_type: 'SESSION_CREATE', occurred_at: at });
      expect(rows[0].ts).toBeGreaterThan(at);
      const r = rows[0];
      const eight = { session_id: id, seq: r.seq, event_id: r.event_id, event_type: r.event_type, ts: r.ts, content: r.content, prev_hash: r.prev_hash, occurred_at: at };
      expect(createHash('sha256').update(canonicalize(eight), 'utf8').digest('hex')).toBe(r.hash);
      expect(await sys.tk.verify(id)).toMatchObject({ ok: true, checked: 2 });
      expect((await sys.tk.events(id, { limit: 10 })).events[0].occurred_at).toBe(at);
    }
    // Without one: null, hashed by the seven-member rule (the 'old chains' test above creates that way).
    const plain = uniqueSessionId('occ-plain');
    await sys.tk.createSession({ session_id: plain });
    expect((await storedRows(plain))[0].occurred_at).toBeNull();

    // Beyond either bound: 400 naming occurred_at, and no session (a later create with the same id works).
    const late = uniqueSessionId('occ-late');
    const past = await refusal(sys.tk.createSession({ session_id: late, occurred_at: iso(Date.now() - (PAST_S + 600) * 1000) }));
    expect(past.status).toBe(400);
    expect(past.body.errors).toEqual([{ field: 'occurred_at', reason: expect.stringMatching(/EVENT_OCCURRED_AT_MAX_PAST_S/) }]);
    const seedFuture = await fetch(`${sys.baseUrl}/timeline/init?session_id=${late}&occurred_at=${encodeURIComponent(iso(Date.now() + (FUTURE_S + 600) * 1000))}`, { method: 'POST' });
    expect(seedFuture.status).toBe(400);
    expect(JSON.stringify(await seedFuture.json())).toContain('occurred_at');
    expect(await storedRows(late)).toEqual([]);
    const bad = await refusal(sys.tk.createSession({ session_id: late, occurred_at: 'yesterday' }));
    expect(bad.status).toBe(400);
    expect(bad.body.errors?.[0]).toMatchObject({ field: 'occurred_at' });
    await sys.tk.createSession({ session_id: late, occurred_at: iso(Date.now() - 1000) });
    expect((await storedRows(late)).map((r) => r.event_type)).toEqual(['SESSION_CREATE']);
  });
});

describe('the bound against ts', () => {
  test('too far back or ahead: 400 naming occurred_at, nothing written; the edge inside is taken', async () => {
    const id = await newSession();
    const past = await refusal(sys.tk.append(id, { type: 'USER_INPUT', content: { input: 'old' }, occurred_at: iso(Date.now() - (PAST_S + 600) * 1000) }));
    expect(past.status).toBe(400);
    expect(past.body.errors).toEqual([{ field: 'occurred_at', reason: expect.stringMatching(/before the time the event is stored; at most 3600 s .*EVENT_OCCURRED_AT_MAX_PAST_S/) }]);
    const future = await refusal(sys.tk.end(id, { reason: 'x', occurred_at: iso(Date.now() + (FUTURE_S + 600) * 1000) }));
    expect(future.status).toBe(400);
    expect(future.body.errors).toEqual([{ field: 'occurred_at', reason: expect.stringMatching(/after the time the event is stored; at most 30 s .*EVENT_OCCURRED_AT_MAX_FUTURE_S/) }]);
    const seed = await fetch(`${sys.baseUrl}/timeline/append?session_id=${id}&event_type=USER_INPUT&content=%7B%7D&occurred_at=${encodeURIComponent(iso(Date.now() - (PAST_S + 600) * 1000))}`, { method: 'POST' });
    expect(seed.status).toBe(400);
    expect((await storedRows(id)).length).toBe(1);
    // Well inside both bounds: stored.
    const ok = await sys.tk.append(id, { type: 'USER_INPUT', content: { input: 'recent' }, occurred_at: iso(Date.now() - (PAST_S - 600) * 1000) });
    expect(ok.seq).toBe(2);
    expect((await sys.tk.session(id)).status).toBe('open');
  });

  test('malformed values are refused by the contract, naming the field', async () => {
    const id = await newSession();
    for (const bad of ['2026-12-01T18:27:59', 'yesterday', '2026-12-01T18:27:59+0100']) {
      const r = await refusal(sys.tk.append(id, { type: 'USER_INPUT', content: {}, occurred_at: bad }));
      expect(r.status).toBe(400);
      expect(r.body.errors?.[0]).toMatchObject({ field: 'occurred_at', reason: expect.stringContaining('RFC 3339') });
    }
    const r = await refusal(sys.tk.call('appendEvent', { params: { id }, body: { type: 'USER_INPUT', content: {}, occurred_at: 1764613680000 as unknown as string } }));
    expect(r.status).toBe(400);
    expect((await storedRows(id)).length).toBe(1);
  });

  test('a retry of a stored event is answered with the first occurred_at, however late it comes', async () => {
    const id = await newSession();
    const t0 = Date.now() - 1000;
    const first = await sys.tk.append(id, { type: 'USER_INPUT', content: { input: 'once' }, idempotency_key: 'k', occurred_at: iso(t0) });
    // A client that stamps the send time gives a retry another occurred_at, even one beyond the bound: the stored event stands.
    const again = await sys.tk.call('appendEvent', { params: { id }, body: { type: 'USER_INPUT', content: { input: 'once' }, idempotency_key: 'k', occurred_at: iso(Date.now() - (PAST_S + 600) * 1000) } });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ seq: first.seq, hash: first.hash, occurred_at: t0, deduplicated: true });
  });
});
