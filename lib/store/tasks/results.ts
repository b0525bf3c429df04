/**
 * SQL for what task runs leave behind besides the execution log: the `table` delivery's rows
 * (task_results, schema/008), the follow-up tasks a run created, and the window of the
 * needs-attention queue a digest summarises. Task definitions and the run log stay in
 * lib/store/tasks/index.ts.
 */
import type { Pool } from 'pg';
import type { AgentAnswer } from '../../domain/tasks';
import type { DigestItem, DigestStatus } from '../../domain/tasks/outputs';
import { Where } from '../where';

export interface TaskResultInput {
  runId: string;
  taskId: string;
  scheduledMs: number;
  startedMs: number;
  finishedMs: number;
  attempt: number;
  answer: AgentAnswer;
}

export interface TaskResultRow {
  run_id: string;
  task_id: string;
  status: string;
  scheduled_at: Date;
  started_at: Date;
  finished_at: Date;
  attempt: number;
  processed: number | null;
  error_count: number | null;
  summary: string;
  result: unknown;
  recorded_at: Date;
}

export interface DigestQuery {
  statuses: DigestStatus[];
  sinceMs: number;
  untilMs: number;
  /** Only these tasks; otherwise every task but `excludeTaskId`. */
  taskIds?: string[];
  excludeTaskId: string;
  limit: number;
}

export class TaskResultStore {
  constructor(private readonly pool: Pool) {}

  /** Stores a run's result once: true when this call stored it, false when it was there already. */
  async insertResult(r: TaskResultInput): Promise<boolean> {
    const res = await this.pool.query(
      `INSERT INTO task_results (run_id, task_id, status, scheduled_at, started_at, finished_at, attempt, processed, error_count, summary, result)
       VALUES ($1, $2, $3, to_timestamp($4 / 1000.0), to_timestamp($5 / 1000.0), to_timestamp($6 / 1000.0), $7, $8, $9, $10, $11)
       ON CONFLICT (run_id) DO NOTHING`,
      [r.runId, r.taskId, r.answer.status, r.scheduledMs, r.startedMs, r.finishedMs, r.attempt, r.answer.processed, r.answer.errors.length, r.answer.summary, JSON.stringify(r.answer)],
    );
    return res.rowCount === 1;
  }

  async resultsOf(taskId: string, limit: number): Promise<TaskResultRow[]> {
    const r = await this.pool.query(
      `SELECT run_id, task_id, status, scheduled_at, started_at, finished_at, attempt, processed, error_count, summary, result, recorded_at
         FROM task_results WHERE task_id = $1 ORDER BY scheduled_at DESC, id DESC LIMIT $2`,
      [taskId, limit],
    );
    return r.rows;
  }

  /** Tasks created as follow-ups of this run (their first history row carries parent_run_id). */
  async followUpsOf(runId: string): Promise<{ task_id: string; name: string; created_at: Date }[]> {
    const r = await this.pool.query(
      `SELECT task_id, definition->>'name' AS name, recorded_at AS created_at FROM task_history
        WHERE version = 1 AND definition ? 'parent_run_id' AND definition->>'parent_run_id' = $1 ORDER BY id`,
      [runId],
    );
    return r.rows;
  }

  /**
   * Runs a digest summarises: their newest state is one of `statuses` (needs_attention: the
   * queue of runs that failed for good), reached inside the window; newest first, with the
   * total count beyond `limit`.
   */
  async digest(q: DigestQuery): Promise<{ items: DigestItem[]; total: number }> {
    const w = new Where();
    const kinds: string[] = [];
    if (q.statuses.includes('needs_attention')) kinds.push('needs_attention');
    const plain = q.statuses.filter((s) => s !== 'needs_attention');
    if (plain.length) kinds.push(`status = ANY(${w.param(plain)})`);
    w.add(`(${kinds.join(' OR ')})`);
    w.add('recorded_at > to_timestamp(? / 1000.0)', q.sinceMs);
    w.add('recorded_at <= to_timestamp(? / 1000.0)', q.untilMs);
    if (q.taskIds) w.add('task_id = ANY(?)', q.taskIds);
    else w.add('task_id <> ?', q.excludeTaskId);
    const r = await this.pool.query(
      `SELECT run_id, task_id, status, nominal_at, reason, count(*) OVER () AS total
         FROM task_runs_current ${w.sql} ORDER BY recorded_at DESC, id DESC LIMIT ${w.param(q.limit)}`,
      w.params,
    );
    return {
      total: r.rows.length ? Number(r.rows[0].total) : 0,
      items: r.rows.map((x) => ({ run_id: x.run_id, task_id: x.task_id, status: x.status, scheduled_at: (x.nominal_at as Date).toISOString(), reason: x.reason })),
    };
  }
}
