/**
 * Delivers a stored signal to the schedulers of the tasks that listen to it: one
 * signal-with-start per task (`task/<task_id>`, signal `event`), so a scheduler that is not
 * running is started from the task's stored state and still takes the signal. Delivery is
 * at-least-once (a retried POST /v1/signals delivers again); schedulers drop signal ids they
 * have seen, and runs are named from the signal, so a run still starts at most once.
 */
import { Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { DomainError, ErrorCode } from '../lib/domain/errors';
import type { SignalEvent } from '../lib/domain/signals';
import { schedulerWorkflowId } from '../lib/domain/tasks';
import { TaskIdKey } from '../lib/domain/platform/search-attributes';
import type { Listener } from '../lib/store/signals';
import { RunQueues, signalEventSignal } from '../workflows/tasks/messages';
import { taskSchedulerWorkflow } from '../workflows/tasks/scheduler';

export interface SignalClientOptions {
  client: Client;
  /** The main task queue: schedulers run here. */
  taskQueue: string;
  runQueues: RunQueues;
}

export class SignalClient {
  constructor(private readonly opts: SignalClientOptions) {}

  /** Delivers to every listener; answers the task ids reached. A scheduler that cannot be reached fails the whole call (503: send again with the same signal_id). */
  async deliver(event: SignalEvent, listeners: Listener[]): Promise<string[]> {
    const failures: string[] = [];
    await Promise.all(
      listeners.map(async (row) => {
        try {
          await this.opts.client.workflow.signalWithStart(taskSchedulerWorkflow, {
            workflowId: schedulerWorkflowId(row.task_id),
            taskQueue: this.opts.taskQueue,
            args: [{ version: row.version, definition: row.definition, enabled: row.enabled, deleted: row.deleted, taskId: row.task_id, cursorMs: Date.now(), runQueues: this.opts.runQueues }],
            signal: signalEventSignal,
            signalArgs: [event],
            typedSearchAttributes: new TypedSearchAttributes([{ key: TaskIdKey, value: row.task_id }]),
          });
        } catch (err) {
          failures.push(`${row.task_id}: ${(err as Error).message}`);
        }
      }),
    );
    if (failures.length) {
      throw new DomainError(
        ErrorCode.Unavailable,
        `signal ${event.signal_id} is stored, but ${failures.length} task scheduler(s) could not be reached (${failures.join('; ').slice(0, 500)}); send it again with the same signal_id to deliver it`,
      );
    }
    return listeners.map((r) => r.task_id).sort();
  }
}
