/**
 * The writer's transaction against the real PostgreSQL, without Temporal: SessionStore.write
 * sends BEGIN together with the session's advisory lock and the lookup of dedup candidates and
 * the chain head (literals, escaped), and the insert together with COMMIT: two round trips.
 * Checked here: what the lookup finds (by id across sessions, by key only within the session,
 * the head without its content, null head for a new session), that the lock really serialises
 * two writers of one session, that ids and content needing escaping are stored exactly, and
 * that an insert refused at COMMIT time rolls the whole batch back.
 */
import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { createSessionActivities } from '../../activities/sessions';
import { createPool } from '../../lib/db';
import { EventType } from '../../lib/domain/sessions';
import { SessionStore } from '../../lib/store/sessions';
import { eventually, testEnv } from '../support';

let pool: Pool;
let store: SessionStore;
let writer: ReturnType<typeof createSessionActivities>;

beforeAll(() => {
  pool = createPool(testEnv().appUrl, { max: 4 });
  store = new SessionStore(pool);
  writer = createSessionActivities(pool);
});

afterAll(async () => {
  await pool?.end();
});

const NOTHING = { eventIds: [], idempotencyKeys: [] };
const sid = (tag: string) => `wtx_${tag}_${process.pid}_${Date.now().toString(36)}`;

async function newSession(sessionId: string, appends: { key?: string; content: { [k: string]: string } }[]) {
  await writer.appendEvents({ sessionId, workflowId: 'test', runId: 'test', create: { timelineId: randomUUID() }, items: [{ eventId: randomUUID(), type: EventType.SessionCreate, content: {} }] });
  const out = await writer.appendEvents({
    sessionId,
    workflowId: 'test',
    runId: 'test',
    items: appends.map((a) => ({ eventId: randomUUID(), type: EventType.UserInput, content: a.content, idempotencyKey: a.key })),
  });
  return out.map((o) => (o.ok ? o.result.event : undefined)!);
}

test('known() finds events by id in any session, by key only in this one, and the head without content', async () => {
  const a = sid('a');
  const b = sid('b');
  const [a1, a2] = await newSession(a, [{ key: 'k1', content: { big: 'x'.repeat(1000) } }, { key: 'k2', content: { n: '2' } }]);
  const [b1] = await newSession(b, [{ key: 'k1', content: { n: 'b' } }]);

  // By key: only session a's k1, though session b holds a k1 too.
  const r = await store.write(a, { eventIds: [randomUUID()], idempotencyKeys: ['k1'] }, async (_tx, found) => found);
  expect(r.known.map((e) => e.event_id)).toEqual([a1.event_id]);
  expect(r.known[0].content).toEqual({ big: 'x'.repeat(1000) });
  // By id: any session's event (a retried client event id is refused if it is another session's).
  const byId = await store.write(a, { eventIds: [b1.event_id], idempotencyKeys: [] }, async (_tx, found) => found);
  expect(byId.known.map((e) => e.session_id)).toEqual([b]);
  expect(r.head).toEqual({ seq: a2.seq, hash: a2.hash, ts: a2.ts, type: EventType.UserInput });
  expect(Math.abs(r.nowMs - Date.now())).toBeLessThan(60_000);

  const none = await store.write(sid('none'), { eventIds: [randomUUID()], idempotencyKeys: [] }, async (_tx, found) => found);
  expect(none).toMatchObject({ known: [], head: null });
});

test('two writers of one session are serialised by the lock taken with BEGIN', async () => {
  const s = sid('lock');
  await newSession(s, []);
  const order: string[] = [];
  let releaseFirst!: () => void;
  const firstHolds = new Promise<void>((r) => (releaseFirst = r));
  let firstIn!: () => void;
  const firstEntered = new Promise<void>((r) => (firstIn = r));
  const first = store.write(s, NOTHING, async () => {
    order.push('first in');
    firstIn();
    await firstHolds;
    order.push('first out');
  });
  await firstEntered;
  const second = store.write(s, NOTHING, async () => void order.push('second in'));
  // The second writer waits on the lock (this database's lock table says so); it must not have got in.
  const waiting = async () =>
    (await pool.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")).rows[0].n > 0;
  await eventually('the second writer to wait on the session lock', waiting, { stepMs: 20 });
  expect(order).toEqual(['first in']);
  releaseFirst();
  await Promise.all([first, second]);
  expect(order).toEqual(['first in', 'first out', 'second in']);
});

test('a session id with a quote and a backslash is escaped in the lock statement', async () => {
  // Such an id never reaches a table (the API and the id check refuse it); the lock must still hold.
  const odd = `wtx_o'd\\d_${Date.now().toString(36)}`;
  const r = await store.write(odd, NOTHING, async (_tx, found) => found);
  expect(r.head).toBeNull();
});

test('content, keys and ids that need escaping are stored exactly as sent', async () => {
  const s = sid('esc');
  const content = { q: "it's", bs: 'a\\b\\', nl: 'line\nnext', uni: 'é🙂\u2028', dollar: '$1 $$ $tag$', nested: [null, 1.5, -0, 1e21, true] };
  const [e] = await newSession(s, [{ key: "k'\\ey", content: content as unknown as { [k: string]: string } }]);
  const { rows } = await pool.query('SELECT content, idempotency_key FROM timeline_events WHERE session_id = $1 AND seq = $2', [s, e.seq]);
  expect(rows[0].content).toEqual(JSON.parse(JSON.stringify(content)));
  expect(rows[0].idempotency_key).toBe("k'\\ey");
  // The stored row verifies against the hash the writer computed from what was sent.
  expect((await store.verify(s)).ok).toBe(true);
});

test('an insert refused when it is sent with COMMIT rolls the batch back and rejects', async () => {
  const s = sid('refused');
  const [e] = await newSession(s, [{ content: { n: '1' } }]);
  // A row whose seq is already taken: the primary key refuses it at the INSERT sent with COMMIT.
  const attempt = store.write(s, NOTHING, async (tx) => {
    tx.insertEvents([{ ...e, content: { n: '1' }, event_id: randomUUID() }], { workflowId: 'test', runId: 'test' });
  });
  await expect(attempt).rejects.toMatchObject({ code: expect.stringMatching(/^23/) });
  const { rows } = await pool.query('SELECT count(*)::int AS n FROM timeline_events WHERE session_id = $1', [s]);
  expect(rows[0].n).toBe(2);
  // The connection went back to the pool usable: the next write works.
  expect(await store.write(s, NOTHING, async (_tx, found) => found.head?.seq)).toBe(e.seq);
});
