/**
 * The typed session client (clients/sessions.ts) used directly, below HTTP, the way an
 * activity in the worker uses it: against a real worker, the real Temporal dev server and
 * PostgreSQL. Every refusal is a DomainError with its catalogue code; recovery from a
 * terminated workflow continues the chain from the database's head.
 */
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { createSessionActivities } from '../../activities/sessions';
import { SessionClient } from '../../clients/sessions';
import { DomainError, ErrorCode } from '../../lib/domain/errors';
import { EventType, sessionWorkflowId, type JsonValue } from '../../lib/domain/sessions';
import { computeEventHash } from '../../lib/hash-chain';
import { metrics } from '../../lib/metrics';
import { SessionStore } from '../../lib/store/sessions';
import { eventually, startTestSystem, TestSystem, uniqueSessionId } from '../support';

let sys: TestSystem;
let sessions: SessionClient;
let store: SessionStore;

beforeAll(async () => {
  sys = await startTestSystem({ config: { writeTimeoutMs: 15_000 } });
  sessions = new SessionClient({
    client: sys.client,
    pool: sys.pool,
    taskQueue: sys.config.taskQueue,
    maxContentBytes: sys.config.maxContentBytes,
    updatesPerRun: sys.config.updatesPerRun,
    writeTimeoutMs: sys.config.writeTimeoutMs,
  });
  store = new SessionStore(sys.pool);
});

afterAll(async () => {
  await sys?.stop();
});

/** The DomainError a call must fail with. */
async function domainError(p: Promise<unknown>): Promise<DomainError> {
  const err = await p.then(
    (v) => {
      throw new Error(`expected a DomainError, got ${JSON.stringify(v)}`);
    },
    (e: unknown) => e,
  );
  if (!(err instanceof DomainError)) throw new Error(`expected a DomainError, got ${String(err)}`);
  return err;
}

async function rows(sessionId: string) {
  const { rows: r } = await sys.pool.query(
    'SELECT seq, event_id, event_type, ts, content, prev_hash, hash, idempotency_key, run_id FROM timeline_events WHERE session_id = $1 ORDER BY seq',
    [sessionId],
  );
  return r.map((x) => ({ ...x, seq: Number(x.seq), ts: Number(x.ts) }));
}

/** Batches the writer decided by this path and reason so far (timekeeper_append_batches_total; the worker runs in this process). */
async function appendBatches(path: string, reason: string): Promise<number> {
  return (await metrics.appendBatches.get()).values.find((v) => v.labels.path === path && v.labels.reason === reason)?.value ?? 0;
}

function expectLinear(chain: { seq: number; hash: string; prev_hash: string | null }[]) {
  chain.forEach((r, i) => {
    expect(r.seq).toBe(i + 1);
    expect(r.prev_hash).toBe(i === 0 ? null : chain[i - 1].hash);
  });
}

async function newSession(prefix: string, extra: { idleTimeoutS?: number } = {}) {
  const sessionId = uniqueSessionId(prefix);
  const created = await sessions.create({ sessionId, ...extra });
  return { sessionId, created };
}

const input = (sessionId: string, content: JsonValue, extra: { idempotencyKey?: string; eventId?: string; expectedSeq?: number; type?: string } = {}) => ({
  sessionId,
  type: EventType.UserInput,
  content,
  ...extra,
});

test('create stores SESSION_CREATE with the session settings, once', async () => {
  const sessionId = uniqueSessionId('sc_create');
  const created = await sessions.create({ sessionId, agentId: 'agent-7', channel: 'cli', metadata: { team: 'x', n: [1, 2] }, idleTimeoutS: 3600 });
  expect(created).toMatchObject({ session_id: sessionId, seq: 1, event_type: EventType.SessionCreate, prev_hash: null });
  expect(created.content).toEqual({ msg: 'session created', session_id: sessionId, timeline_id: created.timeline_id, agent_id: 'agent-7', channel: 'cli', metadata: { team: 'x', n: [1, 2] } });
  expect(created.hash).toBe(computeEventHash(created));
  const t = await store.getTimeline(sessionId);
  expect(t).toMatchObject({ timeline_id: created.timeline_id, agent_id: 'agent-7', channel: 'cli', metadata: { team: 'x', n: [1, 2] }, idle_timeout_s: 3600, status: 'open', head_seq: 1, head_hash: created.hash });

  const again = await domainError(sessions.create({ sessionId }));
  expect(again.code).toBe(ErrorCode.SessionExists);
  expect(again.errors).toEqual([{ field: 'session_id', reason: 'already initialised' }]);
  expect(await rows(sessionId)).toHaveLength(1);
  expect((await store.getTimeline(sessionId))?.timeline_id).toBe(created.timeline_id);
});

test('create refuses metadata that cannot be stored before starting anything', async () => {
  const nul = uniqueSessionId('sc_meta');
  const e = await domainError(sessions.create({ sessionId: nul, metadata: { k: 'a\u0000b' } }));
  expect([e.code, e.errors.map((x) => x.field)]).toEqual([ErrorCode.Validation, ['metadata']]);
  const big = await domainError(sessions.create({ sessionId: nul, metadata: { k: 'x'.repeat(sys.config.maxContentBytes) } }));
  expect([big.code, big.errors.map((x) => x.field)]).toEqual([ErrorCode.TooLarge, ['metadata']]);
  expect(await store.getTimeline(nul)).toBeNull();
  await expect(sys.client.workflow.getHandle(sessionWorkflowId(nul)).describe()).rejects.toThrow();
});

test('append chains the event after the head and returns it with its content', async () => {
  const { sessionId, created } = await newSession('sc_append');
  const r = await sessions.append(input(sessionId, { input: '今天天气怎么样？' }));
  expect(r.deduplicated).toBe(false);
  expect(r.event).toMatchObject({ session_id: sessionId, seq: 2, event_type: EventType.UserInput, prev_hash: created.hash, content: { input: '今天天气怎么样？' }, idempotency_key: null });
  expect(r.event.hash).toBe(computeEventHash(r.event));
  expect(r.event.ts).toBeGreaterThanOrEqual(created.ts);
  const [, stored] = await rows(sessionId);
  expect(stored).toMatchObject({ seq: 2, event_id: r.event.event_id, hash: r.event.hash, ts: r.event.ts, content: { input: '今天天气怎么样？' } });
});

test('an append retried with its idempotency key or its own event id is answered with the first event', async () => {
  const { sessionId } = await newSession('sc_idem');
  const first = await sessions.append(input(sessionId, { tool_name: 'search', params: { q: 'x' } }, { type: EventType.ToolCall, idempotencyKey: 'call-1' }));
  expect(first.deduplicated).toBe(false);
  const retries = await Promise.all(
    Array.from({ length: 3 }, () => sessions.append(input(sessionId, { params: { q: 'x' }, tool_name: 'search' }, { type: EventType.ToolCall, idempotencyKey: 'call-1' }))),
  );
  for (const r of retries) {
    expect(r.deduplicated).toBe(true);
    expect(r.event).toEqual(first.event);
  }
  const reused = await domainError(sessions.append(input(sessionId, { other: true }, { type: EventType.ToolCall, idempotencyKey: 'call-1' })));
  expect(reused.code).toBe(ErrorCode.IdempotencyKeyReused);
  expect(reused.errors.map((e) => e.field)).toEqual(['idempotency_key']);

  const eventId = randomUUID();
  const own = await sessions.append(input(sessionId, { n: 1 }, { eventId }));
  expect([own.deduplicated, own.event.event_id]).toEqual([false, eventId]);
  const ownAgain = await sessions.append(input(sessionId, { n: 1 }, { eventId }));
  expect(ownAgain).toEqual({ ...own, deduplicated: true });
  const conflict = await domainError(sessions.append(input(sessionId, { n: 2 }, { eventId })));
  expect(conflict.code).toBe(ErrorCode.EventIdConflict);

  const chain = await rows(sessionId);
  expect(chain.map((r) => r.seq)).toEqual([1, 2, 3]);
  expect(chain.filter((r) => r.idempotency_key === 'call-1')).toHaveLength(1);
});

test('expected_seq that is not the head is refused with the current head, and nothing is written', async () => {
  const { sessionId } = await newSession('sc_expected');
  await sessions.append(input(sessionId, { n: 1 }));
  const head = await sessions.append(input(sessionId, { n: 2 }));
  for (const stale of [1, 2, 4]) {
    const e = await domainError(sessions.append(input(sessionId, { stale }, { expectedSeq: stale })));
    expect(e.code).toBe(ErrorCode.WrongExpectedSeq);
    expect(e.extra).toEqual({ current_head: { seq: 3, hash: head.event.hash, ts: head.event.ts } });
    expect(e.errors).toEqual([{ field: 'expected_seq', reason: 'the chain head is seq 3' }]);
  }
  expect(await rows(sessionId)).toHaveLength(3);
  const ok = await sessions.append(input(sessionId, { n: 3 }, { expectedSeq: 3 }));
  expect(ok.event.seq).toBe(4);
  // Two writers holding the same head: exactly one of them wins.
  const race = await Promise.allSettled([0, 1].map((i) => sessions.append(input(sessionId, { i }, { expectedSeq: 4 }))));
  expect(race.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  const lost = race.find((r) => r.status === 'rejected') as PromiseRejectedResult;
  expect((lost.reason as DomainError).code).toBe(ErrorCode.WrongExpectedSeq);
  expect(await rows(sessionId)).toHaveLength(5);
});

test('bad requests are refused by the client before anything is sent', async () => {
  const { sessionId } = await newSession('sc_bad');
  const cases: [ReturnType<typeof input>, string][] = [
    [input(sessionId, {}, { type: EventType.SessionCreate }), 'event_type'],
    [input(sessionId, {}, { idempotencyKey: 'not ok' }), 'idempotency_key'],
    [input(sessionId, {}, { eventId: 'NOT-A-UUID' }), 'event_id'],
    [input(sessionId, {}, { expectedSeq: 0 }), 'expected_seq'],
    [input(sessionId, { s: '\u0000' }), 'content'],
    [input(sessionId, Number.NaN), 'content'],
  ];
  for (const [bad, field] of cases) {
    const e = await domainError(sessions.append(bad));
    expect([e.code, e.errors.map((x) => x.field)]).toEqual([ErrorCode.Validation, [field]]);
  }
  expect(await rows(sessionId)).toHaveLength(1);
  expect((await sessions.state(sessionId))?.appendsThisRun).toBe(0);
});

test('end archives the session; later appends are refused, retries of stored events still answered', async () => {
  const { sessionId } = await newSession('sc_end');
  const before = await sessions.append(input(sessionId, { n: 1 }, { idempotencyKey: 'before-end' }));
  const end = await sessions.end(sessionId, { reason: 'user left', idempotencyKey: 'end-1' });
  expect(end.event).toMatchObject({ seq: 3, event_type: EventType.SessionEnd, content: { reason: 'user left' } });
  const result = await sys.client.workflow.getHandle(sessionWorkflowId(sessionId)).result();
  expect(result).toMatchObject({ reason: 'user left', head: { seq: 3, hash: end.event.hash } });
  expect((await store.getTimeline(sessionId))?.status).toBe('archived');

  const late = await domainError(sessions.append(input(sessionId, { late: true })));
  expect(late.code).toBe(ErrorCode.SessionArchived);
  expect((await domainError(sessions.end(sessionId, { reason: 'again' }))).code).toBe(ErrorCode.SessionArchived);
  expect((await domainError(sessions.append(input(sessionId, { late: true }, { expectedSeq: 3 })))).code).toBe(ErrorCode.SessionArchived);
  // Retries of what was stored before the end are answered from the database.
  expect(await sessions.append(input(sessionId, { n: 1 }, { idempotencyKey: 'before-end' }))).toEqual({ ...before, deduplicated: true });
  expect(await sessions.end(sessionId, { reason: 'user left', idempotencyKey: 'end-1' })).toEqual({ ...end, deduplicated: true });
  expect((await domainError(sessions.end(sessionId, { reason: 'other reason', idempotencyKey: 'end-1' }))).code).toBe(ErrorCode.IdempotencyKeyReused);
  expect(await rows(sessionId)).toHaveLength(3);
  expect(await sessions.head(sessionId, 'archived')).toEqual({ seq: 3, hash: end.event.hash, ts: end.event.ts });
});

test('an unknown session is not_found, and nothing is started for it', async () => {
  const sessionId = uniqueSessionId('sc_unknown');
  const e = await domainError(sessions.append(input(sessionId, { n: 1 })));
  expect(e.code).toBe(ErrorCode.NotFound);
  expect(e.errors).toEqual([{ field: 'session_id', reason: 'unknown session' }]);
  expect((await domainError(sessions.end(sessionId, { reason: 'x' }))).code).toBe(ErrorCode.NotFound);
  expect(await store.getTimeline(sessionId)).toBeNull();
  expect(await sessions.state(sessionId)).toBeUndefined();
  await expect(sys.client.workflow.getHandle(sessionWorkflowId(sessionId)).describe()).rejects.toThrow();
});

test('a session whose workflow was terminated resumes from the chain head on the next append', async () => {
  const { sessionId } = await newSession('sc_resume', { idleTimeoutS: 3600 });
  await sessions.append(input(sessionId, { n: 1 }, { idempotencyKey: 'k-1' }));
  const third = await sessions.append(input(sessionId, { n: 2 }));
  const handle = sys.client.workflow.getHandle(sessionWorkflowId(sessionId));
  const firstRun = (await handle.describe()).runId;
  await handle.terminate('operator');
  expect((await handle.describe()).status.name).toBe('TERMINATED');

  const fourth = await sessions.append(input(sessionId, { n: 3 }));
  expect(fourth.event).toMatchObject({ seq: 4, prev_hash: third.event.hash });
  const secondRun = (await handle.describe()).runId;
  expect(secondRun).not.toBe(firstRun);
  expect(await sessions.state(sessionId)).toMatchObject({ status: 'open', run: 1, appendsTotal: 3, head: { seq: 4, hash: fourth.event.hash } });
  // A retry of an event from before the termination is still recognised.
  const retried = await sessions.append(input(sessionId, { n: 1 }, { idempotencyKey: 'k-1' }));
  expect([retried.deduplicated, retried.event.seq]).toEqual([true, 2]);

  // Terminated again: concurrent appends that all find it gone converge on one new run.
  await handle.terminate('operator again');
  const burst = await Promise.all(Array.from({ length: 6 }, (_, i) => sessions.append(input(sessionId, { burst: i }))));
  expect(burst.map((r) => r.event.seq).sort((a, b) => a - b)).toEqual([5, 6, 7, 8, 9, 10]);
  const chain = await rows(sessionId);
  expectLinear(chain);
  expect(new Set(chain.slice(4).map((r) => r.run_id)).size).toBe(1);
  expect(chain[4].run_id).not.toBe(secondRun);
  expect(await store.verify(sessionId)).toMatchObject({ ok: true, checked: 10 });
  // The resumed workflow keeps the session's settings (from the database).
  const t = await store.getTimeline(sessionId);
  expect(t).toMatchObject({ idle_timeout_s: 3600, status: 'open', head_seq: 10 });
  expect(await sessions.head(sessionId, 'open')).toEqual({ seq: 10, hash: chain[9].hash, ts: chain[9].ts });
  const end = await sessions.end(sessionId, { reason: 'done' });
  expect(end.event.seq).toBe(11);
  expect(await store.verify(sessionId)).toMatchObject({ ok: true, checked: 11 });
});

describe('concurrency conflict', () => {
  /**
   * A writer that bypasses the session's advisory lock (an INSERT through another
   * connection, in a transaction that is still open) takes the next seq first. The
   * activity then reads the committed head, computes the same seq, and its INSERT waits on
   * the primary key until the other transaction commits: a real unique violation.
   */
  async function raceAgainstUncommittedRow(sessionId: string, write: () => Promise<unknown>) {
    const [head] = (await rows(sessionId)).slice(-1);
    const other = await sys.pool.connect();
    const rival = {
      session_id: sessionId,
      seq: head.seq + 1,
      event_id: randomUUID(),
      event_type: EventType.UserInput,
      ts: head.ts + 1,
      content: { rival: true } as JsonValue,
      prev_hash: head.hash as string,
    };
    const hash = computeEventHash(rival);
    type Outcome = { ok: true; v: unknown } | { ok: false; e: unknown };
    let outcome: Promise<Outcome>;
    try {
      await other.query('BEGIN');
      await other.query(
        `INSERT INTO timeline_events (session_id, seq, event_id, event_type, ts, content, prev_hash, hash, idempotency_key, workflow_id, run_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, 'rival', 'rival')`,
        [rival.session_id, rival.seq, rival.event_id, rival.event_type, rival.ts, JSON.stringify(rival.content), rival.prev_hash, hash],
      );
      outcome = write().then(
        (v): Outcome => ({ ok: true, v }),
        (e: unknown): Outcome => ({ ok: false, e }),
      );
      // Wait until the writer's INSERT is blocked behind the uncommitted row.
      await eventually(
        'the writer blocked on the rival row',
        async () =>
          (
            await sys.ownerPool.query(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO timeline_events%'`,
            )
          ).rows[0].n > 0,
        { timeoutMs: 10_000, stepMs: 20, errors: 'throw' },
      );
      await other.query('COMMIT');
    } finally {
      other.release();
    }
    return { outcome: await outcome, rival: { ...rival, hash } };
  }

  test('the writer activity maps the unique violation to a non-retryable concurrency_conflict, storing nothing', async () => {
    const { sessionId } = await newSession('sc_conflict');
    await sessions.append(input(sessionId, { n: 1 }));
    const activities = createSessionActivities(sys.pool);
    const mine = { eventId: randomUUID(), type: EventType.UserInput, content: { mine: true } };
    const { outcome, rival } = await raceAgainstUncommittedRow(sessionId, () =>
      activities.appendEvents({ sessionId, workflowId: 'direct', runId: 'direct', items: [mine] }),
    );
    if (outcome.ok) throw new Error(`expected the write to fail, got ${JSON.stringify(outcome.v)}`);
    const failure = outcome.e;
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).nonRetryable).toBe(true);
    const e = DomainError.fromFailure(failure)!;
    expect(e.code).toBe(ErrorCode.ConcurrencyConflict);
    expect(e.message).toMatch(/^another writer changed this timeline at the same time; nothing was stored: .*\(SQLSTATE 23505\)$/);
    const chain = await rows(sessionId);
    expect(chain.map((r) => r.event_id)).not.toContain(mine.eventId);
    expect(chain.at(-1)).toMatchObject({ seq: 3, event_id: rival.event_id, hash: rival.hash });
    expect((await store.verify(sessionId)).ok).toBe(true);
    // Once the race is over the same item is written after the rival's event.
    const [again] = await activities.appendEvents({ sessionId, workflowId: 'direct', runId: 'direct', items: [mine] });
    expect(again).toMatchObject({ ok: true, result: { event: { seq: 4, prev_hash: rival.hash } } });
  });

  /**
   * Through the session workflow the writer writes on the workflow's head without the lookup;
   * the table refuses it (the rival took that seq), and the writer decides the batch again with
   * the lookup, on the stored head: the caller's event follows the rival's, the run stays open
   * and the chain verifies. (Without a head, above, the same race is the caller's
   * concurrency_conflict; the workflow's handling of a failed batch is in
   * session-workflow-level.test.ts.)
   */
  test('through the session workflow, a rival row committed during the append is chained after, and the run stays open', async () => {
    const { sessionId } = await newSession('sc_conflict_wf');
    await sessions.append(input(sessionId, { n: 1 }));
    const handle = sys.client.workflow.getHandle(sessionWorkflowId(sessionId));
    const run = (await handle.describe()).runId;
    const conflicts = await appendBatches('lookup', 'conflict');
    const { outcome, rival } = await raceAgainstUncommittedRow(sessionId, () => sessions.append(input(sessionId, { mine: true })));
    if (!outcome.ok) throw outcome.e;
    expect(outcome.v).toMatchObject({ event: { seq: 4, prev_hash: rival.hash }, deduplicated: false });
    expect((await appendBatches('lookup', 'conflict')) - conflicts).toBe(1);
    const desc = await handle.describe();
    expect([desc.runId, desc.status.name]).toEqual([run, 'RUNNING']);
    expect((await rows(sessionId)).map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    expect((await store.verify(sessionId)).ok).toBe(true);
  });
});

/**
 * The writer on the session workflow's head (activities/sessions/index.ts writeBatch): no
 * lookup, the table's guard trigger and unique indexes refuse what the lookup would have found,
 * and the batch is then decided again with it. Called directly with the head a workflow would
 * hand over, so each case is exact.
 */
describe('writing on the handed chain head', () => {
  const writer = () => createSessionActivities(sys.pool);
  const call = (sessionId: string, head: { seq: number; hash: string; ts: number } | undefined, items: Parameters<ReturnType<typeof writer>['appendEvents']>[0]['items']) =>
    writer().appendEvents({ sessionId, workflowId: 'direct', runId: 'direct', ...(head ? { head } : {}), items });
  const item = (content: JsonValue, extra: { idempotencyKey?: string; expectedSeq?: number } = {}) => ({ eventId: randomUUID(), type: EventType.UserInput, content, ...extra });
  const headOfRow = (r: { seq: number; hash: string; ts: number }) => ({ seq: r.seq, hash: r.hash, ts: r.ts });

  test('a batch on the stored head is written without the lookup', async () => {
    const { sessionId } = await newSession('sc_head_ok');
    const head = headOfRow((await rows(sessionId)).at(-1)!);
    const before = await appendBatches('on_head', '');
    const out = await call(sessionId, head, [item({ a: 1 }), item({ a: 2 })]);
    expect(out).toMatchObject([
      { ok: true, result: { event: { seq: 2, prev_hash: head.hash }, deduplicated: false } },
      { ok: true, result: { event: { seq: 3 }, deduplicated: false } },
    ]);
    expect((await appendBatches('on_head', '')) - before).toBe(1);
    expect((await store.verify(sessionId)).ok).toBe(true);
  });

  test('a retry of a committed batch on the head from before it is answered with the stored events, not written twice', async () => {
    const { sessionId } = await newSession('sc_head_retry');
    const head = headOfRow((await rows(sessionId)).at(-1)!);
    const items = [item({ once: 1 }), item({ once: 2 })];
    const first = await call(sessionId, head, items);
    const conflicts = await appendBatches('lookup', 'conflict');
    const again = await call(sessionId, head, items);
    expect(again).toEqual(first);
    expect((await appendBatches('lookup', 'conflict')) - conflicts).toBe(1);
    expect((await rows(sessionId)).map((r) => r.seq)).toEqual([1, 2, 3]);
  });

  test('a head that is not the stored one (wrong hash) is refused by the table and the batch is written on the stored head', async () => {
    const { sessionId } = await newSession('sc_head_wrong');
    const stored = headOfRow((await rows(sessionId)).at(-1)!);
    const [out] = await call(sessionId, { ...stored, hash: 'f'.repeat(64) }, [item({ b: 1 })]);
    expect(out).toMatchObject({ ok: true, result: { event: { seq: 2, prev_hash: stored.hash } } });
    expect((await store.verify(sessionId)).ok).toBe(true);
  });

  test('an idempotency key used before: the same request is answered as a duplicate, another one refused', async () => {
    const { sessionId } = await newSession('sc_head_key');
    const [first] = await call(sessionId, headOfRow((await rows(sessionId)).at(-1)!), [item({ k: 1 }, { idempotencyKey: 'key-1' })]);
    if (!first.ok) throw new Error('the first write failed');
    const head = headOfRow(first.result.event);
    const [same] = await call(sessionId, head, [item({ k: 1 }, { idempotencyKey: 'key-1' })]);
    expect(same).toEqual({ ok: true, result: { event: first.result.event, deduplicated: true } });
    const [other] = await call(sessionId, head, [item({ k: 2 }, { idempotencyKey: 'key-1' })]);
    expect(other).toMatchObject({ ok: false, error: { code: ErrorCode.IdempotencyKeyReused } });
    expect((await rows(sessionId)).map((r) => r.seq)).toEqual([1, 2]);
  });

  test('an item the head alone would refuse (a stale expected_seq) is decided with the lookup: a retry by key is answered, not refused', async () => {
    const { sessionId } = await newSession('sc_head_refusal');
    const [first] = await call(sessionId, headOfRow((await rows(sessionId)).at(-1)!), [item({ e: 1 }, { idempotencyKey: 'key-e', expectedSeq: 1 })]);
    if (!first.ok) throw new Error('the first write failed');
    const refusals = await appendBatches('lookup', 'refusal');
    // The client's retry carries the expected_seq it first sent (1); the head is now 2.
    const [retry] = await call(sessionId, headOfRow(first.result.event), [item({ e: 1 }, { idempotencyKey: 'key-e', expectedSeq: 1 })]);
    expect(retry).toEqual({ ok: true, result: { event: first.result.event, deduplicated: true } });
    expect((await appendBatches('lookup', 'refusal')) - refusals).toBe(1);
    const [stale] = await call(sessionId, headOfRow(first.result.event), [item({ e: 2 }, { expectedSeq: 1 })]);
    expect(stale).toMatchObject({ ok: false, error: { code: ErrorCode.WrongExpectedSeq } });
  });
});
