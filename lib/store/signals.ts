/**
 * All SQL for signals (schema/007_signals.sql): storing one idempotently by its signal id,
 * finding the enabled tasks whose delay or condition trigger listens to a name, and the
 * run streak a task-run outcome signal carries, and the newest-first list the API and the
 * dashboard read. Signals are append-only: nothing here updates or deletes.
 */
import type { Pool } from 'pg';
import type { SignalEvent, SignalValue } from '../domain/signals';
import type { RunStatus } from '../domain/tasks';
import { TASK_RUN_SIGNAL_PREFIX } from '../domain/signals';
import { listensTo } from '../domain/tasks/conditions';
import type { TaskDefinition } from '../domain/tasks';
import { withinBounds, type AgentBounds } from '../domain/agent-bounds';
import { Where } from './where';

/** A listening task's current history row: what its scheduler is (re)started from. */
export interface Listener {
  task_id: string;
  version: number;
  definition: TaskDefinition;
  enabled: boolean;
  deleted: boolean;
}

export interface StoredSignal extends SignalEvent {
  seq: number;
  source: 'api' | 'task_run';
  recorded_at: Date;
  /** The agent bounds of the key that sent it: only tasks of those agents take it in; undefined: every task. */
  bounds?: AgentBounds;
}

const rowOf = (r: Record<string, unknown>): StoredSignal => ({
  seq: Number(r.seq),
  signal_id: r.signal_id as string,
  name: r.name as string,
  value: (r.value ?? null) as SignalValue,
  values: r.signal_values as Record<string, SignalValue>,
  atMs: (r.occurred_at as Date).getTime(),
  source: r.source as StoredSignal['source'],
  recorded_at: r.recorded_at as Date,
  ...(r.agents_exact ? { bounds: { exact: r.agents_exact as string[], prefixes: (r.agents_prefixes as string[] | null) ?? [] } } : {}),
});

export interface SignalFilter {
  name?: string;
  source?: StoredSignal['source'];
  /** Only signals a key with these bounds may see (visibleTo); undefined: all. */
  bounds?: AgentBounds;
  /** Rows with a seq below this one (the previous page's last). */
  beforeSeq?: number;
  limit: number;
}

/**
 * The SQL condition "a key bound to `bounds` may see signal `s`": the signal was sent by a
 * bound key (sender bounds not NULL: unbound keys' and run-outcome signals are no agent's)
 * and every agent it may reach is within `bounds`: each sender id is one of the ids or starts
 * with one of the prefixes, and each sender prefix starts with one of the prefixes (a sender
 * prefix equal to an exact id would reach more than that id). The rule of withinBounds
 * (lib/domain/agent-bounds.ts) taken from one owner to the set of agents a signal reaches.
 */
function visibleTo(w: Where, bounds: AgentBounds): string {
  const exact = w.param([...bounds.exact]);
  const prefixes = w.param([...bounds.prefixes]);
  const underPrefix = (col: string) => `EXISTS (SELECT 1 FROM unnest(${prefixes}::text[]) q WHERE starts_with(${col}, q))`;
  return `(s.agents_exact IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM unnest(s.agents_exact) e WHERE NOT (e = ANY(${exact}::text[]) OR ${underPrefix('e')}))
    AND NOT EXISTS (SELECT 1 FROM unnest(s.agents_prefixes) sp WHERE NOT ${underPrefix('sp')}))`;
}

export class SignalStore {
  constructor(private readonly pool: Pool) {}

  /**
   * Stores a signal unless its id is stored already; answers the stored row either way and
   * whether it was there before (a retried send).
   */
  async insert(e: SignalEvent, source: StoredSignal['source'], bounds?: AgentBounds): Promise<{ signal: StoredSignal; existed: boolean }> {
    const ins = await this.pool.query(
      `INSERT INTO signals (signal_id, name, value, signal_values, occurred_at, source, agents_exact, agents_prefixes)
       VALUES ($1, $2, $3, $4, to_timestamp($5 / 1000.0), $6, $7::text[], $8::text[])
       ON CONFLICT (signal_id) DO NOTHING RETURNING *`,
      [e.signal_id, e.name, JSON.stringify(e.value), JSON.stringify(e.values), e.atMs, source, bounds ? [...bounds.exact] : null, bounds ? [...bounds.prefixes] : null],
    );
    if (ins.rows[0]) return { signal: rowOf(ins.rows[0]), existed: false };
    const got = await this.pool.query('SELECT * FROM signals WHERE signal_id = $1', [e.signal_id]);
    return { signal: rowOf(got.rows[0]), existed: true };
  }

  async get(signalId: string): Promise<StoredSignal | undefined> {
    const r = await this.pool.query('SELECT * FROM signals WHERE signal_id = $1', [signalId]);
    return r.rows[0] ? rowOf(r.rows[0]) : undefined;
  }

  /** A signal by id, if a key with these bounds may see it (visibleTo). */
  async getVisible(signalId: string, bounds: AgentBounds | undefined): Promise<StoredSignal | undefined> {
    const w = new Where();
    w.add('s.signal_id = ?', signalId);
    if (bounds) w.add(visibleTo(w, bounds));
    const r = await this.pool.query(`SELECT s.* FROM signals s ${w.sql}`, w.params);
    return r.rows[0] ? rowOf(r.rows[0]) : undefined;
  }

  /**
   * A page of signals, newest (highest seq) first: the primary key's order, or signals_name's
   * (name, seq) with a name. A bound key's page skips signals it may not see, as a bound
   * key's task list skips other agents' tasks.
   */
  async list(f: SignalFilter): Promise<StoredSignal[]> {
    const w = new Where();
    if (f.name) w.add('s.name = ?', f.name);
    if (f.source) w.add('s.source = ?', f.source);
    if (f.beforeSeq !== undefined) w.add('s.seq < ?::bigint', f.beforeSeq);
    if (f.bounds) w.add(visibleTo(w, f.bounds));
    const limit = w.param(f.limit);
    const r = await this.pool.query(`SELECT s.* FROM signals s ${w.sql} ORDER BY s.seq DESC LIMIT ${limit}`, w.params);
    return r.rows.map(rowOf);
  }

  /**
   * Enabled tasks whose trigger reads signal `name`. The JSON path narrows the rows in SQL
   * (a delay's `event`, a condition leaf's `signal`, a run-outcome leaf's `task_id`);
   * listensTo decides exactly. Reads the newest history row per task only (not the `tasks`
   * view, which also joins the execution log): this runs for every signal and finished run.
   */
  async listeners(name: string, bounds?: AgentBounds): Promise<Listener[]> {
    const isRun = name.startsWith(TASK_RUN_SIGNAL_PREFIX);
    const path = isRun ? 'strict $.** ? (@.task_id == $n)' : 'strict $.** ? (@.event == $n || @.signal == $n)';
    const r = await this.pool.query({
      name: 'signal-listeners',
      text: `SELECT DISTINCT ON (task_id) task_id, version, definition, enabled, deleted FROM task_history
        WHERE task_id IN (SELECT task_id FROM task_history
                           WHERE definition->'trigger'->>'type' IN ('delay', 'condition')
                             AND jsonb_path_exists(definition->'trigger', $1::jsonpath, jsonb_build_object('n', $2::text)))
        ORDER BY task_id, version DESC`,
      values: [path, isRun ? name.slice(TASK_RUN_SIGNAL_PREFIX.length) : name],
    });
    return (r.rows as Listener[]).filter((t) => t.enabled && !t.deleted && listensTo(t.definition.trigger, name) && withinBounds(bounds, t.definition.agent_id));
  }

  /**
   * The newest signals (at most `limit`, oldest first) of these names recorded since version
   * `version` of the task was stored: what a scheduler started afresh takes in again.
   */
  async since(i: { taskId: string; version: number; names: string[]; limit: number }): Promise<StoredSignal[]> {
    const r = await this.pool.query(
      `SELECT s.* FROM signals s JOIN task_history h ON h.task_id = $1 AND h.version = $2
        WHERE s.name = ANY($3::text[]) AND s.recorded_at >= h.recorded_at
          -- A signal a bound key sent reaches only tasks of its agents (schema/014).
          AND (s.agents_exact IS NULL OR (h.definition->>'agent_id') = ANY(s.agents_exact)
               OR EXISTS (SELECT 1 FROM unnest(s.agents_prefixes) p WHERE starts_with(h.definition->>'agent_id', p)))
        ORDER BY s.seq DESC LIMIT $4`,
      [i.taskId, i.version, i.names, i.limit],
    );
    return r.rows.map(rowOf).reverse();
  }

  /** Finished runs of a task in a row with the newest one's status (failed or success), and that status. */
  async streak(taskId: string): Promise<{ status: RunStatus; streak: number } | undefined> {
    const r = await this.pool.query(
      `SELECT status FROM task_runs_current WHERE task_id = $1 AND status IN ('success', 'failed') ORDER BY recorded_at DESC, id DESC LIMIT 1000`,
      [taskId],
    );
    if (!r.rows.length) return undefined;
    const status = r.rows[0].status as RunStatus;
    let n = 0;
    for (const row of r.rows) {
      if (row.status !== status) break;
      n++;
    }
    return { status, streak: n };
  }
}
