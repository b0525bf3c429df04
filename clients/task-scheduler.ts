/**
 * The one signal-with-start of a task's scheduler (`task/<task_id>` on the main task queue):
 * a signal to a scheduler that is running, or a start from the task's stored state with that
 * signal first when it is not (never started, or lost). Written once (issue 21) for the two
 * callers: a task change (clients/tasks.ts, signal `changed`) and a stored signal's delivery to
 * a listening task (clients/signals.ts, signal `event`).
 */
import type { Client } from '@temporalio/client';
import { TypedSearchAttributes, type SignalDefinition } from '@temporalio/common';
import { TaskIdKey } from '../lib/domain/platform/search-attributes';
import { schedulerWorkflowId } from '../lib/domain/tasks';
import type { RunQueues, TaskChange } from '../workflows/tasks/messages';
import { taskSchedulerWorkflow } from '../workflows/tasks/scheduler';

export interface SchedulerTarget {
  client: Client;
  /** The main task queue: schedulers run here. */
  taskQueue: string;
  runQueues: RunQueues;
}

/** Sends `signal(arg)` to the task's scheduler, started from `start` (the task's stored state as the scheduler takes it) when it is not running. */
export async function signalWithStartScheduler<T>(t: SchedulerTarget, taskId: string, start: TaskChange, signal: SignalDefinition<[T]>, arg: T): Promise<void> {
  await t.client.workflow.signalWithStart<typeof taskSchedulerWorkflow, [T]>(taskSchedulerWorkflow, {
    workflowId: schedulerWorkflowId(taskId),
    taskQueue: t.taskQueue,
    args: [{ ...start, taskId, cursorMs: Date.now(), runQueues: t.runQueues }],
    signal,
    signalArgs: [arg],
    typedSearchAttributes: new TypedSearchAttributes([{ key: TaskIdKey, value: taskId }]),
  });
}
