/** The Temporal worker: every capability's workflows (one bundle) and activities. */
import { Client } from '@temporalio/client';
import { NativeConnection, Worker, WorkerOptions } from '@temporalio/worker';
import type { Pool } from 'pg';
import { createActivities } from '../activities';
import { SessionClient } from '../clients/sessions';
import { LIMITS, TUNABLE } from '../lib/domain/limits';

export interface TimekeeperWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** Pool connected as the SELECT/INSERT-only role. */
  pool: Pool;
  /**
   * Settings for sessions that activities create or resume through the session client
   * (see lib/config.ts). Default: the TUNABLE defaults.
   */
  sessions?: { maxContentBytes: number; updatesPerRun: number; writeTimeoutMs: number };
  /** OpenClaw's wake hook for intents re-opened by retry_after (INTENT_WAKE_URL, INTENT_WAKE_TOKEN); none: no wake calls. */
  wake?: { url?: string; token?: string };
  /** A prebuilt workflow bundle (tests build it once); default: bundle ./workflows at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
}

export async function createTimekeeperWorker(opts: TimekeeperWorkerOptions): Promise<Worker> {
  const s = opts.sessions ?? {
    maxContentBytes: TUNABLE.maxContentBytes.default,
    updatesPerRun: TUNABLE.updatesPerRun.default,
    writeTimeoutMs: TUNABLE.writeTimeoutMs.default,
  };
  // Activities that write to a timeline go through the session workflow, its single writer.
  const sessions = new SessionClient({ client: new Client({ connection: opts.connection, namespace: opts.namespace }), pool: opts.pool, taskQueue: opts.taskQueue, ...s });
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: require.resolve('../workflows') }),
    activities: createActivities({ pool: opts.pool, sessions, wake: opts.wake }),
    maxCachedWorkflows: LIMITS.workerMaxCachedWorkflows,
    maxConcurrentWorkflowTaskExecutions: LIMITS.workerMaxConcurrentWorkflowTasks,
    workflowThreadPoolSize: LIMITS.workerWorkflowThreads,
    maxConcurrentLocalActivityExecutions: LIMITS.workerMaxConcurrentLocalActivities,
    // New sessions arrive on the normal queue; the default ratio (0.2) leaves them two pollers.
    nonStickyToStickyPollRatio: 0.5,
    shutdownGraceTime: LIMITS.workerShutdownGraceMs,
  });
}
