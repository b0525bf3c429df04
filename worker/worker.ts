/** The Temporal worker: every capability's workflows (one bundle) and activities. */
import { NativeConnection, Worker, WorkerOptions } from '@temporalio/worker';
import type { Pool } from 'pg';
import { createActivities } from '../activities';
import { LIMITS } from '../lib/domain/limits';

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
    activities: createActivities({ pool: opts.pool }),
    maxCachedWorkflows: LIMITS.workerMaxCachedWorkflows,
    maxConcurrentWorkflowTaskExecutions: LIMITS.workerMaxConcurrentWorkflowTasks,
    maxConcurrentLocalActivityExecutions: LIMITS.workerMaxConcurrentLocalActivities,
    // New sessions arrive on the normal queue; the default ratio (0.2) leaves them two pollers.
    nonStickyToStickyPollRatio: 0.5,
    shutdownGraceTime: LIMITS.workerShutdownGraceMs,
  });
}
