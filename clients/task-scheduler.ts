/**
 * The one signal-with-start of a task's scheduler (`task/<task_id>` on the main task queue):
 * a signal to a scheduler that is running, or a start from the task's stored state with that
 * signal first when it is not (never started, or lost). Written once (issue 21) for the two
 * callers: a task change (clients/tasks.ts, signal `changed`) and a stored signal's delivery to
 * a listening task (clients/signals.ts, signal `event`). A create of a task that is not plain
 * starts it without a signal (startScheduler); a plain task's late fire time handed back by the
 * shared fire schedule starts it with that fire time (startHandedBack).
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { TypedSearchAttributes, type SignalDefinition } from '@temporalio/common';
import { TaskIdKey } from '../lib/domain/platform/search-attributes';
import { schedulerWorkflowId } from '../lib/domain/tasks';
import type { FiresReturned, RunQueues, SchedulerInput, TaskChange } from '../workflows/tasks/messages';
import { SCHEDULER_PATCHES, taskSchedulerWorkflow } from '../workflows/tasks/scheduler';

export interface SchedulerTarget {
  client: Client;
  /** The main task queue: schedulers run here. */
  taskQueue: string;
  runQueues: RunQueues;
}

/** `more`: what a start other than a create knows beyond the stored change (SchedulerInput.onSchedule, a handed-back fire time). */
const startOptions = (t: SchedulerTarget, taskId: string, start: TaskChange, more: Partial<SchedulerInput> = {}) => ({
  workflowId: schedulerWorkflowId(taskId),
  taskQueue: t.taskQueue,
  args: [{ ...start, taskId, cursorMs: Date.now(), runQueues: t.runQueues, patches: SCHEDULER_PATCHES, ...more }] as [SchedulerInput],
  typedSearchAttributes: new TypedSearchAttributes([{ key: TaskIdKey, value: taskId }]),
});

/**
 * Starts a new task's scheduler from its first version, without a signal: a create has no
 * scheduler to tell (the task id was free until its insert). A plain start costs the dev
 * server about a quarter less CPU than signal-with-start (13 against 18 ms a start, measured
 * beside each other, stop 32). A scheduler that is somehow running already (an earlier create
 * of this id on a database since reset) is told the change instead.
 */
export async function startScheduler(t: SchedulerTarget, taskId: string, start: TaskChange, signal: SignalDefinition<[TaskChange]>): Promise<void> {
  try {
    await t.client.workflow.start(taskSchedulerWorkflow, startOptions(t, taskId, start));
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    await signalWithStartScheduler(t, taskId, start, signal, start);
  }
}

/**
 * Sends `signal(arg)` to the task's scheduler, started from `start` (the task's stored state as
 * the scheduler takes it) when it is not running. A scheduler started so may find the task's
 * row on the shared fire schedule (a plain task fires from there with no scheduler): it is told
 * so (onSchedule) and takes the row over.
 */
export async function signalWithStartScheduler<T>(t: SchedulerTarget, taskId: string, start: TaskChange, signal: SignalDefinition<[T]>, arg: T): Promise<void> {
  await t.client.workflow.signalWithStart<typeof taskSchedulerWorkflow, [T]>(taskSchedulerWorkflow, { ...startOptions(t, taskId, start, { onSchedule: true }), signal, signalArgs: [arg] });
}

/**
 * Starts the scheduler of a plain task whose fire time the shared fire schedule hands back (too
 * late to be on time) while none runs: from the stored task, the row's cursor and last start,
 * and the fire time handed back, which it fires under the misfire policy before registering
 * the task again. Throws WorkflowExecutionAlreadyStartedError when one started meanwhile.
 */
export async function startHandedBack(t: SchedulerTarget, taskId: string, start: TaskChange, returned: FiresReturned): Promise<void> {
  await t.client.workflow.start(taskSchedulerWorkflow, startOptions(t, taskId, start, { onSchedule: true, returned, cursorMs: returned.cursorMs, lastFireMs: returned.lastFireMs }));
}
