/**
 * All SQL for session timelines: row mapping, reads, the dedup lookup, the chain head and
 * the batch insert. The writer activity and the API's read paths both come here; nothing
 * above this module writes SQL for timelines.
 */
import type { Pool, PoolClient } from 'pg';
import { inTransaction, TxContext } from '../db';
import type { JsonValue } from '../domain/canonical-json';
import { LIMITS } from '../domain/limits';
import type { ListOrder } from '../domain/list-order';
import type { ChainHead, StoredEvent, TimelineStatus } from '../domain/sessions';
import { ChainVerifier, VerifyResult } from '../hash-chain';
import { NOW_MS, literals } from './literals';
import { addBoundsCondition, Where } from './where';
import type { AgentBounds } from '../domain/agent-bounds';

/** The columns of a StoredEvent, in the order rowToEvent reads them. */
export const EVENT_COLUMNS = 'session_id, seq, event_id, event_type, ts, content, prev_hash, hash, idempotency_key, occurred_at';

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
    // Only when stored: events without one keep the shape they always had.
    ...(r.occurred_at == null ? {} : { occurred_at: Number(r.occurred_at) }),
  };
}

/** One row of the `timelines` view: a session with its status and head derived from its events. */
export interface TimelineRow {
  session_id: string;
  timeline_id: string;
  agent_id: string | null;
  channel: string | null;
  metadata: { [k: string]: JsonValue };
  idle_timeout_s: number | null;
  workflow_id: string;
  created_ts: number;
  status: TimelineStatus;
  archived_ts: number | null;
  head_seq: number | null;
  head_hash: string | null;
  head_ts: number | null;
}

function rowToTimeline(r: Record<string, unknown>): TimelineRow {
  return {
    ...(r as unknown as TimelineRow),
    created_ts: Number(r.created_ts),
    archived_ts: r.archived_ts == null ? null : Number(r.archived_ts),
    head_seq: r.head_seq == null ? null : Number(r.head_seq),
    head_ts: r.head_ts == null ? null : Number(r.head_ts),
  };
}

export const timelineHead = (t: TimelineRow): ChainHead | null =>
  t.head_seq === null ? null : { seq: t.head_seq, hash: t.head_hash!, ts: t.head_ts! };

export interface EventFilter {
  afterSeq?: number;
  /** Inclusive. */
  fromTs?: number;
  /** Inclusive. */
  toTs?: number;
  /** Only events at or before this seq (as-of reads). */
  maxSeq?: number;
  types?: string[];
  limit: number;
  /** Newest first, for "the last N events" reads. Default false. */
  descending?: boolean;
}

export interface SessionFilter {
  status?: TimelineStatus;
  agentId?: string;
  channel?: string;
  /** newest: created_ts, session_id descending; oldest: ascending. */
  order: ListOrder;
  /** Cursor: sessions past this (created_ts, session_id) in `order`. */
  after?: { createdTs: number; sessionId: string };
  /** Only sessions whose agent is within these bounds (a bound API key's list). */
  bounds?: AgentBounds;
  limit: number;
}

/** What the writer needs to create a timeline's own row with its first batch. */
export interface NewTimelineRow {
  sessionId: string;
  timelineId: string;
  agentId?: string;
  channel?: string;
  metadata?: { [k: string]: JsonValue };
  idleTimeoutS?: number;
  workflowId: string;
  /** The database clock the batch read with its lookup, so SESSION_CREATE's ts is never before it. */
  createdTs: number;
}

/** The chain head plus its type (to refuse appends after SESSION_END), and the database clock. */
export interface WriteHead {
  head: (ChainHead & { type: string }) | null;
  nowMs: number;
}

/** The writer's view inside one transaction that holds the session's lock. */
export class SessionWriteTx {
  constructor(
    private readonly db: PoolClient,
    private readonly ctx: TxContext,
  ) {}

  /** Inserts the timeline row; false when it exists already (its timeline_id is returned). */
  async createTimeline(t: NewTimelineRow): Promise<{ created: boolean; timelineId: string | undefined }> {
    const r = await this.db.query(
      `INSERT INTO timeline_sessions (session_id, timeline_id, agent_id, channel, metadata, idle_timeout_s, workflow_id, created_ts)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (session_id) DO NOTHING`,
      [t.sessionId, t.timelineId, t.agentId ?? null, t.channel ?? null, JSON.stringify(t.metadata ?? {}), t.idleTimeoutS ?? null, t.workflowId, t.createdTs],
    );
    if (r.rowCount === 1) return { created: true, timelineId: t.timelineId };
    const existing = await this.db.query('SELECT timeline_id FROM timeline_sessions WHERE session_id = $1', [t.sessionId]);
    return { created: false, timelineId: existing.rows[0]?.timeline_id as string | undefined };
  }

  /** Inserts events in order (VALUES rows are processed in order, so each row's guard trigger sees the one before it), sent with COMMIT. */
  insertEvents(events: StoredEvent[], writer: { workflowId: string; runId: string }): void {
    if (events.length === 0) return;
    const l = literals(this.db);
    const rows = events.map(
      (e) =>
        `(${[l.text(e.session_id), l.int(e.seq), l.text(e.event_id), l.text(e.event_type), l.int(e.ts), l.jsonb(e.content), l.text(e.prev_hash), l.text(e.hash), l.text(e.idempotency_key), l.int(e.occurred_at), l.text(writer.workflowId), l.text(writer.runId)].join(', ')})`,
    );
    this.ctx.commitWith(`INSERT INTO timeline_events (${EVENT_COLUMNS}, workflow_id, run_id) VALUES ${rows.join(', ')}`);
  }
}

/** What the writer looks up before deciding a batch: stored events by these ids (any session) or by this session's keys. */
export interface KnownLookup {
  eventIds: string[];
  idempotencyKeys: string[];
}

/**
 * In one statement: stored events with one of these ids (any session) or this session's
 * events with one of these keys, the chain head plus its type, and the database clock. The
 * head row leaves its content out (up to 1 MiB, and not needed). Literals only, so it travels
 * with BEGIN and the lock in one simple-protocol round trip.
 */
function knownSql(db: PoolClient, sessionId: string, lookup: KnownLookup): string {
  const l = literals(db);
  const sid = l.text(sessionId);
  return `SELECT true AS is_head, ${NOW_MS} AS now,
              h.session_id, h.seq, h.event_id, h.event_type, h.ts, NULL::jsonb AS content, h.prev_hash, h.hash, h.idempotency_key, h.occurred_at
         FROM (SELECT 1) one
         LEFT JOIN LATERAL (SELECT ${EVENT_COLUMNS} FROM timeline_events
                             WHERE session_id = ${sid} ORDER BY seq DESC LIMIT 1) h ON true
       UNION ALL
       SELECT false, NULL, ${EVENT_COLUMNS} FROM timeline_events
        WHERE event_id = ANY(${l.array(lookup.eventIds, 'uuid')}) OR (session_id = ${sid} AND idempotency_key = ANY(${l.array(lookup.idempotencyKeys, 'text')}))`;
}

function knownOf(rows: Record<string, unknown>[]): { known: StoredEvent[] } & WriteHead {
  const h = rows.find((r) => r.is_head === true)!;
  return {
    known: rows.filter((r) => r.is_head !== true).map(rowToEvent),
    nowMs: Number(h.now),
    head: h.seq == null ? null : { seq: Number(h.seq), hash: h.hash as string, ts: Number(h.ts), type: h.event_type as string },
  };
}

export class SessionStore {
  constructor(private readonly pool: Pool) {}

  /**
   * Runs `fn` in one transaction holding the session's advisory lock (belt and braces next to
   * the single-writer workflow, so a second writer waits instead of losing a race), with what
   * `lookup` finds. Two round trips for a batch: BEGIN + lock + lookup, then insert + COMMIT.
   */
  write<T>(sessionId: string, lookup: KnownLookup, fn: (tx: SessionWriteTx, found: { known: StoredEvent[] } & WriteHead) => Promise<T>): Promise<T> {
    return inTransaction(
      this.pool,
      (db, ctx) => fn(new SessionWriteTx(db, ctx), knownOf(ctx.opened[1].rows)),
      (db) => `${literals(db).xactLock(sessionId)}; ${knownSql(db, sessionId, lookup)}`,
    );
  }

  /**
   * Runs `fn` in one transaction holding the session's lock, on a chain head the caller already
   * knows (the session workflow's), without looking anything up: the first round trip is BEGIN,
   * the lock and the database clock only. The lookup `write` does is half the database's CPU of
   * an append (docs/operations.md); here the table's own constraints stand in for it: a head
   * that is not the stored one fails the guard trigger, an event id or idempotency key stored
   * before fails its unique index, and the whole transaction rolls back (`isLookupNeeded`).
   */
  writeOnHead<T>(sessionId: string, fn: (tx: SessionWriteTx, nowMs: number) => Promise<T>): Promise<T> {
    return inTransaction(
      this.pool,
      (db, ctx) => fn(new SessionWriteTx(db, ctx), Number(ctx.opened[0].rows[0].now)),
      (db) => `${literals(db).xactLock(sessionId)}, ${NOW_MS} AS now`,
    );
  }

  async getTimeline(sessionId: string): Promise<TimelineRow | null> {
    const { rows } = await this.pool.query('SELECT * FROM timelines WHERE session_id = $1', [sessionId]);
    return rows[0] ? rowToTimeline(rows[0]) : null;
  }

  async listTimelines(f: SessionFilter): Promise<TimelineRow[]> {
    const w = new Where();
    if (f.status) w.add('status = ?', f.status);
    if (f.agentId) w.add('agent_id = ?', f.agentId);
    if (f.channel) w.add('channel = ?', f.channel);
    addBoundsCondition(w, 'agent_id', f.bounds);
    // Both directions read the (created_ts, session_id) index, forwards or backwards.
    const newest = f.order === 'newest';
    if (f.after) w.add(`(created_ts, session_id) ${newest ? '<' : '>'} (?, ?)`, f.after.createdTs, f.after.sessionId);
    const limit = w.param(f.limit);
    const dir = newest ? 'DESC' : 'ASC';
    const { rows } = await this.pool.query(`SELECT * FROM timelines ${w.sql} ORDER BY created_ts ${dir}, session_id ${dir} LIMIT ${limit}`, w.params);
    return rows.map(rowToTimeline);
  }

  async listEvents(sessionId: string, f: EventFilter): Promise<StoredEvent[]> {
    const w = new Where();
    w.add('session_id = ?', sessionId);
    if (f.afterSeq !== undefined) w.add('seq > ?', f.afterSeq);
    if (f.maxSeq !== undefined) w.add('seq <= ?', f.maxSeq);
    if (f.fromTs !== undefined) w.add('ts >= ?', f.fromTs);
    if (f.toTs !== undefined) w.add('ts <= ?', f.toTs);
    if (f.types && f.types.length > 0) w.add('event_type = ANY(?::text[])', f.types);
    const limit = w.param(f.limit);
    const { rows } = await this.pool.query(
      `SELECT ${EVENT_COLUMNS} FROM timeline_events ${w.sql} ORDER BY seq ${f.descending ? 'DESC' : 'ASC'} LIMIT ${limit}`,
      w.params,
    );
    return rows.map(rowToEvent);
  }

  /** The event an idempotent retry refers to: same idempotency key, or (when the client chose it) same event id. */
  async findPrior(sessionId: string, idempotencyKey: string | undefined, clientEventId: string | undefined): Promise<StoredEvent | undefined> {
    if (!idempotencyKey && !clientEventId) return undefined;
    const { rows } = await this.pool.query(
      `SELECT ${EVENT_COLUMNS} FROM timeline_events
        WHERE session_id = $1 AND (idempotency_key = $2 OR ($3::uuid IS NOT NULL AND event_id = $3::uuid))`,
      [sessionId, idempotencyKey ?? null, clientEventId ?? null],
    );
    return rows[0] ? rowToEvent(rows[0]) : undefined;
  }

  /** The stored hash at one seq, or undefined when the table has no such row. */
  async hashAt(sessionId: string, seq: number): Promise<string | undefined> {
    const { rows } = await this.pool.query('SELECT hash FROM timeline_events WHERE session_id = $1 AND seq = $2', [sessionId, seq]);
    return rows[0]?.hash as string | undefined;
  }

  async countEventsByType(sessionId: string): Promise<Record<string, number>> {
    const { rows } = await this.pool.query(
      'SELECT event_type, count(*)::int AS n FROM timeline_events WHERE session_id = $1 GROUP BY event_type ORDER BY event_type',
      [sessionId],
    );
    return Object.fromEntries(rows.map((r) => [r.event_type, r.n]));
  }

  /** Recomputes a whole chain page by page, so memory stays flat for long sessions. */
  async verify(sessionId: string, pageSize: number = LIMITS.verifyPageSize): Promise<VerifyResult> {
    const verifier = new ChainVerifier(sessionId);
    let afterSeq = 0;
    for (;;) {
      // Paging by position (not by seq) so that a gap or a duplicate is seen, not skipped.
      const { rows } = await this.pool.query(
        `SELECT ${EVENT_COLUMNS} FROM timeline_events WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
        [sessionId, afterSeq, pageSize],
      );
      for (const row of rows) {
        if (verifier.push(rowToEvent(row))) return verifier.result();
      }
      if (rows.length < pageSize) return verifier.result();
      afterSeq = Number(rows[rows.length - 1].seq);
    }
  }
}
