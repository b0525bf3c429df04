/**
 * The session workflow's own logic, on the real Temporal dev server, with its writer
 * activity stood in by an in-memory fake (test/support/fake-activities.ts): batching of
 * concurrent appends, how refusals and failures reach callers, validators, ending,
 * continue-as-new and the idle timeout. No PostgreSQL is involved.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection, WithStartWorkflowOperation, WorkflowFailedError, WorkflowHandle, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { DomainError, ErrorCode } from '../../lib/domain/errors';
import { LIMITS } from '../../lib/domain/limits';
import { AppendReceipt, AppendRequest, EventType, SessionSettings, sessionWorkflowId } from '../../lib/domain/sessions';
import type { JsonValue } from '../../lib/domain/canonical-json';
import { EndRequest, appendUpdate, createdUpdate, endUpdate, stateQuery } from '../../workflows/sessions/messages';
import { sessionWorkflow } from '../../workflows/sessions/workflow';
import { FakeSessionWriter, SessionScript, gate } from '../support/fake-activities';
import { testEnv, uniqueSessionId, eventually, sleep, type WaitOptions } from '../support';
import { workflowSinksOff } from '../../worker/otel';


/** How this file polls the fake writer: every 20 ms, a failing check fails the wait. */
const POLL: WaitOptions = { timeoutMs: 10_000, stepMs: 20, errors: 'throw' };
/**
 * Resolves once the server has admitted every update in `updateIds` (sent with those ids): while a
 * write is held they wait there, and reach the workflow in the order admitted once it is let go.
 */
async function admitted(handle: WorkflowHandle, updateIds: string[]): Promise<void> {
  const stage = (updateId: string) =>
    client.workflowService.pollWorkflowExecutionUpdate({
      namespace: client.options.namespace,
      updateRef: { workflowExecution: { workflowId: handle.workflowId }, updateId },
      waitPolicy: { lifecycleStage: ADMITTED },
      identity: 'session-workflow-level test',
    });
  // Not found until the server has it: a throw is "not yet".
  await eventually(`${updateIds.length} updates admitted`, async () => (await Promise.all(updateIds.map(stage))).every((r) => (r.stage ?? 0) >= ADMITTED), { ...POLL, errors: 'retry' });
}
const ADMITTED = temporal.api.enums.v1.UpdateWorkflowExecutionLifecycleStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED;
/** `n` fresh update ids. */
const updateIds = (n: number) => Array.from({ length: n }, () => randomUUID());

let client: Client;
let connection: Connection;
let nativeConnection: NativeConnection;
let worker: Worker;
let running: Promise<void>;
const fake = new FakeSessionWriter();
const taskQueue = `wf-level-${process.pid}-${Date.now()}`;
const handles: WorkflowHandle[] = [];

beforeAll(async () => {
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    /* already installed in this process */
  }
  const env = testEnv();
  connection = await Connection.connect({ address: env.temporalAddress });
  client = new Client({ connection });
  nativeConnection = await NativeConnection.connect({ address: env.temporalAddress });
  worker = await Worker.create({
    connection: nativeConnection,
    taskQueue,
    workflowBundle: { codePath: env.workflowBundle },
    sinks: workflowSinksOff(),
    activities: fake.activities,
  });
  running = worker.run();
});

afterAll(async () => {
  for (const h of handles) {
    try {
      if ((await h.describe()).status.name === 'RUNNING') await h.terminate('test over');
    } catch {
      /* already gone */
    }
  }
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await running;
  await nativeConnection?.close();
  await connection?.close();
});

function settingsFor(sessionId: string, over: Partial<SessionSettings> = {}): SessionSettings {
  return { sessionId, timelineId: randomUUID(), createEventId: randomUUID(), agentId: 'agent-1', maxContentBytes: 10_000, updatesPerRun: 1000, ...over };
}

async function startSession(over: Partial<SessionSettings> = {}, prefix = 'wfl') {
  const sessionId = uniqueSessionId(prefix);
  const settings = settingsFor(sessionId, over);
  const handle = await client.workflow.start(sessionWorkflow, { workflowId: sessionWorkflowId(sessionId), taskQueue, args: [{ settings }] });
  handles.push(handle);
  const created = await handle.executeUpdate(createdUpdate);
  return { sessionId, settings, handle, created };
}

const req = (content: JsonValue, extra: Partial<AppendRequest> = {}): AppendRequest => ({ eventId: randomUUID(), type: EventType.UserInput, content, ...extra });
const endReq = (reason: string, extra: Partial<EndRequest> = {}): EndRequest => ({ eventId: randomUUID(), reason, ...extra });

/** The catalogue error an update failed with (the workflow's refusal), or a test failure. */
async function refusal(p: Promise<unknown>): Promise<DomainError> {
  const err = await p.then(
    (v) => {
      throw new Error(`expected a refusal, got ${JSON.stringify(v)}`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
  const d = DomainError.fromFailure((err as WorkflowUpdateFailedError).cause);
  if (!d) throw new Error(`not a catalogue failure: ${String((err as WorkflowUpdateFailedError).cause)}`);
  return d;
}

/**
 * Holds the session's next write (the first append after create) until released, so that
 * updates sent meanwhile are delivered to the workflow together and written as one batch.
 */
function holdNextWrite(sessionId: string, extra: SessionScript = {}) {
  const g = gate();
  let held = false;
  fake.script(sessionId, {
    ...extra,
    async beforeCall(call) {
      if (!held && !call.create) {
        held = true;
        await g.promise;
      }
      await extra.beforeCall?.(call);
    },
  });
  return g;
}

function expectContiguous(receipts: AppendReceipt[], from: number) {
  expect(receipts.map((r) => r.event.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: receipts.length }, (_, i) => from + i));
}

test('create writes SESSION_CREATE once, and created answers with it', async () => {
  const { sessionId, settings, handle, created } = await startSession({ channel: 'cli', metadata: { k: 'v' } });
  expect(created).toMatchObject({ seq: 1, event_type: EventType.SessionCreate, event_id: settings.createEventId, prev_hash: null, session_id: sessionId });
  expect(created.content).toEqual({ msg: 'session created', session_id: sessionId, timeline_id: settings.timelineId, agent_id: 'agent-1', channel: 'cli', metadata: { k: 'v' } });
  const calls = fake.callsFor(sessionId);
  expect(calls).toHaveLength(1);
  expect(calls[0].create).toBe(true);
  expect(calls[0].items.map((i) => i.type)).toEqual([EventType.SessionCreate]);
  expect(await handle.executeUpdate(createdUpdate)).toEqual(created);
  expect(fake.callsFor(sessionId)).toHaveLength(1);
  expect(await handle.query(stateQuery)).toMatchObject({ sessionId, status: 'open', head: { seq: 1, hash: created.hash }, run: 1, appendsThisRun: 0, queued: 0 });
});

test('a refused create fails the creator with the catalogue code and fails the run', async () => {
  const sessionId = uniqueSessionId('wfl_create_refused');
  fake.script(sessionId, { refuse: (item) => (item.type === EventType.SessionCreate ? DomainError.validation('metadata', 'refused by the fake') : undefined) });
  const start = new WithStartWorkflowOperation(sessionWorkflow, {
    workflowId: sessionWorkflowId(sessionId),
    taskQueue,
    args: [{ settings: settingsFor(sessionId) }],
    workflowIdConflictPolicy: 'FAIL',
  });
  const e = await refusal(client.workflow.executeUpdateWithStart(createdUpdate, { startWorkflowOperation: start }));
  expect(e.code).toBe(ErrorCode.Validation);
  expect(e.errors).toEqual([{ field: 'metadata', reason: 'refused by the fake' }]);
  const handle = await start.workflowHandle();
  const failed = await handle.result().then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(failed).toBeInstanceOf(WorkflowFailedError);
  expect(DomainError.fromFailure((failed as WorkflowFailedError).cause)?.code).toBe(ErrorCode.Validation);
  expect(fake.events(sessionId)).toEqual([]);
});

test('50 concurrent appends are written in a few batches, each caller getting its own event', async () => {
  const { sessionId, handle } = await startSession();
  fake.script(sessionId, { beforeCall: () => sleep(100) });
  const reqs = Array.from({ length: 50 }, (_, i) => req({ i }));
  const receipts = await Promise.all(reqs.map((r) => handle.executeUpdate(appendUpdate, { args: [r] })));
  receipts.forEach((r, i) => {
    expect(r.event.event_id).toBe(reqs[i].eventId);
    expect(r.deduplicated).toBe(false);
  });
  expectContiguous(receipts, 2);
  const calls = fake.appendCallsFor(sessionId);
  expect(calls.length).toBeLessThanOrEqual(10);
  for (const c of calls) expect(c.items.length).toBeLessThanOrEqual(LIMITS.appendBatchEvents);
  expect(calls.flatMap((c) => c.items.map((i) => i.eventId)).sort()).toEqual(reqs.map((r) => r.eventId).sort());
  // The stored chain is in call order: each batch continues where the previous one ended.
  const stored = fake.events(sessionId);
  expect(stored.map((e) => e.seq)).toEqual(Array.from({ length: 51 }, (_, i) => i + 1));
  stored.slice(1).forEach((e, i) => expect(e.prev_hash).toBe(stored[i].hash));
  expect((await handle.query(stateQuery)).head).toEqual({ seq: 51, hash: stored[50].hash, ts: stored[50].ts });
});

test('a queue longer than the batch bound is cut into batches of at most LIMITS.appendBatchEvents', async () => {
  const { sessionId, handle } = await startSession();
  const hold = holdNextWrite(sessionId);
  const first = handle.executeUpdate(appendUpdate, { args: [req({ first: true })] });
  await eventually('the held write', () => fake.appendCallsFor(sessionId).length === 1, POLL);
  const n = LIMITS.appendBatchEvents + 50;
  const burst = Array.from({ length: n }, (_, i) => handle.executeUpdate(appendUpdate, { args: [req({ i })] }));
  // The whole burst waits in the workflow's queue behind the held write.
  await eventually('the burst queued', async () => (await handle.query(stateQuery)).queued === n, POLL);
  hold.open();
  expect((await first).event.seq).toBe(2);
  expectContiguous(await Promise.all(burst), 3);
  const sizes = fake.appendCallsFor(sessionId).slice(1).map((c) => c.items.length);
  expect(sizes.reduce((a, b) => a + b, 0)).toBe(n);
  expect(Math.max(...sizes)).toBe(LIMITS.appendBatchEvents);
  expect(sizes.length).toBeGreaterThanOrEqual(2);
});

test('large contents are batched within the byte bound; an item does not ride along past it', async () => {
  const big = 400 * 1024; // three of these exceed LIMITS.appendBatchBytes (1 MiB), two do not
  const { sessionId, handle } = await startSession({ maxContentBytes: big + 100 });
  const hold = holdNextWrite(sessionId);
  const first = handle.executeUpdate(appendUpdate, { args: [req('small')] });
  await eventually('the held write', () => fake.appendCallsFor(sessionId).length === 1, POLL);
  const ids = updateIds(3);
  const burst = [0, 1, 2].map((i) => handle.executeUpdate(appendUpdate, { args: [req(String(i).repeat(big))], updateId: ids[i] }));
  await admitted(handle, ids);
  hold.open();
  await first;
  expectContiguous(await Promise.all(burst), 3);
  expect(fake.appendCallsFor(sessionId).slice(1).map((c) => c.items.length)).toEqual([2, 1]);
});

test('an item the writer refuses fails only its own caller, with code, message, errors and extra', async () => {
  const { sessionId, handle } = await startSession();
  const head = { seq: 42, hash: 'c'.repeat(64), ts: 7 };
  const hold = holdNextWrite(sessionId, {
    refuse: (item) =>
      (item.content as { refuse?: boolean }).refuse
        ? new DomainError(ErrorCode.WrongExpectedSeq, 'refused by the fake', [{ field: 'expected_seq', reason: 'the chain head is seq 42' }], { current_head: head })
        : undefined,
  });
  const first = handle.executeUpdate(appendUpdate, { args: [req({ first: true })] });
  await eventually('the held write', () => fake.appendCallsFor(sessionId).length === 1, POLL);
  const reqs = [req({ a: 1 }), req({ refuse: true }), req({ b: 2 }), req({ c: 3 })];
  const ids = updateIds(reqs.length);
  const results = reqs.map((r, i) => handle.executeUpdate(appendUpdate, { args: [r], updateId: ids[i] }));
  await admitted(handle, ids);
  hold.open();
  await first;
  const [e, others] = await Promise.all([refusal(results[1]), Promise.all([results[0], results[2], results[3]])]);
  expect(e.toDetail()).toEqual({ code: 'wrong_expected_seq', message: 'refused by the fake', errors: [{ field: 'expected_seq', reason: 'the chain head is seq 42' }], extra: { current_head: head } });
  expectContiguous(others, 3);
  // They were one batch (in the order the server admitted them): the refusal did not fail its neighbours.
  expect(fake.appendCallsFor(sessionId)[1].items.map((i) => i.eventId).sort()).toEqual(reqs.map((r) => r.eventId).sort());
  // And the session is still open.
  expect((await handle.executeUpdate(appendUpdate, { args: [req({ after: true })] })).event.seq).toBe(6);
});

describe.each([
  ['write_failed', () => new DomainError(ErrorCode.WriteFailed, 'nothing was stored: the fake refused the batch').toFailure(), ErrorCode.WriteFailed, 'nothing was stored: the fake refused the batch'],
  ['concurrency_conflict', () => new DomainError(ErrorCode.ConcurrencyConflict, 'another writer changed this timeline').toFailure(), ErrorCode.ConcurrencyConflict, 'another writer changed this timeline'],
  ['a non-catalogue non-retryable failure', () => ApplicationFailure.nonRetryable('the disk is on fire', 'SomethingElse'), ErrorCode.WriteFailed, 'the disk is on fire'],
])('a non-retryable activity failure (%s)', (_name, failure, code, message) => {
  test('fails every caller of that batch with its code, is not retried, and the session stays open', async () => {
    const { sessionId, handle } = await startSession();
    const hold = holdNextWrite(sessionId, {
      beforeCall(call) {
        if (call.items.some((i) => (i.content as { fail?: boolean }).fail)) throw failure();
      },
    });
    const first = handle.executeUpdate(appendUpdate, { args: [req({ first: true })] });
    await eventually('the held write', () => fake.appendCallsFor(sessionId).length === 1, POLL);
    const ids = updateIds(3);
    const doomed = [req({ fail: true }), req({ x: 1 }), req({ x: 2 })].map((r, i) => handle.executeUpdate(appendUpdate, { args: [r], updateId: ids[i] }));
    await admitted(handle, ids);
    hold.open();
    expect((await first).event.seq).toBe(2);
    for (const e of await Promise.all(doomed.map(refusal))) {
      expect(e.code).toBe(code);
      expect(e.message).toBe(message);
    }
    const calls = fake.appendCallsFor(sessionId);
    expect(calls).toHaveLength(2); // the failing batch was tried once
    expect(calls[1].items).toHaveLength(3);
    const next = await handle.executeUpdate(appendUpdate, { args: [req({ next: true })] });
    expect(next.event.seq).toBe(3); // nothing of the failed batch was stored
    expect((await handle.query(stateQuery)).status).toBe('open');
  });
});

test('a retryable activity failure is retried with the same batch until it succeeds', async () => {
  const { sessionId, handle } = await startSession();
  let failures = 0;
  fake.script(sessionId, {
    beforeCall(call) {
      if (!call.create && failures < 2) {
        failures++;
        throw new Error('database briefly away');
      }
    },
  });
  const r = req({ input: 'eventually' }, { idempotencyKey: 'k-1' });
  const receipt = await handle.executeUpdate(appendUpdate, { args: [r] });
  expect(receipt.event).toMatchObject({ seq: 2, event_id: r.eventId, idempotency_key: 'k-1' });
  const calls = fake.appendCallsFor(sessionId);
  expect(calls).toHaveLength(3);
  for (const c of calls) expect(c.items).toEqual([expect.objectContaining({ eventId: r.eventId, content: { input: 'eventually' } })]);
  expect(calls[2].at - calls[0].at).toBeGreaterThanOrEqual(LIMITS.appendRetryInitialMs);
  expect(fake.events(sessionId)).toHaveLength(2);
});

test('the validators refuse bad requests before anything reaches the writer or the history', async () => {
  const { sessionId, handle } = await startSession({ maxContentBytes: 100 });
  const badAppends: [Partial<AppendRequest>, ErrorCode, string][] = [
    [{ eventId: 'NOT-A-UUID' }, ErrorCode.Validation, 'event_id'],
    [{ eventId: randomUUID().toUpperCase() }, ErrorCode.Validation, 'event_id'],
    [{ type: EventType.SessionCreate }, ErrorCode.Validation, 'event_type'],
    [{ type: 'NOPE' }, ErrorCode.Validation, 'event_type'],
    [{ idempotencyKey: 'has space' }, ErrorCode.Validation, 'idempotency_key'],
    [{ expectedSeq: 0 }, ErrorCode.Validation, 'expected_seq'],
    [{ expectedSeq: 1.5 }, ErrorCode.Validation, 'expected_seq'],
    [{ content: 'x'.repeat(200) }, ErrorCode.TooLarge, 'content'],
    [{ content: { s: 'nul\u0000' } }, ErrorCode.Validation, 'content'],
  ];
  for (const [patch, code, field] of badAppends) {
    const e = await refusal(handle.executeUpdate(appendUpdate, { args: [{ ...req({ ok: true }), ...patch }] }));
    expect([e.code, e.errors.map((x) => x.field)]).toEqual([code, [field]]);
  }
  const badEnds: [Partial<EndRequest>, ErrorCode, string][] = [
    [{ eventId: 'nope' }, ErrorCode.Validation, 'event_id'],
    [{ expectedSeq: -1 }, ErrorCode.Validation, 'expected_seq'],
    [{ content: { reason: 'r'.repeat(200) } }, ErrorCode.TooLarge, 'content'],
  ];
  for (const [patch, code, field] of badEnds) {
    const e = await refusal(handle.executeUpdate(endUpdate, { args: [{ ...endReq('bad'), ...patch }] }));
    expect([e.code, e.errors.map((x) => x.field)]).toEqual([code, [field]]);
  }
  expect(fake.appendCallsFor(sessionId)).toHaveLength(0);
  expect(await handle.query(stateQuery)).toMatchObject({ status: 'open', appendsThisRun: 0, queued: 0, head: { seq: 1 } });
  const accepted = async () => {
    const { events } = await handle.fetchHistory();
    return (events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length;
  };
  expect(await accepted()).toBe(1); // only `created`
  const ok = await handle.executeUpdate(appendUpdate, { args: [req({ ok: true })] });
  expect(ok.event.seq).toBe(2);
  expect(await accepted()).toBe(2);
});

const endMisbehaviours: [string, SessionScript, typeof test][] = [
  ['refused as an outcome', { refuse: (item) => (item.type === EventType.SessionEnd ? new DomainError(ErrorCode.WriteFailed, 'end not stored') : undefined) }, test],
  [
    'failed as a call',
    {
      beforeCall: (call) => {
        if (call.items.some((i) => i.type === EventType.SessionEnd)) throw new DomainError(ErrorCode.WriteFailed, 'end not stored').toFailure();
      },
    },
    test,
  ],
];
describe.each(endMisbehaviours)('a SESSION_END the writer did not store (%s)', (_name, misbehaviour, tester) => {
  tester('fails the end with that code and leaves the session open', async () => {
    const { sessionId, handle } = await startSession();
    let ends = 0;
    fake.script(sessionId, {
      refuse: (item, call) => (ends === 0 ? misbehaviour.refuse?.(item, call) : undefined),
      async beforeCall(call) {
        if (ends === 0) await misbehaviour.beforeCall?.(call);
      },
    });
    const e = await refusal(handle.executeUpdate(endUpdate, { args: [endReq('first try')] }));
    expect([e.code, e.message]).toEqual([ErrorCode.WriteFailed, 'end not stored']);
    ends++;
    expect((await handle.query(stateQuery)).status).toBe('open');
    const after = await handle.executeUpdate(appendUpdate, { args: [req({ still: 'open' })] });
    expect(after.event.seq).toBe(2);
    const end = await handle.executeUpdate(endUpdate, { args: [endReq('second try')] });
    expect(end.event).toMatchObject({ seq: 3, event_type: EventType.SessionEnd });
    const result = await handle.result();
    expect(result).toMatchObject({ sessionId, reason: 'second try', head: { seq: 3, hash: end.event.hash }, endEvent: { seq: 3 } });
    expect(fake.events(sessionId).at(-1)?.content).toEqual({ reason: 'second try' });
  });
});

test('updates arriving after an end are refused with session_archived and never reach the writer', async () => {
  const { sessionId, handle } = await startSession();
  const hold = holdNextWrite(sessionId);
  const first = handle.executeUpdate(appendUpdate, { args: [req({ first: true })] });
  await eventually('the held write', () => fake.appendCallsFor(sessionId).length === 1, POLL);
  // Admitted in this order, so the workflow sees the end first.
  const [endId, lateAppendId, lateEndId] = updateIds(3);
  const end = handle.executeUpdate(endUpdate, { args: [endReq('done')], updateId: endId });
  await admitted(handle, [endId]);
  const lateAppend = handle.executeUpdate(appendUpdate, { args: [req({ late: true })], updateId: lateAppendId });
  const lateEnd = handle.executeUpdate(endUpdate, { args: [endReq('again')], updateId: lateEndId });
  await admitted(handle, [lateAppendId, lateEndId]);
  hold.open();
  await first;
  expect((await end).event).toMatchObject({ seq: 3, event_type: EventType.SessionEnd });
  for (const e of await Promise.all([lateAppend, lateEnd].map(refusal))) {
    expect(e.code).toBe(ErrorCode.SessionArchived);
    expect(e.errors).toEqual([{ field: 'session_id', reason: 'archived' }]);
  }
  expect(fake.appendCallsFor(sessionId).map((c) => c.items.map((i) => i.type))).toEqual([[EventType.UserInput], [EventType.SessionEnd]]);
  expect(await handle.result()).toMatchObject({ reason: 'done', head: { seq: 3 } });
  // Once the workflow has completed, an update fails without a catalogue code: the client
  // (lib/clients/sessions.ts) takes that as "workflow gone" and asks the database.
  const gone = await handle.executeUpdate(appendUpdate, { args: [req({ later: true })] }).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(gone instanceof WorkflowNotFoundError || (gone instanceof WorkflowUpdateFailedError && DomainError.fromFailure(gone.cause) === undefined)).toBe(true);
});

test('continue-as-new after updatesPerRun appends carries the head and the create event', async () => {
  const { sessionId, handle, created } = await startSession({ updatesPerRun: 3 });
  const receipts: AppendReceipt[] = [];
  for (let i = 0; i < 7; i++) receipts.push(await handle.executeUpdate(appendUpdate, { args: [req({ i })] }));
  expect(receipts.map((r) => r.event.seq)).toEqual([2, 3, 4, 5, 6, 7, 8]);
  const state = await handle.query(stateQuery);
  expect(state).toMatchObject({ run: 3, appendsThisRun: 1, appendsTotal: 7, status: 'open', head: { seq: 8, hash: receipts[6].event.hash, ts: receipts[6].event.ts } });
  // Runs 1-3 wrote 3, 3 and 1 appends; SESSION_CREATE was written once, by run 1.
  const calls = fake.callsFor(sessionId);
  expect(calls.filter((c) => c.create)).toHaveLength(1);
  const runs = [...new Set(calls.map((c) => c.runId))];
  expect(runs).toHaveLength(3);
  expect(runs[0]).toBe(handle.firstExecutionRunId);
  expect(calls.filter((c) => !c.create).map((c) => runs.indexOf(c.runId))).toEqual([0, 0, 0, 1, 1, 1, 2]);
  expect((await handle.describe()).runId).toBe(runs[2]);
  // The later run still knows the create event, and its result the carried head.
  expect(await handle.executeUpdate(createdUpdate)).toEqual(created);
  const end = await handle.executeUpdate(endUpdate, { args: [endReq('done')] });
  expect(end.event.seq).toBe(9);
  expect((await handle.result()).head).toEqual({ seq: 9, hash: end.event.hash, ts: end.event.ts });
});

test('bursts of concurrent appends across continue-as-new are each stored once, in one chain', async () => {
  // A run rotates at its first quiet moment once it took 3 appends, so it holds at most
  // 2 + one burst of 4: 16 appends need at least 3 runs however the bursts interleave.
  const { sessionId, handle } = await startSession({ updatesPerRun: 3 });
  fake.script(sessionId, { beforeCall: () => sleep(30) });
  const reqs: AppendRequest[] = [];
  const receipts: AppendReceipt[] = [];
  for (let round = 0; round < 4; round++) {
    const burst = Array.from({ length: 4 }, (_, i) => req({ round, i }));
    reqs.push(...burst);
    receipts.push(...(await Promise.all(burst.map((r) => handle.executeUpdate(appendUpdate, { args: [r] })))));
  }
  receipts.forEach((r, i) => expect(r.event.event_id).toBe(reqs[i].eventId));
  expectContiguous(receipts, 2);
  const stored = fake.events(sessionId);
  expect(stored).toHaveLength(17);
  stored.slice(1).forEach((e, i) => expect(e.prev_hash).toBe(stored[i].hash));
  const runs = new Set(fake.appendCallsFor(sessionId).map((c) => c.runId));
  expect(runs.size).toBeGreaterThanOrEqual(3);
  const state = await handle.query(stateQuery);
  expect(state.appendsTotal).toBe(16);
  expect(state.head).toEqual({ seq: 17, hash: stored[16].hash, ts: stored[16].ts });
  expect(fake.callsFor(sessionId).filter((c) => c.create)).toHaveLength(1);
});

test('an idle session is ended with reason idle; every append restarts the idle period', async () => {
  const { sessionId, handle } = await startSession({ idleTimeoutS: 1 });
  for (let i = 0; i < 3; i++) {
    await handle.executeUpdate(appendUpdate, { args: [req({ i })] });
    await sleep(600);
  }
  const result = await handle.result();
  expect(result.reason).toBe('idle');
  const calls = fake.appendCallsFor(sessionId);
  expect(calls.map((c) => c.items.map((i) => i.type))).toEqual([[EventType.UserInput], [EventType.UserInput], [EventType.UserInput], [EventType.SessionEnd]]);
  const end = calls[3];
  expect(end.items[0].content).toEqual({ reason: 'idle', idle_timeout_s: 1 });
  expect(end.at - calls[2].at).toBeGreaterThanOrEqual(900);
  expect(result.endEvent).toMatchObject({ seq: 5, event_type: EventType.SessionEnd });
  expect(result.head.seq).toBe(5);
});

test('an idle end the writer did not store is tried again a full idle period later', async () => {
  const { sessionId, handle } = await startSession({ idleTimeoutS: 1 });
  let refused = 0;
  fake.script(sessionId, {
    refuse: (item) => (item.type === EventType.SessionEnd && refused++ === 0 ? new DomainError(ErrorCode.WriteFailed, 'not now') : undefined),
  });
  const result = await handle.result();
  expect(result.reason).toBe('idle');
  const ends = fake.appendCallsFor(sessionId);
  expect(ends).toHaveLength(2);
  for (const c of ends) expect(c.items.map((i) => [i.type, i.content])).toEqual([[EventType.SessionEnd, { reason: 'idle', idle_timeout_s: 1 }]]);
  expect(ends[0].items[0].eventId).not.toBe(ends[1].items[0].eventId);
  expect(ends[1].at - ends[0].at).toBeGreaterThanOrEqual(900);
  expect(fake.events(sessionId).map((e) => e.event_type)).toEqual([EventType.SessionCreate, EventType.SessionEnd]);
});
