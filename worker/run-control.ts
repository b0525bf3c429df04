/** The RunControl the task activities get (activities/tasks/run-control.ts): the typed task client's run starts, cancels and scheduler signals. */
import type { RunControl } from '../activities/tasks/run-control';
import type { TaskClient } from '../clients/tasks';

export function runControl(tasks: TaskClient): RunControl {
  return {
    start: (r) => tasks.startRun(r),
    cancel: (runId) => tasks.cancelRun(runId),
    closed: (runId) => tasks.runClosed(runId),
    wakeScheduler: (taskId, runId) => tasks.wakeScheduler(taskId, runId),
    deliverEvent: (taskId, event) => tasks.deliverEvent(taskId, event),
    returnFires: (taskId, r) => tasks.returnFires(taskId, r),
    changed: (row) => tasks.notify(row),
  };
}
