/**
 * All SQL for worker liveness (schema/013_worker_heartbeats.sql): each worker process beats
 * its row; /readyz asks how fresh the newest beat of a task queue is. Times are the
 * database clock's, so the API's and the worker's clocks never have to agree.
 */
import type { Pool } from 'pg';
import { NOW_MS } from './literals';

export interface WorkerIdentity {
  workerId: string;
  taskQueue: string;
  host: string;
  pid: number;
}

export class WorkerHeartbeatStore {
  constructor(private readonly pool: Pool) {}

  /** Inserts or refreshes the worker's row. */
  async beat(w: WorkerIdentity): Promise<void> {
    await this.pool.query(
      `INSERT INTO worker_heartbeats (worker_id, task_queue, host, pid, started_ts, beat_ts) VALUES ($1, $2, $3, $4, ${NOW_MS}, ${NOW_MS})
       ON CONFLICT (worker_id) DO UPDATE SET beat_ts = ${NOW_MS}`,
      [w.workerId, w.taskQueue, w.host.slice(0, 255), w.pid],
    );
  }

  /** A clean stop: the worker is gone now, not in a few seconds. */
  async remove(workerId: string): Promise<void> {
    await this.pool.query('DELETE FROM worker_heartbeats WHERE worker_id = $1', [workerId]);
  }

  /** Rows of workers that stopped beating longer ago than `olderThanMs`. */
  async prune(olderThanMs: number): Promise<number> {
    const { rowCount } = await this.pool.query(`DELETE FROM worker_heartbeats WHERE beat_ts < ${NOW_MS} - $1::bigint`, [olderThanMs]);
    return rowCount ?? 0;
  }

  /** How long ago (ms) a worker of the task queue last beat, and how many beat within `withinMs`; undefined age when none ever did. */
  async freshness(taskQueue: string, withinMs: number): Promise<{ ageMs: number | undefined; alive: number }> {
    const { rows } = await this.pool.query(
      `SELECT ${NOW_MS} - max(beat_ts) AS age_ms, count(*) FILTER (WHERE beat_ts >= ${NOW_MS} - $2::bigint)::int AS alive
         FROM worker_heartbeats WHERE task_queue = $1`,
      [taskQueue, withinMs],
    );
    const r = rows[0] as { age_ms: string | null; alive: number };
    return { ageMs: r.age_ms === null ? undefined : Number(r.age_ms), alive: r.alive };
  }
}
