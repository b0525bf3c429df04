/**
 * The session writer: the only code that appends timeline rows. The session workflow calls
 * appendEvents as a local activity with a batch of queued appends; this decides, inside one
 * locked transaction, what each item becomes (a new chained event, the answer to a retry,
 * or a refusal) and has the store insert the new ones.
 */
import type { Pool } from 'pg';
import { DomainError, ErrorCode, ErrorDetail } from '../../lib/domain/errors';
import {
  AppendReceipt,
  AppendRequest,
  ChainHead,
  EventType,
  StoredEvent,
  header,
  headOf,
  occurredAtProblem,
  sameRequest,
  type OccurredAtBounds,
  sessionErrors,
} from '../../lib/domain/sessions';
import type { JsonValue } from '../../lib/domain/canonical-json';
import { computeEventHash } from '../../lib/hash-chain';
import { failureFromDatabase } from '../../lib/platform/database-errors';
import { logFor } from '../../lib/log';
import { metrics, secondsSince } from '../../lib/metrics';
import { databaseInstanceReader } from '../../lib/store/instance';
import { SessionStore, SessionWriteTx, type WriteHead } from '../../lib/store/sessions';
import { isLookupNeeded } from '../../lib/db';
import { TUNABLE } from '../../lib/domain/limits';

/** Present on the batch that writes SESSION_CREATE: the timeline's own row. */
export interface NewTimeline {
  timelineId: string;
  agentId?: string;
  channel?: string;
  metadata?: { [k: string]: JsonValue };
  idleTimeoutS?: number;
}

export interface AppendEventsInput {
  sessionId: string;
  /** The session's event database (timekeeper_instance); absent for sessions from before it existed. */
  databaseInstance?: string;
  workflowId: string;
  runId: string;
  create?: NewTimeline;
  /**
   * The chain head as the session workflow knows it (absent on a create and from workflow code
   * before it was handed over): the writer writes on it without looking it up, and the table
   * refuses the batch if it is not the stored one.
   */
  head?: ChainHead;
  items: AppendRequest[];
}

/** What became of one item. Histories recorded before the error catalogue carry `{ok: false, errorType, message}`. */
export type AppendOutcome = { ok: true; result: AppendReceipt } | { ok: false; error: ErrorDetail };

const refused = (e: DomainError): AppendOutcome => ({ ok: false, error: e.toDetail() });

/** A batch decided: each item's outcome, and the new events to insert. */
interface Decided {
  outcomes: AppendOutcome[];
  fresh: StoredEvent[];
}

/** Thrown inside a write on the handed head to roll it back and decide the batch with the lookup. */
const NEEDS_LOOKUP = new Error('the batch needs the lookup');

const DEFAULT_OCCURRED_AT_BOUNDS: OccurredAtBounds = { maxPastS: TUNABLE.occurredAtMaxPastS.default, maxFutureS: TUNABLE.occurredAtMaxFutureS.default };

/** `occurredAt`: how far an event's occurred_at may lie from the ts it is stored with (EVENT_OCCURRED_AT_MAX_PAST_S / _FUTURE_S). */
export function createSessionActivities(pool: Pool, opts: { occurredAt?: OccurredAtBounds } = {}) {
  const occurredAtBounds = opts.occurredAt ?? DEFAULT_OCCURRED_AT_BOUNDS;
  const store = new SessionStore(pool);
  const instanceId = databaseInstanceReader(pool);

  async function appendEvents(input: AppendEventsInput): Promise<AppendOutcome[]> {
    const { sessionId } = input;
    if (input.databaseInstance) {
      const mine = await instanceId();
      if (mine !== input.databaseInstance) {
        throw new DomainError(
          ErrorCode.WriteFailed,
          `nothing was stored: this worker writes to event database ${mine}, but session ${sessionId} lives in ${input.databaseInstance}`,
        ).toFailure();
      }
    }
    const start = performance.now();
    metrics.appendBatchSize.observe(input.items.length);
    try {
      // The events this batch stored; counted and logged once the transaction has committed.
      const stored: StoredEvent[] = [];
      const out = await writeBatch(input, stored);
      metrics.appendBatchDuration.observe({ outcome: 'ok' }, secondsSince(start));
      const requestIds = new Map(input.items.map((i) => [i.eventId, i.requestId]));
      for (const e of stored) {
        metrics.eventsAppended.inc({ type: e.event_type });
        logFor(requestIds.get(e.event_id), { component: 'writer', workflow_id: input.workflowId }).info({ session_id: sessionId, seq: e.seq, event_id: e.event_id, type: e.event_type }, 'event stored');
      }
      return out;
    } catch (err) {
      metrics.appendBatchDuration.observe({ outcome: 'error' }, secondsSince(start));
      throw failureFromDatabase(err) ?? err;
    }
  }

  /**
   * Most batches are written on the chain head the session workflow hands over, without the
   * lookup (half the database's CPU of an append, docs/operations.md): the guard trigger
   * and the unique indexes refuse anything the lookup would have found, and such a batch is then
   * decided again with it. Creates, batches from workflow code older than the handed head, and
   * batches with an item the head alone would refuse (a retry may be behind it) look up first.
   */
  async function writeBatch(input: AppendEventsInput, stored: StoredEvent[]): Promise<AppendOutcome[]> {
    if (input.create || !input.head) {
      metrics.appendBatches.inc({ path: 'lookup', reason: input.create ? 'create' : 'no_head' });
      return writeWithLookup(input, stored);
    }
    const head = input.head;
    try {
      const out = await store.writeOnHead(input.sessionId, async (tx, nowMs) => {
        const decided = decide(input, { known: [], head: { ...head, type: '' }, nowMs });
        if (decided.outcomes.some((o) => !o.ok)) throw NEEDS_LOOKUP;
        return insert(tx, input, decided, stored);
      });
      metrics.appendBatches.inc({ path: 'on_head', reason: '' });
      return out;
    } catch (err) {
      if (err !== NEEDS_LOOKUP && !isLookupNeeded(err)) throw err;
      metrics.appendBatches.inc({ path: 'lookup', reason: err === NEEDS_LOOKUP ? 'refusal' : 'conflict' });
      return writeWithLookup(input, stored);
    }
  }

  function writeWithLookup(input: AppendEventsInput, stored: StoredEvent[]): Promise<AppendOutcome[]> {
    const { sessionId } = input;
    // Earlier attempts of this batch, earlier requests with the same idempotency key, and the
    // chain head: looked up in the round trip that takes the session's lock.
    const lookup = {
      eventIds: input.items.map((i) => i.eventId),
      idempotencyKeys: input.items.map((i) => i.idempotencyKey).filter((k): k is string => !!k),
    };
    return store.write(sessionId, lookup, async (tx, found) => {
      if (input.create) {
        const { created, timelineId } = await tx.createTimeline({ sessionId, workflowId: input.workflowId, createdTs: found.nowMs, ...input.create });
        if (!created && timelineId !== input.create.timelineId) return input.items.map(() => refused(sessionErrors.exists(sessionId)));
      }
      return insert(tx, input, decide(input, found), stored);
    });
  }

  /** Has the transaction insert the batch's new events (sent with COMMIT) and answers each item. */
  function insert(tx: SessionWriteTx, input: AppendEventsInput, decided: Decided, stored: StoredEvent[]): AppendOutcome[] {
    tx.insertEvents(decided.fresh, input);
    stored.splice(0, stored.length, ...decided.fresh);
    return decided.outcomes;
  }

  /** What each item becomes on this head with these stored events: a new chained event, the answer to a retry, or a refusal. */
  function decide(input: AppendEventsInput, found: { known: StoredEvent[] } & WriteHead): Decided {
    const { sessionId } = input;
    const byId = new Map<string, StoredEvent>();
    const byKey = new Map<string, StoredEvent>();
    const remember = (e: StoredEvent) => {
      byId.set(e.event_id, e);
      if (e.session_id === sessionId && e.idempotency_key) byKey.set(e.idempotency_key, e);
    };
    found.known.forEach(remember);

    let { head } = found;
    const { nowMs } = found;
    const fresh: StoredEvent[] = [];
    const outcomes = input.items.map((item): AppendOutcome => {
      const prior = byId.get(item.eventId);
      if (prior) {
        // Same id: an earlier attempt of this very batch, or a client that retried with its
        // own event id. Either way the stored event is the answer.
        return prior.session_id === sessionId && sameRequest(prior, item)
          ? { ok: true, result: { event: header(prior), deduplicated: item.clientEventId === true } }
          : refused(DomainError.field(ErrorCode.EventIdConflict, 'event_id', 'already used').withMessage(`event_id ${item.eventId} is already used by another event`));
      }
      const sameKey = item.idempotencyKey ? byKey.get(item.idempotencyKey) : undefined;
      if (sameKey) {
        return sameRequest(sameKey, item)
          ? { ok: true, result: { event: header(sameKey), deduplicated: true } }
          : refused(
              DomainError.field(ErrorCode.IdempotencyKeyReused, 'idempotency_key', 'reused with different content').withMessage(
                `idempotency_key ${item.idempotencyKey} was already used for a different event (seq ${sameKey.seq})`,
              ),
            );
      }
      if (head?.type === EventType.SessionEnd) return refused(sessionErrors.archived(sessionId));
      if (item.expectedSeq !== undefined && item.expectedSeq !== (head?.seq ?? 0)) {
        return refused(sessionErrors.wrongExpectedSeq(item.expectedSeq, head ? headOf(head) : null));
      }
      const ts = head ? Math.max(nowMs, head.ts) : nowMs;
      // Checked against the ts it would be stored with, and only for a new event: a retry of a
      // stored one (above) is answered however late it comes.
      const late = item.occurredAt === undefined ? null : occurredAtProblem(item.occurredAt, ts, occurredAtBounds);
      if (late) return refused(late);
      const unhashed = {
        session_id: sessionId,
        seq: head ? head.seq + 1 : 1,
        event_id: item.eventId,
        event_type: item.type,
        ts,
        content: item.content,
        prev_hash: head ? head.hash : null,
        ...(item.occurredAt !== undefined ? { occurred_at: item.occurredAt } : {}),
      };
      const event: StoredEvent = { ...unhashed, hash: computeEventHash(unhashed), idempotency_key: item.idempotencyKey ?? null };
      fresh.push(event);
      remember(event);
      head = { ...headOf(event), type: event.event_type };
      return { ok: true, result: { event: header(event), deduplicated: false } };
    });
    return { outcomes, fresh };
  }

  return { appendEvents };
}

export type SessionActivities = ReturnType<typeof createSessionActivities>;
