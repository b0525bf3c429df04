/**
 * intent_heads (schema/006, 009, 010): the derived latest state per intent that the pending query
 * (and the reconcile sweep, through awaiting_retry) reads.
 * It follows every transition through its trigger (including a re-open), agrees with the
 * append-only intent_transitions, and the application role can only read it. Tampering with
 * it (as the owner) hides an open intent from pending but not from verify; the check finds
 * it and the rebuild restores it from the chains.
 */
import { IntentStore } from '../../lib/store/intents';
import { startTestSystem, TestSystem } from '../support';

let sys: TestSystem;
beforeAll(async () => {
  sys = await startTestSystem();
});
afterAll(async () => {
  await sys?.stop();
});

const head = async (id: string) => (await sys.pool.query('SELECT seq::int, status FROM intent_heads WHERE event_id = $1', [id])).rows[0];

test('follows each transition; pending reads it, re-opened intents included', async () => {
  const id = `HEADS-${process.pid}-${Date.now()}`;
  const domain = `heads${process.pid}`;
  await sys.tk.intents.create({ event_id: id, domain, action: 'deploy' });
  expect(await head(id)).toEqual({ seq: 1, status: 'requested' });
  await sys.tk.intents.transition(id, { status: 'blocked', data: { error: 'e', next_step: 'n' } });
  expect(await head(id)).toEqual({ seq: 2, status: 'blocked' });
  expect(await sys.tk.intents.pending({ domain })).toEqual([]);
  await sys.tk.intents.transition(id, { status: 'requested', note: 'retry' });
  expect(await head(id)).toEqual({ seq: 3, status: 'requested' });
  expect((await sys.tk.intents.pending({ domain })).map((i) => i.event_id)).toEqual([id]);
  await sys.tk.intents.transition(id, { status: 'done' });
  expect(await head(id)).toEqual({ seq: 4, status: 'done' });
  expect(await sys.tk.intents.pending({ domain })).toEqual([]);
});

test('agrees with the last transition of every intent', async () => {
  const { rows } = await sys.pool.query(
    `SELECT count(*)::int AS n FROM intents i
       LEFT JOIN intent_heads h USING (event_id)
       LEFT JOIN LATERAL (SELECT seq, status FROM intent_transitions t WHERE t.event_id = i.event_id ORDER BY seq DESC LIMIT 1) l ON true
      WHERE h.seq IS DISTINCT FROM l.seq OR h.status IS DISTINCT FROM l.status`,
  );
  expect(rows[0].n).toBe(0);
});

test('the application role may only read it', async () => {
  const { rows } = await sys.pool.query('SELECT event_id FROM intent_heads LIMIT 1');
  expect(rows).toHaveLength(1);
  for (const sql of [
    `UPDATE intent_heads SET status = 'done' WHERE event_id = '${rows[0].event_id}'`,
    `DELETE FROM intent_heads WHERE event_id = '${rows[0].event_id}'`,
    `INSERT INTO intent_heads (event_id, seq, status) VALUES ('${rows[0].event_id}-x', 1, 'requested')`,
  ]) {
    await expect(sys.pool.query(sql)).rejects.toThrow(/permission denied/);
  }
});

test('created_ts is the intent\'s, and pending answers oldest first across domains', async () => {
  const domain = `order${process.pid}`;
  const ids = [0, 1, 2].map((k) => `ORDER-${process.pid}-${Date.now()}-${k}`);
  for (const id of ids) await sys.tk.intents.create({ event_id: id, domain, action: 'step' });
  const { rows } = await sys.pool.query(
    'SELECT h.event_id FROM intent_heads h JOIN intents i USING (event_id) WHERE i.domain = $1 AND h.created_ts = i.created_ts ORDER BY h.created_ts, h.event_id',
    [domain],
  );
  expect(rows.map((r) => r.event_id)).toEqual(ids);
  expect((await sys.tk.intents.pending({ domain })).map((i) => i.event_id)).toEqual(ids);
  expect((await sys.tk.intents.pending({ domain, older_than: 3600 })).map((i) => i.event_id)).toEqual([]);
});

test('tampering with intent_heads hides nothing from verify; the check reports it and the rebuild restores it', async () => {
  const store = new IntentStore(sys.pool);
  const domain = `tamper${process.pid}`;
  const id = `TAMPER-${process.pid}-${Date.now()}`;
  await sys.tk.intents.create({ event_id: id, domain, action: 'deploy' });
  expect(await store.checkHeads()).toEqual([]);
  // The owner (who may change the derived table, unlike the application) marks it done.
  await sys.ownerPool.query(`UPDATE intent_heads SET status = 'done', seq = 7 WHERE event_id = $1`, [id]);
  expect(await sys.tk.intents.pending({ domain })).toEqual([]);
  expect((await sys.tk.intents.verify(id)).ok).toBe(true);
  expect(await store.checkHeads()).toEqual([{ event_id: id, stored: { seq: 7, status: 'done' }, expected: { seq: 1, status: 'requested' } }]);
  expect(await store.rebuildHeads()).toBe(1);
  expect(await store.checkHeads()).toEqual([]);
  expect(await store.rebuildHeads()).toBe(0);
  expect((await sys.tk.intents.pending({ domain })).map((i) => i.event_id)).toEqual([id]);
  expect(await head(id)).toEqual({ seq: 1, status: 'requested' });
});

test('awaiting_retry marks exactly the heads blocked with retry and a retry_after; the check and rebuild cover it', async () => {
  const store = new IntentStore(sys.pool);
  const domain = `retry${process.pid}`;
  const id = `RETRYHEAD-${process.pid}-${Date.now()}`;
  const flag = async () => (await sys.pool.query('SELECT awaiting_retry FROM intent_heads WHERE event_id = $1', [id])).rows[0].awaiting_retry;
  const later = new Date(Date.now() + 3600_000).toISOString();
  await sys.tk.intents.create({ event_id: id, domain, action: 'deploy' });
  expect(await flag()).toBe(false);
  await sys.tk.intents.transition(id, { status: 'blocked', data: { error: 'e', next_step: 'n', retry: true } });
  expect(await flag()).toBe(false); // no retry_after: nothing re-opens it by itself
  await sys.tk.intents.transition(id, { status: 'requested' });
  await sys.tk.intents.transition(id, { status: 'blocked', data: { error: 'e', next_step: 'n', retry: true, retry_after: later } });
  expect(await flag()).toBe(true);
  expect((await store.awaitingRetry({ domain, limit: 10 })).map((i) => i.event_id)).toContain(id);
  await sys.tk.intents.transition(id, { status: 'requested' });
  expect(await flag()).toBe(false);
  await sys.tk.intents.transition(id, { status: 'blocked', data: { error: 'e', next_step: 'n', retry: false, retry_after: later } });
  expect(await flag()).toBe(false);
  expect((await store.awaitingRetry({ domain, limit: 10 })).map((i) => i.event_id)).not.toContain(id);

  await sys.ownerPool.query('UPDATE intent_heads SET awaiting_retry = true WHERE event_id = $1', [id]);
  expect(await store.checkHeads()).toEqual([{ event_id: id, stored: { seq: 6, status: 'blocked' }, expected: { seq: 6, status: 'blocked' } }]);
  expect(await store.rebuildHeads()).toBe(1);
  expect(await store.checkHeads()).toEqual([]);
  expect(await flag()).toBe(false);
});

test('tags, note, data and dedupe key that need escaping are stored and answered exactly as sent', async () => {
  // The writer sends its inserts as literals with COMMIT (lib/store/literals.ts): quotes,
  // backslashes, $-quotes and non-ASCII must come back byte for byte, and the chain verify.
  const id = `ESC-${process.pid}-${Date.now()}`;
  const odd = `it's a \\ back'slash $1 $$x$$ é🙂`;
  const data = { q: odd, nested: [odd, { [odd]: odd }], n: 1.25 };
  // Dedupe keys are printable ASCII: the quote, backslash and $ cases still apply.
  const key = `k'\\$$q$$-${id}`;
  await sys.tk.intents.create({ event_id: id, domain: `esc${process.pid}`, action: odd, tags: [odd, 'plain', "'"], note: odd, data, dedupe_key: key });
  await sys.tk.intents.transition(id, { status: 'done', note: `${odd} done`, data });
  const got = await sys.tk.intents.get(id);
  expect(got).toMatchObject({ action: odd, tags: [odd, 'plain', "'"], dedupe_key: key });
  expect(got.transitions.map((t) => [t.note, t.data])).toEqual([
    [odd, data],
    [`${odd} done`, data],
  ]);
  expect(await sys.tk.intents.verify(id)).toMatchObject({ ok: true, header_ok: true, checked: 2 });
  // The dedupe key was stored as sent: the same key is refused as held by this intent.
  await expect(sys.tk.intents.create({ event_id: `${id}-again`, domain: `esc${process.pid}`, action: 'again', dedupe_key: key })).rejects.toMatchObject({ status: 409 });
});
