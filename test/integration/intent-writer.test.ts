/**
 * The intent writer (activities/intents recordTransition) on the chain head the intent workflow
 * hands over: written without the lookup, and whatever the lookup would have found (an earlier
 * attempt of the same request, a head that is not the stored one, a transition id another intent
 * holds, a head whose state would refuse the move) is refused by the table or by the decision and
 * decided again with the lookup, answering exactly as a write with the lookup answers.
 * Called directly, on the test system's PostgreSQL, so each case can hand the head it needs.
 */
import { randomUUID } from 'node:crypto';
import { createIntentActivities, type RecordTransitionInput } from '../../activities/intents';
import { SessionClient } from '../../clients/sessions';
import { ErrorCode } from '../../lib/domain/errors';
import { Actor, IntentStatus, intentWorkflowId, type IntentHead, type IntentHeader, type StoredTransition } from '../../lib/domain/intents';
import { TUNABLE } from '../../lib/domain/limits';
import { metrics } from '../../lib/metrics';
import { databaseInstanceId } from '../../lib/store/instance';
import { IntentStore } from '../../lib/store/intents';
import { startTestSystem, TestSystem } from '../support';

let sys: TestSystem;
let store: IntentStore;
let writer: ReturnType<typeof createIntentActivities>;
let instance: string;
beforeAll(async () => {
  sys = await startTestSystem({ worker: false });
  store = new IntentStore(sys.pool);
  // linkToSession is not called here (the intents have no session); the writer needs one to exist.
  const sessions = new SessionClient({ client: sys.client, pool: sys.pool, taskQueue: sys.config.taskQueue, maxContentBytes: TUNABLE.maxContentBytes.default, updatesPerRun: TUNABLE.updatesPerRun.default, writeTimeoutMs: 8_000 });
  writer = createIntentActivities({ pool: sys.pool, sessions });
  instance = await databaseInstanceId(sys.pool);
});
afterAll(async () => {
  await sys?.stop();
});

async function writes(path: string, reason: string): Promise<number> {
  return (await metrics.intentWrites.get()).values.find((v) => v.labels.path === path && v.labels.reason === reason)?.value ?? 0;
}

const headOf = (t: StoredTransition, status = t.content.to): IntentHead => ({ seq: t.seq, hash: t.hash, ts: t.ts, status });

function call(eventId: string, to: IntentStatus, extra: Partial<RecordTransitionInput> & { transitionId?: string; note?: string } = {}) {
  const { transitionId, note, ...rest } = extra;
  return writer.recordTransition({
    eventId,
    databaseInstance: instance,
    workflowId: intentWorkflowId(eventId),
    runId: 'direct',
    transition: { transitionId: transitionId ?? randomUUID(), to, data: {}, ...(note !== undefined ? { note } : {}) },
    actor: Actor.Agent,
    ...rest,
  });
}

async function created(name: string): Promise<StoredTransition> {
  const eventId = `${name}-${process.pid}-${Date.now()}`;
  const header: IntentHeader = { event_id: eventId, domain: 'writer', action: name, tags: [], session_id: null, dedupe_key: null, ttl_s: 3600 };
  const before = await writes('lookup', 'create');
  const o = await call(eventId, IntentStatus.Requested, { create: header });
  if (!o.ok) throw new Error(`create failed: ${o.error.message}`);
  expect((await writes('lookup', 'create')) - before).toBe(1);
  return o.transition;
}

const seqs = async (eventId: string) => (await store.transitions(eventId)).map((t) => t.seq);

test('a transition on the stored head is written without the lookup, chained after it', async () => {
  const first = await created('W-OK');
  const before = await writes('on_head', '');
  const o = await call(first.event_id, IntentStatus.InProgress, { head: headOf(first) });
  expect(o).toMatchObject({ ok: true, deduplicated: false, transition: { seq: 2, prev_hash: first.hash, content: { from: 'requested', to: 'in-progress' } } });
  expect((await writes('on_head', '')) - before).toBe(1);
  expect((await store.verify(first.event_id)).ok).toBe(true);
});

test('a retry of a committed transition on the head from before it is answered with the stored one, not written twice', async () => {
  const first = await created('W-RETRY');
  const transitionId = randomUUID();
  const once = await call(first.event_id, IntentStatus.InProgress, { head: headOf(first), transitionId });
  const conflicts = await writes('lookup', 'conflict');
  const again = await call(first.event_id, IntentStatus.InProgress, { head: headOf(first), transitionId });
  if (!once.ok) throw new Error('the first write failed');
  expect(again).toEqual({ ...once, deduplicated: true });
  expect((await writes('lookup', 'conflict')) - conflicts).toBe(1);
  expect(await seqs(first.event_id)).toEqual([1, 2]);
});

test('a head that is not the stored one (wrong hash) is refused by the table and the transition is written on the stored head', async () => {
  const first = await created('W-WRONG');
  const conflicts = await writes('lookup', 'conflict');
  const o = await call(first.event_id, IntentStatus.InProgress, { head: { ...headOf(first), hash: 'f'.repeat(64) } });
  expect(o).toMatchObject({ ok: true, transition: { seq: 2, prev_hash: first.hash } });
  expect((await writes('lookup', 'conflict')) - conflicts).toBe(1);
  expect((await store.verify(first.event_id)).ok).toBe(true);
});

test('a head whose state would refuse the move is decided on the stored state: legal there, it is written; illegal there, it is refused', async () => {
  const first = await created('W-STATE');
  const refusals = await writes('lookup', 'refusal');
  // The handed head says done (nothing may follow); the stored one is requested.
  const o = await call(first.event_id, IntentStatus.InProgress, { head: headOf(first, IntentStatus.Done) });
  expect(o).toMatchObject({ ok: true, transition: { seq: 2, content: { from: 'requested', to: 'in-progress' } } });
  expect((await writes('lookup', 'refusal')) - refusals).toBe(1);
  if (!o.ok) throw new Error('unreachable');
  const done = await call(first.event_id, IntentStatus.Done, { head: headOf(o.transition) });
  if (!done.ok) throw new Error('done failed');
  const after = await call(first.event_id, IntentStatus.InProgress, { head: headOf(done.transition) });
  expect(after).toMatchObject({ ok: false, error: { code: ErrorCode.InvalidTransition } });
  expect(await seqs(first.event_id)).toEqual([1, 2, 3]);
});

test('a transition id another intent holds is refused, naming the field, and nothing is written', async () => {
  const a = await created('W-ID-A');
  const b = await created('W-ID-B');
  const taken = await call(a.event_id, IntentStatus.InProgress, { head: headOf(a) });
  if (!taken.ok) throw new Error('the first write failed');
  const o = await call(b.event_id, IntentStatus.InProgress, { head: headOf(b), transitionId: taken.transition.transition_id });
  expect(o).toMatchObject({ ok: false, error: { code: ErrorCode.Validation, errors: [{ field: 'transition_id' }] } });
  expect(await seqs(b.event_id)).toEqual([1]);
});

test('without a handed head (workflow code from before it) the writer looks up', async () => {
  const first = await created('W-NOHEAD');
  const before = await writes('lookup', 'no_head');
  const o = await call(first.event_id, IntentStatus.InProgress, { note: 'working' });
  expect(o).toMatchObject({ ok: true, transition: { seq: 2, content: { to: 'in-progress', note: 'working' } } });
  expect((await writes('lookup', 'no_head')) - before).toBe(1);
});
