/** The RunControl the task activities get (activities/task-run-control.ts): the typed task client's run starts, cancels and scheduler signals. */
import type { RunControl } from '../activities/task-run-control';
import type { TaskClient } from '../clients/tasks';

export function runControl(tasks: TaskClient): RunControl {
  return {
    start: (r) => tasks.startRun(r),
    cancel: (runId) => tasks.cancelRun(runId),
    closed: (runId) => tasks.runClosed(runId),
    wakeScheduler: (taskId, runId) => tasks.wakeScheduler(taskId, runId),
    deliverEvent: (taskId, event) => tasks.deliverEvent(taskId, event),
  };
}
