/**
 * The session workflow against the real Temporal server and PostgreSQL: one linear chain
 * under concurrent writers, continue-as-new that carries the head, idempotent appends,
 * idle timeout, and tamper detection by verify.
 */
import type { PoolClient } from 'pg';
import { computeEventHash } from '../../lib/hash-chain';
import { SessionStore } from '../../lib/store/sessions';
import { LIMITS } from '../../lib/domain/limits';
import type { TimekeeperClient } from '../../sdk/client';
import { settle, startTestSystem, TestSystem, uniqueSessionId } from '../support';
import { asDatabaseAttacker } from '../support/db-attacker';

let sys: TestSystem;
afterEach(async () => {
  await sys?.stop();
});

async function createSession(s: TestSystem, id: string, extra: Omit<Parameters<TimekeeperClient['createSession']>[0], 'session_id'> = {}) {
  const r = await s.tk.call('createSession', { body: { session_id: id, ...extra } });
  expect(r.status).toBe(201);
  return r.body;
}

async function chain(s: TestSystem, id: string) {
  const { rows } = await s.pool.query('SELECT seq, event_id, event_type, hash, prev_hash, content FROM timeline_events WHERE session_id = $1 ORDER BY seq', [id]);
  return rows.map((r) => ({ ...r, seq: Number(r.seq) }));
}

/** Plays a superuser who disables the append-only triggers, edits rows, and puts the triggers back. */
async function asAttacker(s: TestSystem, edit: (c: PoolClient) => Promise<void>) {
  await asDatabaseAttacker(s.ownerPool, 'timeline_events', edit);
}

function expectLinear(rows: { seq: number; hash: string; prev_hash: string | null }[]) {
  rows.forEach((r, i) => {
    expect(r.seq).toBe(i + 1);
    expect(r.prev_hash).toBe(i === 0 ? null : rows[i - 1].hash);
  });
}

test('40 concurrent writers on one session produce one linear chain with every acknowledged event once', async () => {
  sys = await startTestSystem();
  const id = uniqueSessionId('concurrent');
  await createSession(sys, id);
  const writers = 40;
  const results = await Promise.all(
    Array.from({ length: writers }, (_, i) =>
      settle(sys.tk.call('appendEvent', { params: { id }, body: { type: i % 2 ? 'LLM_RESPONSE' : 'USER_INPUT', content: { writer: i } } })),
    ),
  );
  expect(results.map((r) => r.status)).toEqual(Array(writers).fill(201));
  const rows = await chain(sys, id);
  expect(rows).toHaveLength(writers + 1);
  expectLinear(rows);
  // Every acknowledged event is stored exactly where its acknowledgement said.
  for (const r of results) {
    const stored = rows.find((x) => x.event_id === r.body.event_id)!;
    expect(stored.seq).toBe(r.body.seq);
    expect(stored.hash).toBe(r.body.hash);
  }
  expect(new Set(rows.slice(1).map((r) => (r.content as { writer: number }).writer)).size).toBe(writers);
  expect((await new SessionStore(sys.pool).verify(id)).ok).toBe(true);
});

test('continue-as-new carries the chain head: appends across several runs stay one chain', async () => {
  // A run rotates once quiet after 5 appends, so it holds at most 4 + one burst of 6:
  // 24 appends need at least 3 runs however the bursts interleave.
  sys = await startTestSystem({ config: { updatesPerRun: 5 } });
  const id = uniqueSessionId('rotate');
  await createSession(sys, id);
  for (let round = 0; round < 4; round++) {
    // Bursts of 6 concurrent appends, so rotation happens with updates in flight.
    const burst = await Promise.all(
      Array.from({ length: 6 }, (_, i) => settle(sys.tk.call('appendEvent', { params: { id }, body: { type: 'USER_INPUT', content: { round, i } } }))),
    );
    expect(burst.map((r) => r.status)).toEqual(Array(6).fill(201));
  }
  const rows = await chain(sys, id);
  expect(rows).toHaveLength(25);
  expectLinear(rows);
  const runs = new Set<string>();
  for await (const wf of sys.client.workflow.list({ query: `WorkflowId = 'session/${id}'` })) runs.add(wf.runId);
  expect(runs.size).toBeGreaterThanOrEqual(3);
  const state = await sys.client.workflow.getHandle(`session/${id}`).query('state');
  expect((state as { head: { seq: number } }).head.seq).toBe(25);
  const { rows: writers } = await sys.pool.query('SELECT count(DISTINCT run_id)::int AS n FROM timeline_events WHERE session_id = $1', [id]);
  expect(writers[0].n).toBeGreaterThanOrEqual(3);
  // The short workflow task timeout (issue 18) is set on the start and carried to the latest run.
  const latest = await sys.client.workflow.getHandle(`session/${id}`).describe();
  expect(Number(latest.raw.executionConfig?.defaultWorkflowTaskTimeout?.seconds)).toBe(LIMITS.workflowTaskTimeoutMs / 1000);
});

test('an append retried with the same idempotency key is stored once, also across continue-as-new', async () => {
  sys = await startTestSystem({ config: { updatesPerRun: 3 } });
  const id = uniqueSessionId('idem');
  await createSession(sys, id);
  const body = { type: 'TOOL_CALL', content: { tool_name: 'search', params: { q: 'x' } }, idempotency_key: 'call-1' } as const;
  const append = (b: Parameters<TimekeeperClient['append']>[1]) => sys.tk.call('appendEvent', { params: { id }, body: b });
  const first = await append(body);
  expect(first.status).toBe(201);
  // Simultaneous duplicates, then enough traffic to rotate the run, then a late retry.
  const dupes = await Promise.all(Array.from({ length: 5 }, () => append(body)));
  for (let i = 0; i < 4; i++) await append({ type: 'USER_INPUT', content: { i } });
  const late = await append(body);
  for (const r of [...dupes, late]) {
    expect(r.status).toBe(200);
    expect(r.body.deduplicated).toBe(true);
    expect(r.body.event_id).toBe(first.body.event_id);
    expect(r.body.seq).toBe(first.body.seq);
  }
  const { rows } = await sys.pool.query(`SELECT count(*)::int AS n FROM timeline_events WHERE session_id = $1 AND idempotency_key = 'call-1'`, [id]);
  expect(rows[0].n).toBe(1);
  expect(await chain(sys, id)).toHaveLength(6);
});

test('an idle session is ended with reason idle and archived', async () => {
  sys = await startTestSystem();
  const id = uniqueSessionId('idle');
  await createSession(sys, id, { idle_timeout_s: 2 });
  await sys.tk.append(id, { type: 'USER_INPUT', content: { input: 'hi' } });
  const result = await sys.client.workflow.getHandle(`session/${id}`).result();
  expect(result.reason).toBe('idle');
  const rows = await chain(sys, id);
  expect(rows.map((r) => r.event_type)).toEqual(['SESSION_CREATE', 'USER_INPUT', 'SESSION_END']);
  expect(rows[2].content).toEqual({ reason: 'idle', idle_timeout_s: 2 });
  const d = await sys.tk.call('getSession', { params: { id } });
  expect(d.body.status).toBe('archived');
  const late = await settle(sys.tk.call('appendEvent', { params: { id }, body: { type: 'USER_INPUT', content: {} } }));
  expect(late.status).toBe(409);
});

test('verify names the first tampered seq and why (superuser disables the triggers and edits rows)', async () => {
  sys = await startTestSystem();
  const ids = [uniqueSessionId('tamper_content'), uniqueSessionId('tamper_link'), uniqueSessionId('tamper_gap')];
  for (const id of ids) {
    await createSession(sys, id);
    for (let i = 0; i < 5; i++) await sys.tk.append(id, { type: 'USER_INPUT', content: { i } });
    expect((await sys.tk.call('verifySession', { params: { id } })).body.ok).toBe(true);
  }
  await asAttacker(sys, async (c) => {
    await c.query(`UPDATE timeline_events SET content = '{"i": 99}' WHERE session_id = $1 AND seq = 4`, [ids[0]]);
    // A careful forger re-hashes the row it re-links, so only the link gives it away.
    const { rows } = await c.query('SELECT * FROM timeline_events WHERE session_id = $1 AND seq = 3', [ids[1]]);
    const forged = { ...rows[0], seq: 3, ts: Number(rows[0].ts), prev_hash: '0'.repeat(64) };
    await c.query('UPDATE timeline_events SET prev_hash = $2, hash = $3 WHERE session_id = $1 AND seq = 3', [ids[1], forged.prev_hash, computeEventHash(forged)]);
    await c.query('DELETE FROM timeline_events WHERE session_id = $1 AND seq = 5', [ids[2]]);
  });
  const v = await Promise.all(ids.map((id) => sys.tk.call('verifySession', { params: { id } })));
  expect(v[0].body).toMatchObject({ ok: false, first_bad_seq: 4, reason: 'content_changed', checked: 4, head_seq: 3 });
  expect(v[1].body).toMatchObject({ ok: false, first_bad_seq: 3, reason: 'link_broken' });
  expect(v[2].body).toMatchObject({ ok: false, first_bad_seq: 6, reason: 'gap' });
});

test('verify catches a truncated or re-hashed tail against the head the workflow recorded', async () => {
  sys = await startTestSystem();
  const open = uniqueSessionId('anchor_open');
  const archived = uniqueSessionId('anchor_archived');
  for (const id of [open, archived]) {
    await createSession(sys, id);
    for (let i = 0; i < 5; i++) await sys.tk.append(id, { type: 'USER_INPUT', content: { i } });
  }
  await sys.tk.end(archived, { reason: 'done' });
  await sys.client.workflow.getHandle(`session/${archived}`).result();
  for (const id of [open, archived]) {
    const v = await sys.tk.call('verifySession', { params: { id } });
    expect(v.body).toMatchObject({ ok: true, anchor: { source: 'workflow', ok: true } });
  }

  await asAttacker(sys, async (c) => {
    // Open session: drop the last two events. What remains is a valid chain.
    await c.query('DELETE FROM timeline_events WHERE session_id = $1 AND seq >= 5', [open]);
    // Archived session: rewrite the last event and re-hash it. Also a valid chain.
    const { rows } = await c.query('SELECT * FROM timeline_events WHERE session_id = $1 AND seq = 7', [archived]);
    const forged = { ...rows[0], seq: 7, ts: Number(rows[0].ts), content: { reason: 'nothing happened' } };
    await c.query('UPDATE timeline_events SET content = $2, hash = $3 WHERE session_id = $1 AND seq = 7', [archived, forged.content, computeEventHash(forged)]);
  });
  expect((await new SessionStore(sys.pool).verify(open)).ok).toBe(true); // the chain alone cannot tell
  const vOpen = await sys.tk.call('verifySession', { params: { id: open } });
  expect(vOpen.body).toMatchObject({ ok: false, reason: 'anchor_mismatch', first_bad_seq: 5, anchor: { seq: 6, ok: false } });
  const vArchived = await sys.tk.call('verifySession', { params: { id: archived } });
  expect(vArchived.body).toMatchObject({ ok: false, reason: 'anchor_mismatch', first_bad_seq: 7, anchor: { seq: 7, ok: false } });
});
