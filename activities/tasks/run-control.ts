/**
 * What the task activities may ask of Temporal itself (issue 15: runs are started by the
 * scheduler's local activity, not as child workflows, and a run's end wakes only a scheduler
 * that asked). The worker hands in an implementation over the typed task client
 * (worker/run-control.ts), as it does for follow-ups: activities never import clients/.
 */
import type { SignalEvent } from '../../lib/domain/signals';
import type { TaskRow } from '../../lib/store/tasks';
import type { FiresReturned, RunStart } from '../../workflows/tasks/messages';

export interface RunControl {
  /**
   * Logs the run's start (`running`, attempt 1) and starts its workflow `run/…` on its
   * priority's queue with REJECT_DUPLICATE and no search attributes.
   * Returns when it started, or undefined when that run id was already started.
   */
  start(r: RunStart): Promise<{ startedMs: number } | undefined>;
  /** Requests cancellation of a run's workflow (overlap cancel_previous); a closed or unknown run is left alone. */
  cancel(runId: string): Promise<void>;
  /**
   * How the run's workflow closed (its status name: TERMINATED, TIMED_OUT, …; NOT_FOUND when
   * Temporal has none), undefined while it runs: a run whose finish was never logged
   * (terminated, lost) no longer counts as running.
   */
  closed(runId: string): Promise<string | undefined>;
  /** Signals a task's scheduler that a run it waits for has finished (signal run-finished); a scheduler not running is left alone. */
  wakeScheduler(taskId: string, runId: string): Promise<void>;
  /** Hands a signal event (a run's outcome) to a listening task's scheduler (signal event); a scheduler not running misses it. */
  deliverEvent(taskId: string, event: SignalEvent): Promise<void>;
  /**
   * Hands a task's row of the shared fire schedule back to its scheduler (signal fires-returned);
   * a plain task with no scheduler running gets one, started with that fire time.
   */
  returnFires(taskId: string, r: FiresReturned): Promise<void>;
  /** Tells the task's scheduler a change stored here (auto-disable); started from the stored task when none runs (a plain task), it takes the task off the shared fire schedule. */
  changed(row: TaskRow): Promise<void>;
}
