/** Read side: timelines are read straight from PostgreSQL, never through the workflow. */
import type { Pool } from 'pg';
import { EVENT_COLUMNS, rowToEvent } from '../activities/timeline';
import { ChainVerifier, VerifyResult } from './hash-chain';
import type { JsonValue, StoredEvent } from '../workflows/messages';

export interface TimelineRow {
  session_id: string;
  timeline_id: string;
  agent_id: string | null;
  channel: string | null;
  metadata: { [k: string]: JsonValue };
  idle_timeout_s: number | null;
  workflow_id: string;
  created_ts: number;
  status: 'open' | 'archived';
  archived_ts: number | null;
  head_seq: number | null;
  head_hash: string | null;
  head_ts: number | null;
}

export async function getTimeline(pool: Pool, sessionId: string): Promise<TimelineRow | null> {
  const { rows } = await pool.query('SELECT * FROM timelines WHERE session_id = $1', [sessionId]);
  return rows[0] ? normaliseTimeline(rows[0]) : null;
}

function normaliseTimeline(r: Record<string, unknown>): TimelineRow {
  return {
    ...(r as unknown as TimelineRow),
    created_ts: Number(r.created_ts),
    archived_ts: r.archived_ts == null ? null : Number(r.archived_ts),
    head_seq: r.head_seq == null ? null : Number(r.head_seq),
    head_ts: r.head_ts == null ? null : Number(r.head_ts),
  };
}

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

export async function listEvents(pool: Pool, sessionId: string, f: EventFilter): Promise<StoredEvent[]> {
  const where = ['session_id = $1'];
  const params: unknown[] = [sessionId];
  const add = (sql: string, v: unknown) => {
    params.push(v);
    where.push(sql.replace('?', `$${params.length}`));
  };
  if (f.afterSeq !== undefined) add('seq > ?', f.afterSeq);
  if (f.maxSeq !== undefined) add('seq <= ?', f.maxSeq);
  if (f.fromTs !== undefined) add('ts >= ?', f.fromTs);
  if (f.toTs !== undefined) add('ts <= ?', f.toTs);
  if (f.types && f.types.length > 0) add('event_type = ANY(?::text[])', f.types);
  params.push(f.limit);
  const { rows } = await pool.query(
    `SELECT ${EVENT_COLUMNS} FROM timeline_events WHERE ${where.join(' AND ')}
      ORDER BY seq ${f.descending ? 'DESC' : 'ASC'} LIMIT $${params.length}`,
    params,
  );
  return rows.map(rowToEvent);
}

export async function countEventsByType(pool: Pool, sessionId: string): Promise<Record<string, number>> {
  const { rows } = await pool.query(
    'SELECT event_type, count(*)::int AS n FROM timeline_events WHERE session_id = $1 GROUP BY event_type ORDER BY event_type',
    [sessionId],
  );
  return Object.fromEntries(rows.map((r) => [r.event_type, r.n]));
}

export interface SessionFilter {
  status?: 'open' | 'archived';
  agentId?: string;
  channel?: string;
  /** Cursor: sessions created after this (created_ts, session_id). */
  after?: { createdTs: number; sessionId: string };
  limit: number;
}

export async function listTimelines(pool: Pool, f: SessionFilter): Promise<TimelineRow[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, ...v: unknown[]) => {
    let s = sql;
    for (const x of v) {
      params.push(x);
      s = s.replace('?', `$${params.length}`);
    }
    where.push(s);
  };
  if (f.status) add('status = ?', f.status);
  if (f.agentId) add('agent_id = ?', f.agentId);
  if (f.channel) add('channel = ?', f.channel);
  if (f.after) add('(created_ts, session_id) > (?, ?)', f.after.createdTs, f.after.sessionId);
  params.push(f.limit);
  const { rows } = await pool.query(
    `SELECT * FROM timelines ${where.length ? 'WHERE ' + where.join(' AND ') : ''}
      ORDER BY created_ts, session_id LIMIT $${params.length}`,
    params,
  );
  return rows.map(normaliseTimeline);
}

/** Recomputes a whole chain page by page, so memory stays flat for long sessions. */
export async function verifyTimeline(pool: Pool, sessionId: string, pageSize = 5000): Promise<VerifyResult> {
  const verifier = new ChainVerifier(sessionId);
  let afterSeq = 0;
  for (;;) {
    // Paging by position (not by seq) so that a gap or a duplicate is seen, not skipped.
    const { rows } = await pool.query(
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
