/**
 * All SQL for "is this task's run still running?" (issue 15: a run is over when its work is).
 * A run is open from its `running` log row until a final row (success, failed, skipped):
 * overlap and max_concurrency decisions read this, not whether the run's workflow has closed.
 * task_run_wakes (schema/015) holds the schedulers waiting for a run to finish.
 */
import type { Pool } from 'pg';
import type { RunTrigger } from '../../domain/tasks';

/** A run with its start logged and no finish. */
export interface OpenRun {
  runId: string;
  trigger: RunTrigger;
  nominalMs: number;
  startedMs: number | null;
  /** How long ago its start was logged, by the database's clock. */
  loggedAgoMs: number;
}

/** Newest started runs of a task looked at for open ones: a task has at most taskMaxConcurrency (100) runs at once. */
const OPEN_RUNS_WINDOW = 200;

export class OpenRunStore {
  constructor(private readonly pool: Pool) {}

  /** The task's runs with a start logged and no finish, oldest first. */
  async openRuns(taskId: string): Promise<OpenRun[]> {
    const r = await this.pool.query({
      name: 'task-open-runs',
      text: `SELECT s.run_id, s.trigger, (extract(epoch FROM s.nominal_at) * 1000)::bigint AS nominal_ms, (extract(epoch FROM s.started_at) * 1000)::bigint AS started_ms,
                    (extract(epoch FROM clock_timestamp() - s.recorded_at) * 1000)::bigint AS logged_ago_ms FROM (
         SELECT run_id, id, trigger, nominal_at, started_at, recorded_at FROM task_run_log WHERE task_id = $1 AND status = 'running' ORDER BY id DESC LIMIT ${OPEN_RUNS_WINDOW}) s
        WHERE NOT EXISTS (SELECT 1 FROM task_run_log f WHERE f.run_id = s.run_id AND f.status IN ('success', 'failed', 'skipped'))
        ORDER BY s.id`,
      values: [taskId],
    });
    return r.rows.map((x) => ({
      runId: x.run_id as string,
      trigger: x.trigger as RunTrigger,
      nominalMs: Number(x.nominal_ms),
      startedMs: x.started_ms === null ? null : Number(x.started_ms),
      loggedAgoMs: Number(x.logged_ago_ms),
    }));
  }

  /** Asks to be woken when these runs finish (the task's scheduler reads the wake as signal run-finished). */
  async addWakes(taskId: string, runIds: string[]): Promise<void> {
    if (runIds.length === 0) return;
    await this.pool.query(`INSERT INTO task_run_wakes (run_id, task_id) SELECT unnest($1::text[]), $2 ON CONFLICT (run_id, task_id) DO NOTHING`, [runIds, taskId]);
  }

  /** The tasks whose scheduler waits for this run to finish. */
  async wakesFor(runId: string): Promise<string[]> {
    const r = await this.pool.query({ name: 'task-run-wakes-for', text: `SELECT task_id FROM task_run_wakes WHERE run_id = $1`, values: [runId] });
    return r.rows.map((x) => x.task_id as string);
  }
}
