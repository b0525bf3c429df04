/**
 * The shared fire schedule's typed client (issue 15, schema/023): starts the fire shards of
 * this worker's task queue (workflows/tasks/fire-shard.ts, one workflow per shard), or leaves
 * running ones alone. Every worker process calls it when it starts.
 */
import { Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Pool } from 'pg';
import { LIMITS } from '../lib/domain/limits';
import { fireShardWorkflowId } from '../lib/domain/tasks/fire-shards';
import { databaseInstanceId } from '../lib/store/instance';
import { FireScheduleStore } from '../lib/store/tasks/fire-schedule';
import { taskFireShardWorkflow } from '../workflows/tasks/fire-shard';

/**
 * Ensures every shard of this task queue runs (a running one is left alone). Shards hold no
 * state (the rows are the schedule), and two loops of one shard are harmless (rows claimed
 * with SKIP LOCKED, a fire time runs once by its run id).
 */
export async function ensureFireShards(client: Client, pool: Pool, taskQueue: string): Promise<string[]> {
  const instanceId = await databaseInstanceId(pool);
  await new FireScheduleStore(pool).foldShards(taskQueue, LIMITS.taskFireShards);
  const ids: string[] = [];
  for (let shard = 0; shard < LIMITS.taskFireShards; shard++) {
    const workflowId = fireShardWorkflowId(instanceId, taskQueue, shard);
    try {
      await client.workflow.start(taskFireShardWorkflow, { workflowId, taskQueue, args: [{ shard }], workflowIdConflictPolicy: 'USE_EXISTING' });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
    ids.push(workflowId);
  }
  return ids;
}

/** Ends this task queue's shards (a test system that stops for good; its rows stay for its queue). */
export async function stopFireShards(client: Client, pool: Pool, taskQueue: string): Promise<void> {
  const instanceId = await databaseInstanceId(pool);
  for (let shard = 0; shard < LIMITS.taskFireShards; shard++) {
    await client.workflow
      .getHandle(fireShardWorkflowId(instanceId, taskQueue, shard))
      .terminate('its task queue stops for good')
      .catch(() => undefined);
  }
}
