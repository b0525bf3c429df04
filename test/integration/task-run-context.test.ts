/**
 * What a run wakes up with (TaskStore.runContext) against the real PostgreSQL: the start of the
 * task's newest other run ("time since the last run") and its last finished runs, newest first,
 * in one statement. That statement reads a handful of log rows however long the task's log is:
 * before issue 15's change the newest start was max(started_at) over every row the task ever
 * logged (69 ms of the database's CPU per run at 200,000 runs), on every run.
 */
import { Pool } from 'pg';
import { createPool } from '../../lib/db';
import { RUN_CONTEXT_SQL, TaskStore } from '../../lib/store/tasks';
import { testEnv } from '../support';

let pool: Pool;
let owner: Pool;
let store: TaskStore;

beforeAll(() => {
  pool = createPool(testEnv().appUrl, { max: 2 });
  owner = createPool(testEnv().ownerUrl, { max: 1 });
  store = new TaskStore(pool);
});

afterAll(async () => {
  await pool?.end();
  await owner?.end();
});

const tid = (tag: string) => `ctx_${tag}_${process.pid}_${Date.now().toString(36)}`;
const T0 = Date.parse('2026-12-01T09:00:00Z');

async function logRun(taskId: string, n: number, finish?: 'success' | 'failed' | 'skipped') {
  const runId = `run/${taskId}/${n}`;
  const base = { runId, taskId, trigger: 'schedule' as const, nominalMs: T0 + n * 60_000 };
  if (finish === 'skipped') return store.recordRun({ ...base, status: 'skipped', attempt: 0, reason: 'overlap skip' });
  await store.recordRun({ ...base, status: 'running', startedMs: base.nominalMs + 1000, attempt: 1 });
  if (finish) await store.recordRun({ ...base, status: finish, startedMs: base.nominalMs + 1000, finishedMs: base.nominalMs + 2000, attempt: 1, summary: `run ${n}` });
}

test('the newest other run started and the last finished runs, newest first; a skipped run has no start and the run itself does not count', async () => {
  const id = tid('sem');
  expect(await store.runContext(id, `run/${id}/1`, 3)).toEqual({ memory: [] });
  await logRun(id, 1, 'success');
  await logRun(id, 2, 'failed');
  await logRun(id, 3, 'skipped');
  await logRun(id, 4);
  const ctx = await store.runContext(id, `run/${id}/4`, 2);
  expect(ctx.lastStartMs).toBe(T0 + 2 * 60_000 + 1000);
  expect(ctx.memory.map((m) => [m.nominal_ms, m.status, m.summary])).toEqual([
    [T0 + 3 * 60_000, 'skipped', null],
    [T0 + 2 * 60_000, 'failed', 'run 2'],
  ]);
  // Seen from run 2 (its retry, say): run 4 started after it and is the newest other start.
  expect((await store.runContext(id, `run/${id}/2`, 0)).lastStartMs).toBe(T0 + 4 * 60_000 + 1000);
  expect(await store.lastStartBefore(id, `run/${id}/4`)).toBe(T0 + 2 * 60_000 + 1000);
});

/** Rows the plan read from task_run_log, over all its scans of the table (EXPLAIN ANALYZE). */
function logRowsRead(plan: Record<string, unknown>): number {
  const own = plan['Relation Name'] === 'task_run_log' ? Number(plan['Actual Rows']) * Number(plan['Actual Loops']) + Number(plan['Rows Removed by Filter'] ?? 0) + Number(plan['Rows Removed by Index Recheck'] ?? 0) : 0;
  return own + ((plan.Plans as Record<string, unknown>[] | undefined) ?? []).reduce((n, p) => n + logRowsRead(p), 0);
}

test('a task with a long run log: the context reads a handful of rows, in the custom and in the generic (prepared) plan', async () => {
  const id = tid('long');
  const runs = 10_000;
  await owner.query(
    `INSERT INTO task_run_log (run_id, task_id, status, trigger, nominal_at, started_at, finished_at, attempt)
     SELECT 'run/' || $1 || '/' || g, $1, s, 'schedule', to_timestamp(($2::bigint + g * 60000) / 1000.0), to_timestamp(($2::bigint + g * 60000 + 1000) / 1000.0),
            CASE WHEN s = 'success' THEN to_timestamp(($2::bigint + g * 60000 + 2000) / 1000.0) END, 1
       FROM generate_series(1, $3::int) g, (VALUES ('running'), ('success')) v(s)
      ORDER BY g, s`,
    [id, T0, runs],
  );
  await owner.query('ANALYZE task_run_log');
  const current = `run/${id}/${runs + 1}`;
  const ctx = await store.runContext(id, current, 3);
  expect(ctx.lastStartMs).toBe(T0 + runs * 60_000 + 1000);
  expect(ctx.memory.map((m) => m.nominal_ms)).toEqual([runs, runs - 1, runs - 2].map((g) => T0 + g * 60_000));

  for (const mode of ['force_custom_plan', 'force_generic_plan']) {
    const c = await pool.connect();
    try {
      await c.query(`SET plan_cache_mode = ${mode}`);
      const r = await c.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${RUN_CONTEXT_SQL}`, [id, current, 3]);
      const read = logRowsRead(r.rows[0]['QUERY PLAN'][0].Plan);
      // The newest `running` row, three finished ones with their newer-row checks: a few dozen at most, not 20,000.
      expect({ mode, read, bounded: read < 100 }).toMatchObject({ mode, bounded: true });
    } finally {
      await c.query('RESET plan_cache_mode');
      c.release();
    }
  }
});
