/**
 * The session link over HTTP: an intent created with a session_id has every transition,
 * its own and the system's, appended to that session's timeline as INTENT_TRANSITION, in
 * order, in the session's hash chain (which still verifies); the LLM context shows them in
 * words; and callers cannot append that type themselves.
 */
import { createHash } from 'node:crypto';
import { canonicalize } from '../../lib/domain/canonical-json';
import { refusal, uniqueSessionId, useTestSystem, eventually } from '../support';

const t = useTestSystem();

/** The session's INTENT_TRANSITION events once there are at least `want`. */
const sessionEvents = (sid: string, want: number) =>
  eventually(`${want} INTENT_TRANSITION events in ${sid}`, async () => {
    const r = await t.tk.events(sid, { types: 'INTENT_TRANSITION', limit: 100 });
    return r.events.length >= want ? r.events : undefined;
  }, { stepMs: 100, errors: 'throw' });

test('every transition of a linked intent is in the session chain, in order, with a digest of its data; the chain verifies', async () => {
  const sid = uniqueSessionId('intent_link');
  expect((await t.tk.call('createSession', { body: { session_id: sid } })).status).toBe(201);
  const id = `LINK-${process.pid}-${Date.now()}`;
  const created = await t.tk.call('createIntent', { body: { event_id: id, domain: 'code', action: 'rename-UserService', session_id: sid, ttl_s: 1 } });
  expect(created.status).toBe(201);
  // The TTL of 1 s expires it (a system transition), then the agent retries and finishes.
  await eventually('the TTL to expire it', async () => (await t.tk.intents.get(id)).status === 'blocked', { stepMs: 100, errors: 'throw' });
  const patch = (body: { status: 'requested' | 'done'; note: string; data?: { files: number } }) => t.tk.call('transitionIntent', { params: { eventId: id }, body });
  expect((await patch({ status: 'requested', note: 'retrying by hand' })).status).toBe(200);
  const done = await patch({ status: 'done', note: 'renamed', data: { files: 3 } });
  expect(done.status).toBe(200);

  const events = await sessionEvents(sid, 4);
  const content = (e: (typeof events)[number]) => e.content as { event_id: string; from: string | null; to: string; actor: string; data_sha256: string };
  expect(events.map((e) => [content(e).from, content(e).to, content(e).actor])).toEqual([
    [null, 'requested', 'agent'],
    ['requested', 'blocked', 'system'],
    ['blocked', 'requested', 'agent'],
    ['requested', 'done', 'agent'],
  ]);
  const detail = await t.tk.intents.get(id);
  const last = events[3];
  expect(last.content).toMatchObject({ event_id: id, action: 'rename-UserService', seq: 4, note: 'renamed', transition_hash: detail.hash });
  expect(content(last).data_sha256).toBe(createHash('sha256').update(canonicalize({ files: 3 })).digest('hex'));
  // The session event id is the transition id: a retried link is answered, never doubled.
  expect(last.event_id).toBe(detail.transitions[3].transition_id);

  const v = await t.tk.call('verifySession', { params: { id: sid } });
  expect(v.status).toBe(200);
  expect(v.body.ok).toBe(true);
  expect(v.body.checked).toBe(5);

  const ctx = await t.tk.call('getContext', { params: { id: sid } });
  expect(ctx.status).toBe(200);
  expect(ctx.body.text).toContain(`Intent ${id} (rename-UserService): new → requested`);
  expect(ctx.body.text).toContain(`Intent ${id} (rename-UserService): requested → blocked: expired: still requested after its time-to-live of 1 s (by Timekeeper)`);
  expect(ctx.body.text).toContain(`Intent ${id} (rename-UserService): requested → done: renamed`);
});

test('callers cannot append INTENT_TRANSITION themselves', async () => {
  const sid = uniqueSessionId('intent_forge');
  await t.tk.createSession({ session_id: sid });
  const r = await refusal(t.tk.append(sid, { type: 'INTENT_TRANSITION', content: { event_id: 'X', from: 'requested', to: 'done' } }));
  expect(r.status).toBe(400);
  expect(r.body.errors?.[0]?.field).toBe('type');
  expect((await t.tk.events(sid)).events.map((e) => e.type)).toEqual(['SESSION_CREATE']);
});
