/**
 * GET /v1/signals and /v1/signals/:id over HTTP against the real system: stored signals newest
 * first, paged by a keyset cursor that neither repeats nor skips rows when signals arrive
 * meanwhile; a key bound to agents sees only signals sent by keys within its bounds (the
 * rule in lib/store/signals.ts visibleTo); a cursor this endpoint did not issue is a 400
 * naming `cursor`.
 */
import { encodeKeyset } from '../../lib/platform/keyset';
import { refusal, startTestSystem, TestSystem } from '../support';

const KEYS = { admin: 'sl-admin-key-0001', a: 'sl-agent-a-key-01', b: 'sl-agent-b-key-01', team: 'sl-team-key-00001', ab: 'sl-agent-ab-key-1' } as const;
let sys: TestSystem;
const sfx = `${process.pid}-${Date.now().toString(36)}`;
const as = (k: keyof typeof KEYS) => sys.tk.with({ apiKey: KEYS[k] });

beforeAll(async () => {
  sys = await startTestSystem({
    apiKeys: [`${KEYS.admin}:admin`, `${KEYS.a}:agent@agent-a`, `${KEYS.b}:agent@agent-b`, `${KEYS.team}:agent@team-*`, `${KEYS.ab}:agent@agent-a|agent-b`].join(','),
  });
});
afterAll(async () => {
  await sys?.stop();
});

test('newest first, paged by cursor without repeats or gaps, filtered by name and source', async () => {
  const name = `sl-order-${sfx}`;
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await as('admin').signals.send({ name, value: i, signal_id: `${name}-${i}` })).signal_id);
  const first = await as('admin').signals.list({ name, limit: 2 });
  expect(first.signals.map((s) => s.signal_id)).toEqual([ids[4], ids[3]]);
  expect(first.signals[0]).toMatchObject({ name, value: 4, values: {}, source: 'api', agents: null });
  expect(first.next_cursor).toEqual(expect.any(String));
  // A signal arriving between pages goes on top; the next page continues where the first ended.
  await as('admin').signals.send({ name, signal_id: `${name}-late` });
  const second = await as('admin').signals.list({ name, limit: 2, cursor: first.next_cursor! });
  expect(second.signals.map((s) => s.signal_id)).toEqual([ids[2], ids[1]]);
  const last = await as('admin').signals.list({ name, limit: 2, cursor: second.next_cursor! });
  expect(last.signals.map((s) => s.signal_id)).toEqual([ids[0]]);
  expect(last.next_cursor).toBeNull();
  // Unfiltered, the newest signal of all is on top; source=task_run leaves API signals out.
  expect((await as('admin').signals.list({ limit: 1 })).signals[0].signal_id).toBe(`${name}-late`);
  expect((await as('admin').signals.list({ name, source: 'task_run' })).signals).toEqual([]);
  expect(await as('admin').signals.get(ids[2])).toMatchObject({ signal_id: ids[2], name, value: 2 });
});

test("a bound key sees only signals sent by keys within its bounds; another agent's is 404 by id", async () => {
  const name = `sl-bounds-${sfx}`;
  const sent = {
    a: (await as('a').signals.send({ name, signal_id: `${name}-a` })).signal_id,
    b: (await as('b').signals.send({ name, signal_id: `${name}-b` })).signal_id,
    team: (await as('team').signals.send({ name, signal_id: `${name}-team` })).signal_id,
    ab: (await as('ab').signals.send({ name, signal_id: `${name}-ab` })).signal_id,
    all: (await as('admin').signals.send({ name, signal_id: `${name}-all` })).signal_id,
  };
  const seen = async (k: keyof typeof KEYS) => (await as(k).signals.list({ name })).signals.map((s) => s.signal_id);
  expect(await seen('admin')).toEqual([sent.all, sent.ab, sent.team, sent.b, sent.a]);
  expect(await seen('a')).toEqual([sent.a]);
  expect(await seen('b')).toEqual([sent.b]);
  // agent-a|agent-b sees each one's and its own (every agent they reach is within it), not team-*'s.
  expect(await seen('ab')).toEqual([sent.ab, sent.b, sent.a]);
  expect(await seen('team')).toEqual([sent.team]);
  expect((await as('admin').signals.get(sent.team)).agents).toEqual(['team-*']);

  const hidden = await refusal(as('a').signals.get(sent.b));
  expect(hidden.status).toBe(404);
  expect(JSON.stringify(hidden.body)).not.toContain('agent-b');
  expect((await refusal(as('a').signals.get(`${name}-nothing`))).status).toBe(404);
  expect(await as('a').signals.get(sent.a)).toMatchObject({ signal_id: sent.a, agents: ['agent-a'] });
});

test('a cursor this endpoint did not issue is a 400 naming cursor', async () => {
  for (const cursor of ['not-a-cursor', encodeKeyset({ time: -1, id: 'x', order: 'newest' }), encodeKeyset({ time: 5, id: 'x', order: 'oldest' }), Buffer.from('[1e400,"x","newest"]').toString('base64url')]) {
    const r = await refusal(as('admin').signals.list({ cursor }));
    expect({ cursor, status: r.status, field: r.body.errors?.[0]?.field }).toEqual({ cursor, status: 400, field: 'cursor' });
  }
  const bad = await refusal(as('admin').signals.list({ name: 'bad name' }));
  expect({ status: bad.status, field: bad.body.errors?.[0]?.field }).toEqual({ status: 400, field: 'name' });
});
