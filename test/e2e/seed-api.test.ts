/**
 * The seed article's validation plan (section 6.1.1), over HTTP against the real system:
 * irreversibility (SQL UPDATE/DELETE/TRUNCATE refused, append after archive refused) and
 * order.
 */
import { refusal, uniqueSessionId, useTestSystem } from '../support';

const t = useTestSystem();

describe('seed endpoints', () => {
  test('init returns timeline_id and the SESSION_CREATE event id; a second init is refused with 400', async () => {
    const sid = uniqueSessionId('test_init');
    const first = await t.tk.call('seedInit', { query: { session_id: sid } });
    expect(first.status).toBe(200);
    expect(first.body.code).toBe(200);
    expect(first.body.data.timeline_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.body.data.event_id).toMatch(/^[0-9a-f-]{36}$/);
    const second = await refusal(t.tk.call('seedInit', { query: { session_id: sid } }));
    expect(second.status).toBe(400);
    expect(second.body.code).toBe(400);
    expect(second.body.errors?.[0]?.field).toBe('session_id');
  });

  test('append returns event_id, timestamp and prev_event_hash chained to the previous event', async () => {
    const sid = uniqueSessionId('test_append');
    await t.tk.seed.init(sid);
    const a = await t.tk.call('seedAppend', { query: { session_id: sid, event_type: 'USER_INPUT', content: JSON.stringify({ input: '测试不可逆性' }) } });
    expect(a.status).toBe(200);
    const b = await t.tk.call('seedAppend', { query: { session_id: sid, event_type: 'LLM_RESPONSE', content: JSON.stringify({ response: 'ok' }) } });
    expect(b.body.data.prev_event_hash).toBe(a.body.data.hash);
    expect(b.body.data.seq).toBe(a.body.data.seq + 1);
    expect(b.body.data.timestamp).toBeGreaterThanOrEqual(a.body.data.timestamp);
  });

  test('unknown event type is 400, unknown session 404, non-JSON content 400 — and nothing is written', async () => {
    const sid = uniqueSessionId('test_bad');
    await t.tk.seed.init(sid);
    // An event type outside the contract's enumeration: only a raw request can send it.
    const badType = await t.tk.raw('POST', `/timeline/append?${new URLSearchParams({ session_id: sid, event_type: 'DELETE_ALL', content: '{}' })}`);
    expect(badType.status).toBe(400);
    expect(badType.body.errors[0].field).toBe('event_type');
    const badContent = await refusal(t.tk.call('seedAppend', { query: { session_id: sid, event_type: 'USER_INPUT', content: '{not json' } }));
    expect(badContent.status).toBe(400);
    expect(badContent.body.errors?.[0]?.field).toBe('content');
    const unknown = await refusal(t.tk.call('seedAppend', { query: { session_id: uniqueSessionId('nobody'), event_type: 'USER_INPUT', content: '{}' } }));
    expect(unknown.status).toBe(404);
    const { rows } = await t.sys.pool.query('SELECT count(*)::int AS n FROM timeline_events WHERE session_id = $1', [sid]);
    expect(rows[0].n).toBe(1);
  });

  test('get returns events in append order (test_002: USER_INPUT → LLM_RESPONSE → TOOL_CALL)', async () => {
    const sid = uniqueSessionId('test_002');
    await t.tk.seed.init(sid);
    const types = ['USER_INPUT', 'LLM_RESPONSE', 'TOOL_CALL'] as const;
    const contents = [{ input: 'A' }, { response: 'reply A' }, { tool_name: 'tool A', params: { x: 1 } }];
    for (let i = 0; i < 3; i++) {
      const r = await t.tk.call('seedAppend', { query: { session_id: sid, event_type: types[i], content: JSON.stringify(contents[i]) } });
      expect(r.status).toBe(200);
    }
    const got = await t.tk.call('seedGet', { query: { session_id: sid } });
    expect(got.status).toBe(200);
    const events = got.body.data.events;
    expect(events.map((e) => e.event_type)).toEqual(['SESSION_CREATE', ...types]);
    expect(events.slice(1).map((e) => e.content)).toEqual(contents);
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    for (let i = 1; i < events.length; i++) {
      expect(events[i].prev_event_hash).toBe(events[i - 1].hash);
      expect(events[i].timestamp).toBeGreaterThanOrEqual(events[i - 1].timestamp);
    }
    const limited = await t.tk.call('seedGet', { query: { session_id: sid, from_ts: events[2].timestamp, limit: 1 } });
    expect(limited.body.data.events).toHaveLength(1);
    expect(limited.body.data.events[0].timestamp).toBeGreaterThanOrEqual(events[2].timestamp);
  });

  test('SESSION_END archives the timeline; a later append is refused with 400', async () => {
    const sid = uniqueSessionId('test_003');
    await t.tk.seed.init(sid);
    const end = await t.tk.call('seedAppend', { query: { session_id: sid, event_type: 'SESSION_END', content: '{"reason":"user left"}' } });
    expect(end.status).toBe(200);
    const after = await refusal(t.tk.call('seedAppend', { query: { session_id: sid, event_type: 'USER_INPUT', content: '{"input":"late"}' } }));
    expect(after.status).toBe(400);
    expect(after.body.type).toMatch(/session_archived/);
    const { rows } = await t.sys.pool.query('SELECT status, archived_ts FROM timelines WHERE session_id = $1', [sid]);
    expect(rows[0].status).toBe('archived');
    expect(Number(rows[0].archived_ts)).toBe(end.body.data.timestamp);
  });
});

describe('irreversibility in the database itself', () => {
  let sid: string;
  beforeAll(async () => {
    sid = uniqueSessionId('test_sql');
    await t.tk.seed.init(sid);
    await t.tk.seed.append({ session_id: sid, event_type: 'USER_INPUT', content: '{"input":"x"}' });
  });

  test.each([
    ['UPDATE', `UPDATE timeline_events SET content = '{"input":"forged"}' WHERE session_id = $1`],
    ['DELETE', `DELETE FROM timeline_events WHERE session_id = $1`],
    ['UPDATE sessions', `UPDATE timeline_sessions SET agent_id = 'evil' WHERE session_id = $1`],
    ['DELETE sessions', `DELETE FROM timeline_sessions WHERE session_id = $1 AND false = false`],
  ])('%s is refused even for the owner/superuser', async (_name, sql) => {
    await expect(t.sys.ownerPool.query(sql, [sid])).rejects.toThrow(/append-only|violates foreign key/);
  });

  test('TRUNCATE is refused', async () => {
    await expect(t.sys.ownerPool.query('TRUNCATE timeline_events')).rejects.toThrow(/append-only/);
    await expect(t.sys.ownerPool.query('TRUNCATE timeline_sessions CASCADE')).rejects.toThrow(/append-only/);
  });

  test('the triggers still fire under session_replication_role = replica', async () => {
    const c = await t.sys.ownerPool.connect();
    try {
      await c.query('SET session_replication_role = replica');
      await expect(c.query('UPDATE timeline_events SET ts = ts + 1 WHERE session_id = $1', [sid])).rejects.toThrow(/append-only/);
      await expect(c.query('DELETE FROM timeline_events WHERE session_id = $1', [sid])).rejects.toThrow(/append-only/);
    } finally {
      await c.query('RESET session_replication_role');
      c.release();
    }
  });

  test('the application role has no UPDATE, DELETE or TRUNCATE privilege at all', async () => {
    await expect(t.sys.pool.query('UPDATE timeline_events SET ts = ts WHERE false')).rejects.toThrow(/permission denied/);
    await expect(t.sys.pool.query('DELETE FROM timeline_events WHERE false')).rejects.toThrow(/permission denied/);
    await expect(t.sys.pool.query('TRUNCATE timeline_events')).rejects.toThrow(/permission denied/);
    await expect(t.sys.pool.query('ALTER TABLE timeline_events DISABLE TRIGGER ALL')).rejects.toThrow(/must be owner/);
  });

  test('an insert that would fork, gap or follow SESSION_END is refused by the chain guard', async () => {
    const { rows } = await t.sys.pool.query('SELECT seq, hash, ts FROM timeline_events WHERE session_id = $1 ORDER BY seq DESC LIMIT 1', [sid]);
    const head = rows[0];
    const insert = (seq: number, prev: string | null, type = 'USER_INPUT', ts = Number(head.ts)) =>
      t.sys.pool.query(
        `INSERT INTO timeline_events (session_id, seq, event_id, event_type, ts, content, prev_hash, hash, workflow_id, run_id)
         VALUES ($1, $2, gen_random_uuid(), $3, $4, '{}', $5, repeat('a', 64), 'x', 'x')`,
        [sid, seq, type, ts, prev],
      );
    await expect(insert(head.seq, head.hash)).rejects.toThrow(/seq must be|duplicate key/); // fork at the head
    await expect(insert(head.seq + 2, head.hash)).rejects.toThrow(/seq must be/); // gap
    await expect(insert(head.seq + 1, 'b'.repeat(64))).rejects.toThrow(/prev_hash/); // broken link
    await expect(insert(head.seq + 1, head.hash, 'USER_INPUT', Number(head.ts) - 1000)).rejects.toThrow(/before the previous/); // time going back
    await expect(insert(head.seq + 1, head.hash, 'SESSION_CREATE')).rejects.toThrow(/SESSION_CREATE/);
  });
});
