/**
 * All SQL for "is this task's run still running?" (issue 15: a run is over when its work is).
 * A run is open from its `running` log row until a final row (success, failed, skipped):
 * overlap and max_concurrency decisions read this, not whether the run's workflow has closed.
 * task_run_wakes (schema/015) holds the schedulers waiting for a run to finish.
 */
import type { Pool } from 'pg';

/** Newest started runs of a task looked at for open ones: a task has at most taskMaxConcurrency (100) runs at once. */
const OPEN_RUNS_WINDOW = 200;

export class OpenRunStore {
  constructor(private readonly pool: Pool) {}

  /** The task's runs with a start logged and no finish, oldest first. */
  async openRuns(taskId: string): Promise<string[]> {
    const r = await this.pool.query({
      name: 'task-open-runs',
      text: `SELECT s.run_id FROM (
         SELECT run_id, id FROM task_run_log WHERE task_id = $1 AND status = 'running' ORDER BY id DESC LIMIT ${OPEN_RUNS_WINDOW}) s
        WHERE NOT EXISTS (SELECT 1 FROM task_run_log f WHERE f.run_id = s.run_id AND f.status IN ('success', 'failed', 'skipped'))
        ORDER BY s.id`,
      values: [taskId],
    });
    return r.rows.map((x) => x.run_id as string);
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
