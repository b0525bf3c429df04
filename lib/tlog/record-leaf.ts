/**
 * The leaf data of records that carry no chain hash of their own (docs/hash-chain.md §10.1):
 * task history rows (`task_history`) and run log rows (`task_run_log`). Their leaf data is the
 * "record hash" SHA-256(UTF-8(JCS(members))), the members being exactly the row's columns
 * listed here plus `table`, with timestamps as integer microseconds since the Unix epoch
 * (PostgreSQL's own precision, so nothing is rounded). Columns added to these tables later
 * are not in it: a record's leaf never changes once logged.
 * Golden vectors: test/vectors/tlog-records.json.
 */
import { createHash } from 'node:crypto';
import { canonicalize, type JsonValue } from '../domain/canonical-json';

/** A task_history row as the builder and verify read it (timestamps in µs since the epoch). */
export interface TaskHistoryRecord {
  id: number;
  task_id: string;
  version: number;
  action: string;
  definition: JsonValue;
  enabled: boolean;
  deleted: boolean;
  reason: string | null;
  created_by: string | null;
  recorded_at: number;
}

/** A task_run_log row as the builder and verify read it (timestamps in µs since the epoch). */
export interface RunLogRecord {
  id: number;
  run_id: string;
  task_id: string;
  status: string;
  reason: string | null;
  trigger: string;
  nominal_at: number;
  started_at: number | null;
  finished_at: number | null;
  lateness_ms: number | null;
  duration_ms: number | null;
  attempt: number;
  processed: number | null;
  error_count: number | null;
  summary: string | null;
  result: JsonValue | null;
  needs_attention: boolean;
  recorded_at: number;
}

export function taskHistoryCanonical(r: TaskHistoryRecord): string {
  return canonicalize({
    table: 'task_history',
    id: r.id,
    task_id: r.task_id,
    version: r.version,
    action: r.action,
    definition: r.definition,
    enabled: r.enabled,
    deleted: r.deleted,
    reason: r.reason,
    created_by: r.created_by,
    recorded_at: r.recorded_at,
  });
}

export function runLogCanonical(r: RunLogRecord): string {
  return canonicalize({
    table: 'task_run_log',
    id: r.id,
    run_id: r.run_id,
    task_id: r.task_id,
    status: r.status,
    reason: r.reason,
    trigger: r.trigger,
    nominal_at: r.nominal_at,
    started_at: r.started_at,
    finished_at: r.finished_at,
    lateness_ms: r.lateness_ms,
    duration_ms: r.duration_ms,
    attempt: r.attempt,
    processed: r.processed,
    error_count: r.error_count,
    summary: r.summary,
    result: r.result,
    needs_attention: r.needs_attention,
    recorded_at: r.recorded_at,
  });
}

/** The 32-byte leaf data of a record whose canonical string is `canonical`. */
export const recordHash = (canonical: string): Buffer => createHash('sha256').update(canonical, 'utf8').digest();

const num = (v: unknown): number => Number(v);
const numOrNull = (v: unknown): number | null => (v == null ? null : Number(v));

/** A row as lib/store/tlog.ts selects it (bigints arrive as strings, timestamps as `<col>_us`) → the record. */
export function taskHistoryRecordOf(r: Record<string, unknown>): TaskHistoryRecord {
  return {
    id: num(r.id),
    task_id: r.task_id as string,
    version: num(r.version),
    action: r.action as string,
    definition: r.definition as JsonValue,
    enabled: r.enabled as boolean,
    deleted: r.deleted as boolean,
    reason: (r.reason as string | null) ?? null,
    created_by: (r.created_by as string | null) ?? null,
    recorded_at: num(r.recorded_at_us),
  };
}

export function runLogRecordOf(r: Record<string, unknown>): RunLogRecord {
  return {
    id: num(r.id),
    run_id: r.run_id as string,
    task_id: r.task_id as string,
    status: r.status as string,
    reason: (r.reason as string | null) ?? null,
    trigger: r.trigger as string,
    nominal_at: num(r.nominal_at_us),
    started_at: numOrNull(r.started_at_us),
    finished_at: numOrNull(r.finished_at_us),
    lateness_ms: numOrNull(r.lateness_ms),
    duration_ms: numOrNull(r.duration_ms),
    attempt: num(r.attempt),
    processed: numOrNull(r.processed),
    error_count: numOrNull(r.error_count),
    summary: (r.summary as string | null) ?? null,
    result: (r.result as JsonValue | null) ?? null,
    needs_attention: r.needs_attention as boolean,
    recorded_at: num(r.recorded_at_us),
  };
}

