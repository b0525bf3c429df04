/**
 * Which tasks fire from the shared fire schedule (issue 15, schema/023), and which shard holds
 * each. Pure: the scheduler workflow decides with it too.
 *
 * Shared: cron and interval triggers whose overlap policy decides at the fire time alone (skip,
 * allow, cancel_previous). Not shared: `at` (completes after its run), delay and condition
 * triggers (signals), and buffer_one (a fire time that waits for a run): their own scheduler
 * keeps firing them.
 */
import { LIMITS } from '../limits';
import type { TaskDefinition } from './index';

export function firesShared(d: TaskDefinition): boolean {
  return (d.trigger.type === 'cron' || d.trigger.type === 'interval') && d.overlap !== 'buffer_one';
}

/** The shard of a task: FNV-1a of its id, so the same task is always in the same shard for a given count. */
export function fireShardOf(taskId: string, shards: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < taskId.length; i++) {
    h ^= taskId.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % shards;
}

/** The misfire grace of a task: none for a strict cron, else its misfire_grace_s. */
export function misfireGraceMs(d: TaskDefinition): number {
  return d.trigger.type === 'cron' && !d.trigger.tolerant ? 0 : d.misfire_grace_s * 1000;
}

/** How late a fire time may start and still count as on time: the misfire grace, at least the on-time slack. The scheduler and the fire shards decide with it. */
export function onTimeWindowMs(d: TaskDefinition): number {
  return Math.max(misfireGraceMs(d), LIMITS.taskOnTimeSlackMs);
}

/** The workflow that keeps one shard firing (workflows/tasks/fire-shard.ts), one per Timekeeper instance, task queue and shard. */
export const fireShardWorkflowId = (instanceId: string, taskQueue: string, shard: number) => `task-fires/${instanceId}/${taskQueue}/${shard}`;
