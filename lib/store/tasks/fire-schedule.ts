/**
 * All SQL for the shared fire schedule (schema/023, issue 15): the task's scheduler registers
 * a plain cron or interval task here and takes it out again; a fire shard claims the due rows
 * of its shard, and for each either moves it on to its next fire time (its run started) or
 * hands it back to the task's scheduler (too late to fire on time: the misfire policy decides).
 */
import type { Pool } from 'pg';
import { inTransaction } from '../../db';
import type { TaskDefinition } from '../../domain/tasks';

export interface FireRow {
  taskId: string;
  version: number;
  definition: TaskDefinition;
  nextFireMs: number | null;
  cursorMs: number;
  lastFireMs?: number;
  fires: number;
}

export interface Registration {
  taskId: string;
  /** The Temporal task queue of the task's scheduler: its workers fire the row. */
  queue: string;
  shard: number;
  version: number;
  definition: TaskDefinition;
  cursorMs: number;
  lastFireMs?: number;
}

const num = (v: unknown): number | undefined => (v === null || v === undefined ? undefined : Number(v));
const rowOf = (r: Record<string, unknown>): FireRow => ({
  taskId: r.task_id as string,
  version: r.version as number,
  definition: r.definition as TaskDefinition,
  nextFireMs: num(r.next_fire_ms) ?? null,
  cursorMs: Number(r.cursor_ms),
  ...(r.last_fire_ms === null ? {} : { lastFireMs: Number(r.last_fire_ms) }),
  fires: Number(r.fires),
});

/** A claimed batch of due rows, held (FOR UPDATE) while claimDue's body runs: a scheduler taking its task out waits for it. */
export interface DueBatch {
  rows: FireRow[];
  /** Moves a fired row on: its cursor to the fire time fired, its next fire time, one more fire. */
  advance(taskId: string, firedMs: number, nextFireMs: number | null, lastFireMs: number): Promise<void>;
  /** Hands the row back to its scheduler (it fires no more until registered again); its cursor and last start as they were. */
  giveBack(taskId: string): Promise<void>;
}

export class FireScheduleStore {
  constructor(private readonly pool: Pool) {}

  /**
   * Registers the task at this version, in one transaction with the row it replaces. A row of
   * the same version that was not handed back is kept as it is (its shard has moved it on: a
   * scheduler registering again after continue-as-new or a restart must not move it back); a
   * newer version already there wins. Otherwise the cursor and last start are the later of the
   * row's and the scheduler's (the scheduler's copy stops moving while its shard fires), and
   * the next fire time is computed from them by `nextOf` (pure). Answers the row as stored.
   */
  async register(r: Registration, nextOf: (cursorMs: number, lastFireMs: number | undefined) => Promise<number | null>): Promise<FireRow> {
    return inTransaction(this.pool, async (c) => {
      const held = await c.query(`SELECT * FROM task_fire_schedule WHERE task_id = $1 FOR UPDATE`, [r.taskId]);
      const old = held.rows.length ? rowOf(held.rows[0]) : undefined;
      if (old && (old.version > r.version || (old.version === r.version && !held.rows[0].returned))) return old;
      const cursorMs = Math.max(old?.cursorMs ?? r.cursorMs, r.cursorMs);
      const lastFireMs = r.lastFireMs === undefined ? undefined : Math.max(old?.lastFireMs ?? r.lastFireMs, r.lastFireMs);
      const nextFireMs = await nextOf(cursorMs, lastFireMs);
      const res = await c.query(
        `INSERT INTO task_fire_schedule AS s (task_id, queue, shard, version, definition, next_fire_ms, cursor_ms, last_fire_ms)
         VALUES ($1, $8, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (task_id) DO UPDATE SET queue = EXCLUDED.queue, shard = EXCLUDED.shard, version = EXCLUDED.version, definition = EXCLUDED.definition,
           next_fire_ms = EXCLUDED.next_fire_ms, cursor_ms = EXCLUDED.cursor_ms, last_fire_ms = EXCLUDED.last_fire_ms, returned = false
         RETURNING *`,
        [r.taskId, r.shard, r.version, JSON.stringify(r.definition), nextFireMs, cursorMs, lastFireMs ?? null, r.queue],
      );
      return rowOf(res.rows[0]);
    });
  }

  /**
   * Takes the task out (paused, deleted, no longer a plain schedule); waits for a batch that
   * holds its row. Answers the row as it was (the fires it made, its cursor), if there was one.
   */
  async unregister(taskId: string, version: number): Promise<FireRow | undefined> {
    const r = await this.pool.query(`DELETE FROM task_fire_schedule WHERE task_id = $1 AND version <= $2 RETURNING *`, [taskId, version]);
    return r.rows.length ? rowOf(r.rows[0]) : undefined;
  }

  async get(taskId: string): Promise<FireRow | undefined> {
    const r = await this.pool.query(`SELECT * FROM task_fire_schedule WHERE task_id = $1`, [taskId]);
    return r.rows.length ? rowOf(r.rows[0]) : undefined;
  }

  /** The shard's earliest fire time still to fire, or undefined when it has none. */
  async nextDue(queue: string, shard: number): Promise<number | undefined> {
    const r = await this.pool.query(
      `SELECT next_fire_ms FROM task_fire_schedule WHERE queue = $1 AND shard = $2 AND next_fire_ms IS NOT NULL AND NOT returned ORDER BY next_fire_ms LIMIT 1`,
      [queue, shard],
    );
    return r.rows.length ? Number(r.rows[0].next_fire_ms) : undefined;
  }

  /**
   * Claims up to `limit` rows of the shard due at `nowMs`, oldest first, skipping rows another
   * shard loop holds and rows whose task has a newer version than registered (the scheduler
   * is about to register it again, or take it out), and runs `fn` over them in the claim's
   * transaction: it commits when `fn` returns and rolls back when it throws. The transaction is
   * held across the batch's Temporal starts; inTransaction keeps a connection lost meanwhile (a
   * database crash) from killing the process and destroys the broken client.
   */
  async claimDue<T>(queue: string, shard: number, nowMs: number, limit: number, fn: (batch: DueBatch) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, async (c) => {
      const r = await c.query(
        `SELECT s.* FROM task_fire_schedule s
          WHERE s.queue = $4 AND s.shard = $1 AND s.next_fire_ms IS NOT NULL AND NOT s.returned AND s.next_fire_ms <= $2
            AND NOT EXISTS (SELECT 1 FROM task_history h WHERE h.task_id = s.task_id AND h.version > s.version)
          ORDER BY s.next_fire_ms LIMIT $3
          FOR UPDATE OF s SKIP LOCKED`,
        [shard, nowMs, limit, queue],
      );
      return fn({
        rows: r.rows.map(rowOf),
        advance: async (taskId, firedMs, nextFireMs, lastFireMs) => {
          await c.query({
            name: 'task-fire-advance',
            text: `UPDATE task_fire_schedule SET cursor_ms = GREATEST(cursor_ms, $2), next_fire_ms = $3, last_fire_ms = $4, fires = fires + 1 WHERE task_id = $1`,
            values: [taskId, firedMs, nextFireMs, lastFireMs],
          });
        },
        giveBack: async (taskId) => {
          await c.query(`UPDATE task_fire_schedule SET returned = true WHERE task_id = $1`, [taskId]);
        },
      });
    });
  }

  /** Moves the queue's rows of shards `count` and beyond into the first `count` (the shard count went down). */
  async foldShards(queue: string, count: number): Promise<number> {
    const r = await this.pool.query(`UPDATE task_fire_schedule SET shard = shard % $2 WHERE queue = $1 AND shard >= $2`, [queue, count]);
    return r.rowCount ?? 0;
  }

  /** A row handed back whose scheduler could not be told (Temporal away): it fires or is handed back again on the next pass. */
  async takeBackReturn(taskId: string, version: number): Promise<void> {
    await this.pool.query(`UPDATE task_fire_schedule SET returned = false WHERE task_id = $1 AND version = $2`, [taskId, version]);
  }
}
