/**
 * The one place that writes timeline rows. Called by the session workflow (its single
 * writer) with a batch of appends; idempotent under Temporal's retries because every item
 * carries an event id fixed before the first attempt.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { Pool, PoolClient } from 'pg';
import { canonicalize } from '../lib/canonical-json';
import { computeEventHash } from '../lib/hash-chain';
import {
  AppendReceipt,
  EventHeader,
  EventType,
  JsonValue,
  StoredEvent,
  TimelineErrorType,
} from '../workflows/messages';

export interface AppendItem {
  eventId: string;
  type: string;
  content: JsonValue;
  idempotencyKey?: string;
  /** The caller chose the event id itself, so meeting it again means a retried request. */
  clientEventId?: boolean;
}

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
  items: AppendItem[];
}

export type AppendOutcome =
  | { ok: true; result: AppendReceipt }
  | { ok: false; errorType: TimelineErrorType; message: string };

/** The columns of a StoredEvent, in the order rowToEvent reads them. */
export const EVENT_COLUMNS = 'session_id, seq, event_id, event_type, ts, content, prev_hash, hash, idempotency_key';

export function rowToEvent(r: Record<string, unknown>): StoredEvent {
  return {
    session_id: r.session_id as string,
    seq: Number(r.seq),
    event_id: r.event_id as string,
    event_type: r.event_type as string,
    ts: Number(r.ts),
    content: r.content as JsonValue,
    prev_hash: (r.prev_hash as string | null) ?? null,
    hash: r.hash as string,
    idempotency_key: (r.idempotency_key as string | null) ?? null,
  };
}

/** Results go back through workflow history, where the content is already (in the request). */
export function header(e: StoredEvent): EventHeader {
  const { content: _content, ...rest } = e;
  return rest;
}

/** A retry must ask for the same event it refers to: same type, canonically equal content. */
export function sameRequest(e: StoredEvent, item: Pick<AppendItem, 'type' | 'content'>): boolean {
  return e.event_type === item.type && canonicalize(e.content) === canonicalize(item.content);
}

async function inTransaction<T>(pool: Pool, fn: (c: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** SQLSTATE classes that no retry can fix: data exceptions, constraint violations, access and schema errors. */
const PERMANENT_SQLSTATE = /^(22|23|42)/;

export function createTimelineActivities(pool: Pool) {
  const instanceId = databaseInstanceReader(pool);

  async function appendEvents(input: AppendEventsInput): Promise<AppendOutcome[]> {
    const { sessionId } = input;
    if (input.databaseInstance) {
      const mine = await instanceId();
      if (mine !== input.databaseInstance) {
        throw ApplicationFailure.nonRetryable(
          `this worker writes to event database ${mine}, but session ${sessionId} lives in ${input.databaseInstance}`,
          TimelineErrorType.WriteFailed,
        );
      }
    }
    try {
      return await writeBatch(input);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code && PERMANENT_SQLSTATE.test(code)) {
        throw ApplicationFailure.nonRetryable(`the database refused the write: ${(err as Error).message} (SQLSTATE ${code})`, TimelineErrorType.WriteFailed);
      }
      throw err;
    }
  }

  async function writeBatch(input: AppendEventsInput): Promise<AppendOutcome[]> {
    const { sessionId } = input;
    return inTransaction(pool, async (db) => {
      // Belt and braces next to the single-writer workflow: a second writer waits here
      // instead of losing a primary-key race.
      await db.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [sessionId]);

      const outcomes: (AppendOutcome | undefined)[] = new Array(input.items.length);

      if (input.create) {
        const c = input.create;
        const created = await db.query(
          `INSERT INTO timeline_sessions (session_id, timeline_id, agent_id, channel, metadata, idle_timeout_s, workflow_id, created_ts)
           VALUES ($1, $2, $3, $4, $5, $6, $7, (extract(epoch from clock_timestamp()) * 1000)::bigint)
           ON CONFLICT (session_id) DO NOTHING`,
          [sessionId, c.timelineId, c.agentId ?? null, c.channel ?? null, JSON.stringify(c.metadata ?? {}), c.idleTimeoutS ?? null, input.workflowId],
        );
        if (created.rowCount === 0) {
          const existing = await db.query('SELECT timeline_id FROM timeline_sessions WHERE session_id = $1', [sessionId]);
          if (existing.rows[0]?.timeline_id !== c.timelineId) {
            return input.items.map(() => ({
              ok: false as const,
              errorType: TimelineErrorType.SessionExists,
              message: `session ${sessionId} already has a timeline`,
            }));
          }
        }
      }

      // Earlier attempts of this batch, and earlier requests with the same idempotency key.
      const ids = input.items.map((i) => i.eventId);
      const keys = input.items.map((i) => i.idempotencyKey).filter((k): k is string => !!k);
      const known = await db.query(
        `SELECT ${EVENT_COLUMNS} FROM timeline_events
          WHERE event_id = ANY($1::uuid[]) OR (session_id = $2 AND idempotency_key = ANY($3::text[]))`,
        [ids, sessionId, keys],
      );
      const byId = new Map<string, StoredEvent>();
      const byKey = new Map<string, StoredEvent>();
      for (const row of known.rows) {
        const e = rowToEvent(row);
        byId.set(e.event_id, e);
        if (e.session_id === sessionId && e.idempotency_key) byKey.set(e.idempotency_key, e);
      }

      const headRes = await db.query(
        `SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint AS now,
                h.seq, h.hash, h.ts, h.event_type
           FROM (SELECT 1) one
           LEFT JOIN LATERAL (SELECT seq, hash, ts, event_type FROM timeline_events
                               WHERE session_id = $1 ORDER BY seq DESC LIMIT 1) h ON true`,
        [sessionId],
      );
      const h = headRes.rows[0];
      let head = h.seq == null ? null : { seq: Number(h.seq), hash: h.hash as string, ts: Number(h.ts), type: h.event_type as string };
      const now = Number(h.now);

      const fresh: StoredEvent[] = [];
      input.items.forEach((item, i) => {
        const prior = byId.get(item.eventId);
        if (prior) {
          // Same id in this session: an earlier attempt of this very batch, or a client that
          // retried with its own event id. Either way the stored event is the answer.
          outcomes[i] =
            prior.session_id === sessionId && sameRequest(prior, item)
              ? { ok: true, result: { event: header(prior), deduplicated: item.clientEventId === true } }
              : { ok: false, errorType: TimelineErrorType.EventIdConflict, message: `event_id ${item.eventId} is already used by another event` };
          return;
        }
        const sameKey = item.idempotencyKey ? byKey.get(item.idempotencyKey) : undefined;
        if (sameKey) {
          outcomes[i] = sameRequest(sameKey, item)
            ? { ok: true, result: { event: header(sameKey), deduplicated: true } }
            : {
                ok: false,
                errorType: TimelineErrorType.IdempotencyKeyReused,
                message: `idempotency_key ${item.idempotencyKey} was already used for a different event (seq ${sameKey.seq})`,
              };
          return;
        }
        if (head?.type === EventType.SessionEnd) {
          outcomes[i] = { ok: false, errorType: TimelineErrorType.SessionArchived, message: `session ${sessionId} is archived` };
          return;
        }
        const unhashed = {
          session_id: sessionId,
          seq: head ? head.seq + 1 : 1,
          event_id: item.eventId,
          event_type: item.type,
          ts: head ? Math.max(now, head.ts) : now,
          content: item.content,
          prev_hash: head ? head.hash : null,
        };
        const event: StoredEvent = { ...unhashed, hash: computeEventHash(unhashed), idempotency_key: item.idempotencyKey ?? null };
        fresh.push(event);
        byId.set(event.event_id, event);
        if (event.idempotency_key) byKey.set(event.idempotency_key, event);
        head = { seq: event.seq, hash: event.hash, ts: event.ts, type: event.event_type };
        outcomes[i] = { ok: true, result: { event: header(event), deduplicated: false } };
      });

      if (fresh.length > 0) {
        const params: unknown[] = [];
        const rows = fresh.map((e) => {
          const base = params.length;
          params.push(e.session_id, e.seq, e.event_id, e.event_type, e.ts, JSON.stringify(e.content), e.prev_hash, e.hash, e.idempotency_key, input.workflowId, input.runId);
          return `(${Array.from({ length: 11 }, (_, k) => `$${base + k + 1}`).join(', ')})`;
        });
        // VALUES rows are processed in order, so each row's guard trigger sees the one before it.
        await db.query(
          `INSERT INTO timeline_events (${EVENT_COLUMNS}, workflow_id, run_id) VALUES ${rows.join(', ')}`,
          params,
        );
      }
      return outcomes as AppendOutcome[];
    });
  }

  return { appendEvents };
}

/** Reads the database's identity once and caches it; a failed read (database down) is tried again next time. */
export function databaseInstanceReader(pool: Pool): () => Promise<string> {
  let instance: Promise<string> | undefined;
  return () =>
    (instance ??= databaseInstanceId(pool).catch((err) => {
      instance = undefined;
      throw err;
    }));
}

export async function databaseInstanceId(pool: Pool): Promise<string> {
  const { rows } = await pool.query('SELECT instance_id FROM timekeeper_instance');
  if (!rows[0]) throw new Error('timekeeper_instance is empty: run the migrations');
  return rows[0].instance_id as string;
}

export type TimelineActivities = ReturnType<typeof createTimelineActivities>;
