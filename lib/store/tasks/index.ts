/**
 * All SQL for scheduled tasks: the task history (every change, append-only; the `tasks`
 * view is the current state), the execution log (`task_run_log`, one row per state a run
 * reaches; `task_runs_current` its newest row per run) and deliveries. The API's reads and
 * writes of task definitions and the task activities come here; nothing above writes SQL.
 */
import type { Pool } from 'pg';
import { DomainError, ErrorCode } from '../../domain/errors';
import type { RunMemoryEntry, RunStatus, RunTrigger, TaskAction, TaskDefinition, TaskStatus } from '../../domain/tasks';
import { CANCELLED_REASON_PREFIX, taskErrors } from '../../domain/tasks';
import { addBoundsCondition, boundsCondition, Where } from '../where';
import type { AgentBounds } from '../../domain/agent-bounds';
import type { TaskListOrder } from '../../domain/list-order';

/** TaskStore.runContext: the newest other run's start (one row, `is_last`), then the memory rows. */
export const RUN_CONTEXT_SQL = `
  SELECT true AS is_last, s.started_at AS at, NULL::text AS status, NULL::int AS processed, NULL::int AS error_count, NULL::text AS summary, NULL::boolean AS delivered
    FROM (SELECT 1) one
    LEFT JOIN LATERAL (SELECT started_at FROM task_run_log
                        WHERE task_id = $1 AND status = 'running' AND run_id <> $2 AND started_at IS NOT NULL
                        ORDER BY id DESC LIMIT 1) s ON true
  UNION ALL
  (SELECT false, c.nominal_at, c.status, c.processed, c.error_count, c.summary,
          EXISTS (SELECT 1 FROM task_deliveries d WHERE d.run_id = c.run_id AND d.ok)
     FROM task_runs_current c
    WHERE c.task_id = $1 AND c.run_id <> $2 AND c.status IN ('success', 'failed', 'skipped')
    ORDER BY c.nominal_at DESC LIMIT $3)`;

/** An execution-log row: its columns, their values' placeholders ($6-$8 are ms since the epoch) and the values (runLogValues). */
const RUN_LOG_INSERT = `INSERT INTO task_run_log (run_id, task_id, status, reason, trigger, nominal_at, started_at, finished_at, lateness_ms, duration_ms,
                                  attempt, processed, error_count, summary, result, needs_attention)`;
const RUN_LOG_ROW = `$1, $2, $3, $4, $5, to_timestamp($6 / 1000.0), to_timestamp($7 / 1000.0), to_timestamp($8 / 1000.0), $9, $10, $11, $12, $13, $14, $15, $16`;
const runLogValues = (e: RunLogInput): unknown[] => [
  e.runId,
  e.taskId,
  e.status,
  e.reason ?? null,
  e.trigger,
  e.nominalMs,
  e.startedMs ?? null,
  e.finishedMs ?? null,
  e.startedMs !== undefined ? e.startedMs - e.nominalMs : null,
  e.startedMs !== undefined && e.finishedMs !== undefined ? e.finishedMs - e.startedMs : null,
  e.attempt,
  e.processed ?? null,
  e.errorCount ?? null,
  e.summary ?? null,
  e.result === undefined ? null : JSON.stringify(e.result),
  e.needsAttention ?? false,
];

export interface TaskRow {
  task_id: string;
  version: number;
  last_action: TaskAction;
  definition: TaskDefinition;
  enabled: boolean;
  deleted: boolean;
  reason: string | null;
  created_at: Date;
  updated_at: Date;
  status: TaskStatus;
  /** The agent that created the task (schema/012), null for an operator's or a gateway's task. */
  created_by: string | null;
  last_run: { run_id: string; status: RunStatus; nominal_at: Date; started_at: Date | null; finished_at: Date | null } | null;
}

export interface RunLogInput {
  runId: string;
  taskId: string;
  status: RunStatus;
  reason?: string;
  trigger: RunTrigger;
  nominalMs: number;
  startedMs?: number;
  finishedMs?: number;
  attempt: number;
  processed?: number;
  errorCount?: number;
  summary?: string;
  result?: unknown;
  needsAttention?: boolean;
}

export interface RunRow {
  run_id: string;
  task_id: string;
  status: RunStatus;
  reason: string | null;
  trigger: RunTrigger;
  nominal_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  lateness_ms: number | null;
  duration_ms: number | null;
  attempt: number;
  processed: number | null;
  error_count: number | null;
  summary: string | null;
  result: unknown;
  needs_attention: boolean;
  recorded_at: Date;
  /** The agent that created the run's task (schema/012), or null. */
  created_by: string | null;
}

/** Where a page of runs ended: its last row's sort time (microseconds) and log row id. */
export interface RunKey {
  us: number;
  id: string;
}
export type ListedRun = RunRow & { key: RunKey };

export interface DeliveryRow {
  target: number;
  type: string;
  ok: boolean;
  detail: string | null;
  recorded_at: Date;
}

function rowToTask(r: Record<string, unknown>): TaskRow {
  return {
    task_id: r.task_id as string,
    version: Number(r.version),
    last_action: r.last_action as TaskAction,
    definition: r.definition as TaskDefinition,
    enabled: r.enabled as boolean,
    deleted: r.deleted as boolean,
    reason: (r.reason as string | null) ?? null,
    created_at: r.created_at as Date,
    updated_at: r.updated_at as Date,
    status: ((r.last_run_status as TaskStatus | null) ?? 'pending') as TaskStatus,
    created_by: (r.created_by as string | null) ?? null,
    last_run: r.last_run_id
      ? {
          run_id: r.last_run_id as string,
          status: r.last_run_status as RunStatus,
          nominal_at: r.last_run_nominal_at as Date,
          started_at: (r.last_run_started_at as Date | null) ?? null,
          finished_at: (r.last_run_finished_at as Date | null) ?? null,
        }
      : null,
  };
}

/** The task's creator beside each run (the run log's rows are the task's, `x` the row's alias): one probe of the creation row. */
const RUN_CREATED_BY = '(SELECT h.created_by FROM task_history h WHERE h.task_id = x.task_id AND h.version = 1) AS created_by';
const RUN_COLUMNS = `run_id, task_id, status, reason, trigger, nominal_at, COALESCE(first_started_at, started_at) AS started_at, finished_at, lateness_ms, duration_ms, attempt, processed, error_count, summary, result, needs_attention, recorded_at, ${RUN_CREATED_BY}`;

export interface TaskFilter {
  status?: TaskStatus;
  tag?: string;
  enabled?: boolean;
  includeDeleted?: boolean;
  /** Only the tasks this agent created. */
  createdBy?: string;
  limit: number;
  /** Only tasks of agents within these bounds (a bound API key's list). */
  bounds?: AgentBounds;
  /** newest / oldest: by creation time (then task id); id: by task id. */
  order: TaskListOrder;
  /** Cursor: tasks past this key in `order` (createdUs ignored for the id order). */
  after?: { createdUs: number; taskId: string };
}

/** A listed task with its sort key: the creation time in microseconds, as PostgreSQL keeps it. */
export type ListedTask = TaskRow & { created_us: number };

/** A new plain task's row on the shared fire schedule (schema/023): its queue and shard, its first fire time from its cursor (the create's instant). */
export interface FirstFires {
  queue: string;
  shard: number;
  nextFireMs: number | null;
  cursorMs: number;
}

export class TaskStore {
  constructor(private readonly pool: Pool) {}

  async getTask(taskId: string): Promise<TaskRow | undefined> {
    const r = await this.pool.query('SELECT * FROM tasks WHERE task_id = $1', [taskId]);
    return r.rows[0] ? rowToTask(r.rows[0]) : undefined;
  }

  async listTasks(f: TaskFilter): Promise<ListedTask[]> {
    const w = new Where();
    if (!f.includeDeleted) w.add('NOT deleted');
    if (f.status === 'pending') w.add('last_run_status IS NULL');
    else if (f.status) w.add('last_run_status = ?', f.status);
    // jsonb_exists is jsonb's `?` (has this string), spelled as a function: Where numbers every `?`.
    if (f.tag) w.add("jsonb_exists(definition->'tags', ?)", f.tag);
    if (f.enabled !== undefined) w.add('enabled = ?', f.enabled);
    if (f.createdBy) w.add('created_by = ?', f.createdBy);
    addBoundsCondition(w, "(definition->>'agent_id')", f.bounds);
    let order = 'task_id';
    if (f.order === 'id') {
      if (f.after) w.add('task_id > ?', f.after.taskId);
    } else {
      // Microseconds as an integer both ways, so the cursor's key is the stored one exactly.
      const cmp = f.order === 'newest' ? '<' : '>';
      if (f.after) w.add(`(created_at, task_id) ${cmp} (timestamptz 'epoch' + ?::bigint * interval '1 microsecond', ?)`, f.after.createdUs, f.after.taskId);
      order = f.order === 'newest' ? 'created_at DESC, task_id DESC' : 'created_at, task_id';
    }
    const r = await this.pool.query(
      `SELECT *, (extract(epoch FROM created_at) * 1000000)::bigint AS created_us FROM tasks ${w.sql} ORDER BY ${order} LIMIT ${w.param(f.limit)}`,
      w.params,
    );
    return r.rows.map((x) => ({ ...rowToTask(x), created_us: Number(x.created_us) }));
  }

  /** The tasks (not deleted) an agent created: what AGENT_TASKS_MAX counts. */
  async countCreatedBy(agentId: string): Promise<number> {
    const r = await this.pool.query('SELECT count(*)::int AS n FROM tasks WHERE created_by = $1 AND NOT deleted', [agentId]);
    return r.rows[0].n as number;
  }

  /**
   * Appends a change to a task's history. `expectedSeq` is the task's `version` (the seq of
   * its history head) the change was decided on (0 for a create): a concurrent change makes
   * this a conflict, nothing written. The name is the sessions' `expected_seq`
   * (lib/domain/sessions/index.ts); tasks have no client-sent precondition, so no other name exists.
   * `createdBy` is written on a create only (the creation row is who created the task).
   * With `fires` (a create of a plain cron or interval task, issue 15) the same statement puts
   * the task on the shared fire schedule (schema/023) at version 1: both rows or neither, and
   * no scheduler workflow is needed until the task changes.
   */
  async appendHistory(c: {
    taskId: string;
    expectedSeq: number;
    action: TaskAction;
    definition: TaskDefinition;
    enabled: boolean;
    deleted?: boolean;
    reason?: string;
    createdBy?: string;
    fires?: FirstFires;
  }): Promise<TaskRow> {
    let recordedAt: Date;
    const createdBy = c.expectedSeq === 0 ? (c.createdBy ?? null) : null;
    const history = `INSERT INTO task_history (task_id, version, action, definition, enabled, deleted, reason, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING recorded_at`;
    const f = c.expectedSeq === 0 ? c.fires : undefined;
    try {
      const r = await this.pool.query(
        f
          ? `WITH h AS (${history}),
                  f AS (INSERT INTO task_fire_schedule (task_id, queue, shard, version, definition, next_fire_ms, cursor_ms) SELECT $1, $9::text, $10::integer, $2, $4::jsonb, $11::bigint, $12::bigint FROM h)
             SELECT recorded_at FROM h`
          : history,
        [c.taskId, c.expectedSeq + 1, c.action, JSON.stringify(c.definition), c.enabled, c.deleted ?? false, c.reason ?? null, createdBy, ...(f ? [f.queue, f.shard, f.nextFireMs, f.cursorMs] : [])],
      );
      recordedAt = r.rows[0].recorded_at as Date;
    } catch (err) {
      if ((err as { code?: string }).code === '23505') {
        if (c.expectedSeq === 0) throw taskErrors.exists(c.taskId);
        throw new DomainError(ErrorCode.ConcurrencyConflict, `task ${c.taskId} changed at the same time; nothing was stored: retry`);
      }
      throw err;
    }
    // A create is the whole task (no earlier change, no run yet): answered from what was
    // written, without reading the `tasks` view back. The stored definition is the jsonb of
    // the one sent, so it reads back equal (keys perhaps in another order).
    if (c.expectedSeq === 0) {
      return { task_id: c.taskId, version: 1, last_action: c.action, definition: c.definition, enabled: c.enabled, deleted: c.deleted ?? false, reason: c.reason ?? null, created_at: recordedAt, updated_at: recordedAt, status: 'pending', created_by: createdBy, last_run: null };
    }
    return (await this.getTask(c.taskId))!;
  }

  async history(taskId: string): Promise<{ version: number; action: TaskAction; enabled: boolean; deleted: boolean; reason: string | null; recorded_at: Date }[]> {
    const r = await this.pool.query('SELECT version, action, enabled, deleted, reason, recorded_at FROM task_history WHERE task_id = $1 ORDER BY version', [taskId]);
    return r.rows;
  }

  // ---- the execution log ---------------------------------------------------------------

  async recordRun(e: RunLogInput): Promise<void> {
    await this.pool.query({ name: 'task-run-log-insert', text: `${RUN_LOG_INSERT} VALUES (${RUN_LOG_ROW}) ON CONFLICT (run_id, status, attempt) DO NOTHING`, values: runLogValues(e) });
  }

  /**
   * A run's final row, unless a final row is logged for it by now (a lost run's end: its
   * workflow logs its finish before it closes, so a close seen after the open-runs read is no
   * loss). True when this call logged it.
   */
  async recordFinishIfOpen(e: RunLogInput): Promise<boolean> {
    const r = await this.pool.query(
      `${RUN_LOG_INSERT} SELECT ${RUN_LOG_ROW}
        WHERE NOT EXISTS (SELECT 1 FROM task_run_log WHERE run_id = $1 AND status IN ('success', 'failed', 'skipped'))
       ON CONFLICT (run_id, status, attempt) DO NOTHING`,
      runLogValues(e),
    );
    return r.rowCount === 1;
  }

  /**
   * Those of `runIds` that were started (logged in any state but skipped): a backfill does
   * not run them again, also after Temporal's retention has forgotten their workflows.
   */
  async startedRunIds(runIds: string[]): Promise<Set<string>> {
    if (runIds.length === 0) return new Set();
    const r = await this.pool.query(`SELECT DISTINCT run_id FROM task_run_log WHERE run_id = ANY($1::text[]) AND status <> 'skipped'`, [runIds]);
    return new Set(r.rows.map((x) => x.run_id as string));
  }

  async getRun(runId: string): Promise<RunRow | undefined> {
    const r = await this.pool.query(`SELECT ${RUN_COLUMNS} FROM task_runs_current x WHERE run_id = $1`, [runId]);
    return r.rows[0];
  }

  /** A task's runs, newest fire time first; `after` (a previous page's last key) pages on. */
  async runsOfTask(taskId: string, limit: number, after?: RunKey): Promise<ListedRun[]> {
    const w = new Where();
    w.add('task_id = ?', taskId);
    return this.runPage('nominal_at', w, limit, after);
  }

  /** Runs by status, newest change first; `needs_attention` is the queue of runs that failed for good. */
  async listRuns(f: { status?: RunStatus | 'needs_attention'; taskId?: string; limit: number; after?: RunKey; bounds?: AgentBounds }): Promise<ListedRun[]> {
    const w = new Where();
    if (f.status === 'needs_attention') w.add('needs_attention');
    else if (f.status) w.add('status = ?', f.status);
    if (f.taskId) w.add('task_id = ?', f.taskId);
    if (f.bounds) {
      // Runs of the tasks whose newest definition is owned within the bounds.
      const owned = boundsCondition(w, "(n.definition->>'agent_id')", f.bounds);
      w.add(`task_id IN (SELECT n.task_id FROM task_history n WHERE n.version = (SELECT max(h.version) FROM task_history h WHERE h.task_id = n.task_id) AND ${owned})`);
    }
    return this.runPage('recorded_at', w, f.limit, f.after);
  }

  /** One page of task_runs_current, newest `by` first, keyset-paged on (`by` in microseconds, log row id). */
  private async runPage(by: 'nominal_at' | 'recorded_at', w: Where, limit: number, after: RunKey | undefined): Promise<ListedRun[]> {
    if (after) w.add(`(${by}, id) < (timestamptz 'epoch' + ?::bigint * interval '1 microsecond', ?::bigint)`, after.us, after.id);
    const r = await this.pool.query(
      `SELECT ${RUN_COLUMNS}, id, (extract(epoch FROM ${by}) * 1000000)::bigint AS key_us FROM task_runs_current x ${w.sql} ORDER BY ${by} DESC, id DESC LIMIT ${w.param(limit)}`,
      w.params,
    );
    return r.rows.map(({ id, key_us, ...row }) => ({ ...(row as RunRow), key: { us: Number(key_us), id: String(id) } }));
  }

  /** Every state one run went through, oldest first. */
  async runLog(runId: string): Promise<(RunRow & { log_row_id: string })[]> {
    const r = await this.pool.query(`SELECT ${RUN_COLUMNS.replace('COALESCE(first_started_at, started_at)', 'started_at')}, id::int8 AS log_row_id FROM task_run_log x WHERE run_id = $1 ORDER BY id`, [runId]);
    return r.rows;
  }

  /**
   * What a run wakes up with, in one statement (it was two before stop 42, issue 15):
   * the start of the task's newest other run ("time since the last run") and the last `n`
   * finished runs before this one, newest first (what the agent remembers). Both read through
   * indexes from the newest end, so a task with a long run log costs what a new one does: the
   * newest start is the newest `running` row (task_run_log_task_started; every started run
   * logs one, with its start), not max(started_at) over every row the task ever logged.
   */
  async runContext(taskId: string, excludeRunId: string, n: number): Promise<{ lastStartMs?: number; memory: RunMemoryEntry[] }> {
    const r = await this.pool.query({ name: 'task-run-context', text: RUN_CONTEXT_SQL, values: [taskId, excludeRunId, Math.max(0, n)] });
    const last = r.rows.find((x) => x.is_last === true);
    return {
      ...(last?.at ? { lastStartMs: (last.at as Date).getTime() } : {}),
      memory: r.rows
        .filter((x) => x.is_last !== true)
        .map((x) => ({
          nominal_ms: (x.at as Date).getTime(),
          status: x.status,
          processed: x.processed,
          error_count: x.error_count,
          summary: x.summary,
          delivered: x.delivered,
        }))
        // Newest first: the branch's ORDER BY is not an order of the UNION's rows.
        .sort((a, b) => b.nominal_ms - a.nominal_ms),
    };
  }

  /** Start of the newest run before this one, for "time since the last run". */
  async lastStartBefore(taskId: string, excludeRunId: string): Promise<number | undefined> {
    return (await this.runContext(taskId, excludeRunId, 0)).lastStartMs;
  }

  /**
   * Failed runs in a row, counting back from the newest finished run. A run cancelled by a
   * newer one (overlap cancel_previous) is logged as failed but is no failure of the task:
   * it neither counts nor breaks the row.
   */
  async consecutiveFailures(taskId: string): Promise<number> {
    const r = await this.pool.query(
      `SELECT status FROM task_runs_current
        WHERE task_id = $1 AND status IN ('success', 'failed') AND NOT (status = 'failed' AND reason LIKE $2)
        ORDER BY recorded_at DESC LIMIT 1000`,
      [taskId, `${CANCELLED_REASON_PREFIX}%`],
    );
    let n = 0;
    for (const row of r.rows) {
      if (row.status !== 'failed') break;
      n++;
    }
    return n;
  }

  async recordDelivery(d: { runId: string; taskId: string; target: number; type: string; ok: boolean; detail?: string }): Promise<void> {
    await this.pool.query('INSERT INTO task_deliveries (run_id, task_id, target, type, ok, detail) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (run_id, target) WHERE ok DO NOTHING', [
      d.runId,
      d.taskId,
      d.target,
      d.type,
      d.ok,
      d.detail?.slice(0, 1000) ?? null,
    ]);
  }

  /** Targets that already took this run's result: a retried delivery activity skips them. */
  async deliveries(runId: string): Promise<DeliveryRow[]> {
    const r = await this.pool.query('SELECT target, type, ok, detail, recorded_at FROM task_deliveries WHERE run_id = $1 ORDER BY id', [runId]);
    return r.rows;
  }
}
