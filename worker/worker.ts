/** The Temporal worker: session workflows plus the activities that write timeline rows. */
import { NativeConnection, Worker, WorkerOptions } from '@temporalio/worker';
import type { Pool } from 'pg';
import { createTimelineActivities } from '../activities/timeline';

export interface TimekeeperWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** Pool connected as the SELECT/INSERT-only role. */
  pool: Pool;
  /** A prebuilt workflow bundle (tests build it once); default: bundle ./workflows at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
}

export async function createTimekeeperWorker(opts: TimekeeperWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: require.resolve('../workflows') }),
    activities: createTimelineActivities(opts.pool),
    // Sessions are long-lived and mostly idle: keep many cached so an append rarely replays.
    maxCachedWorkflows: 5000,
    maxConcurrentWorkflowTaskExecutions: 100,
    maxConcurrentLocalActivityExecutions: 100,
    // New sessions arrive on the normal queue; the default ratio (0.2) leaves them two pollers.
    nonStickyToStickyPollRatio: 0.5,
    // SIGTERM lets in-flight tasks finish before the process exits.
    shutdownGraceTime: '20 seconds',
  });
}
