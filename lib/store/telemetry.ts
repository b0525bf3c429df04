/**
 * The reads of the OpenTelemetry exporter (activities/otel/index.ts): committed timeline events in
 * commit-clock order after a cursor, and the events of a session a batch's spans open with.
 * Read-only; the exporter never writes to the event database (its cursor lives in its
 * workflow, workflows/otel/workflow.ts).
 */
import type { Pool } from 'pg';
import { EVENT_COLUMNS, rowToEvent as storedEvent } from './sessions';
import { NOW_MS } from './literals';

/** One committed event, as the exporter reads it. */
export interface TelemetryEvent {
  session_id: string;
  seq: number;
  event_id: string;
  event_type: string;
  /** Commit clock, ms since the epoch. */
  ts: number;
  /** When it happened, ms since the epoch, when the writer gave it. */
  occurred_at?: number | null;
  content: unknown;
}

/** The session's fixed facts every span repeats. */
export interface TelemetrySession {
  session_id: string;
  agent_id: string | null;
  channel: string | null;
}

/** Where the exporter is: the last exported event in (ts, session_id, seq) order. */
export interface TelemetryCursor {
  ts: number;
  session_id: string;
  seq: number;
}

export const TELEMETRY_START: TelemetryCursor = { ts: 0, session_id: '', seq: 0 };

export interface TelemetryRow extends TelemetryEvent {
  session: TelemetrySession;
}

const COLUMNS = EVENT_COLUMNS;

function rowToEvent(r: Record<string, unknown>): TelemetryEvent {
  const { session_id, seq, event_id, event_type, ts, content, occurred_at } = storedEvent(r);
  return { session_id, seq, event_id, event_type, ts, content, occurred_at: occurred_at ?? null };
}

export class TelemetryStore {
  constructor(private readonly pool: Pool) {}

  /**
   * Up to `limit` events after the cursor, committed at least `settleMs` ago by the database
   * clock. `ts` is read when a write's transaction begins and the row is visible when it
   * commits, so a younger event may still have an older, uncommitted neighbour; waiting
   * `settleMs` lets such writes commit before the cursor passes their `ts`.
   * An index range read over timeline_events (ts, session_id, seq) (schema/020_event_ts_order.sql).
   */
  async eventsAfter(cursor: TelemetryCursor, limit: number, settleMs: number): Promise<TelemetryRow[]> {
    const { rows } = await this.pool.query(
      `SELECT ${COLUMNS}, s.agent_id, s.channel
         FROM timeline_events e JOIN timeline_sessions s USING (session_id)
        WHERE (e.ts, e.session_id, e.seq) > ($1::bigint, $2::text, $3::bigint)
          AND e.ts <= ${NOW_MS} - $4::bigint
        ORDER BY e.ts, e.session_id, e.seq
        LIMIT $5`,
      [cursor.ts, cursor.session_id, cursor.seq, settleMs, limit],
    );
    return rows.map((r) => ({ ...rowToEvent(r), session: { session_id: r.session_id as string, agent_id: (r.agent_id as string | null) ?? null, channel: (r.channel as string | null) ?? null } }));
  }

  /**
   * The events before `seq` that spans closing at or after it open with: from the latest
   * USER_INPUT before it (the turn), else just the event before it; at most `maxEvents` back.
   */
  async contextBefore(sessionId: string, seq: number, maxEvents: number): Promise<TelemetryEvent[]> {
    const { rows } = await this.pool.query(
      `SELECT ${COLUMNS} FROM timeline_events e
        WHERE e.session_id = $1 AND e.seq < $2 AND e.seq >= GREATEST($2 - $3,
              COALESCE((SELECT max(u.seq) FROM timeline_events u
                         WHERE u.session_id = $1 AND u.seq < $2 AND u.seq >= $2 - $3 AND u.event_type = 'USER_INPUT'), $2 - 1))
        ORDER BY e.seq`,
      [sessionId, seq, maxEvents],
    );
    return rows.map(rowToEvent);
  }
}
