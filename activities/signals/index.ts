/**
 * Signal activities: a finished task run becomes a signal `task_run:<task_id>` (its status
 * and how many finished runs in a row had that status), stored once per run in the signals
 * table, and the run workflow is told which schedulers listen to it. Conditions read run
 * outcomes this way, the same path as POST /v1/signals.
 */
import type { Pool } from 'pg';
import { LIMITS } from '../../lib/domain/limits';
import { taskRunSignalId, taskRunSignalName, type SignalEvent } from '../../lib/domain/signals';
import { SignalStore } from '../../lib/store/signals';

export function createSignalActivities(deps: { pool: Pool }) {
  const store = new SignalStore(deps.pool);

  /**
   * Stores the run's outcome signal (a retry finds the stored one) and names the tasks
   * listening to it. Nothing is stored while no task listens: the streak comes from the run
   * log, and a condition created later reads only signals from its own version on.
   */
  async function emitRunOutcome(i: { taskId: string; runId: string; status: 'success' | 'failed' }): Promise<{ event: SignalEvent | null; listeners: string[] }> {
    const name = taskRunSignalName(i.taskId);
    const listeners = (await store.listeners(name)).map((t) => t.task_id);
    if (!listeners.length) return { event: null, listeners };
    const streak = await store.streak(i.taskId);
    const n = streak && streak.status === i.status ? streak.streak : 1;
    const { signal } = await store.insert({ signal_id: taskRunSignalId(i.runId), name, value: n, values: { status: i.status, run_id: i.runId, streak: n }, atMs: Date.now() }, 'task_run');
    const event: SignalEvent = { signal_id: signal.signal_id, name: signal.name, value: signal.value, values: signal.values, atMs: signal.atMs };
    return { event, listeners };
  }

  /** Signals a scheduler started afresh missed (lost, terminated, or never reached): it takes them in again, dropping seen ids. */
  async function signalsToCatchUp(i: { taskId: string; version: number; names: string[] }): Promise<SignalEvent[]> {
    const rows = await store.since({ ...i, limit: LIMITS.signalCatchUpMax });
    return rows.map((r) => ({ signal_id: r.signal_id, name: r.name, value: r.value, values: r.values, atMs: r.atMs }));
  }

  return { emitRunOutcome, signalsToCatchUp };
}

export type SignalActivities = ReturnType<typeof createSignalActivities>;
