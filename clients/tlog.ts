/**
 * The log builder's typed client: starts the instance's one builder workflow
 * (workflows/tlog/builder.ts) on this worker's task queue, or leaves the running one alone.
 */
import { Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Pool } from 'pg';
import { databaseInstanceId } from '../lib/store/instance';
import { tlogBuilderWorkflow, tlogBuilderWorkflowId } from '../workflows/tlog/builder';

/**
 * Ensures the builder runs. A builder already running on this task queue is kept; one on
 * another task queue (its workers may be gone: a test system that stopped, a renamed queue) is
 * replaced by one on ours. It is stateless (the database holds the cursor), so replacing it
 * loses nothing; the builder's advisory lock keeps two from overlapping meanwhile.
 */
export async function ensureLogBuilder(client: Client, pool: Pool, taskQueue: string): Promise<string> {
  const instanceId = await databaseInstanceId(pool);
  const workflowId = tlogBuilderWorkflowId(instanceId);
  const start = (policy: 'USE_EXISTING' | 'TERMINATE_EXISTING') =>
    client.workflow.start(tlogBuilderWorkflow, { workflowId, taskQueue, args: [{ instanceId }], workflowIdConflictPolicy: policy });
  try {
    const handle = await start('USE_EXISTING');
    const d = await handle.describe();
    if (d.taskQueue !== taskQueue) await start('TERMINATE_EXISTING');
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  return workflowId;
}
