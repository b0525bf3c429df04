/**
 * One shard of the shared fire schedule (issue 15, schema/023; workflow id
 * `task-fires/<instance>/<shard>`, started by every worker with USE_EXISTING): it keeps the
 * activity fireShard running, one at a time. The activity fires the shard's due rows for
 * taskFireShardActivityMs and returns; a worker lost while it runs stops its heartbeats, and
 * Temporal retries it on another worker within taskFireShardHeartbeatTimeoutMs. A fire costs
 * this workflow nothing: it wakes once per activity, not per fire time.
 */
import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { TaskActivities } from '../../activities/tasks';
import { LIMITS } from '../../lib/domain/limits';
import type { FireShardInput } from './messages';

const { fireShard } = proxyActivities<TaskActivities>({
  startToCloseTimeout: LIMITS.taskFireShardActivityMs + LIMITS.taskFireShardHeartbeatTimeoutMs * 4,
  heartbeatTimeout: LIMITS.taskFireShardHeartbeatTimeoutMs,
  // Never given up: a shard that stops is a schedule that stops. Retried soon after a failure.
  retry: { initialInterval: LIMITS.taskFireShardRetryInitialMs, maximumInterval: LIMITS.taskFireRetryMaxMs, backoffCoefficient: 2 },
});

export async function taskFireShardWorkflow(input: FireShardInput): Promise<void> {
  for (let passes = 0; passes < LIMITS.taskFireShardActivitiesPerRun; passes++) await fireShard({ shard: input.shard });
  await continueAsNew<typeof taskFireShardWorkflow>({ shard: input.shard, passesBefore: (input.passesBefore ?? 0) + LIMITS.taskFireShardActivitiesPerRun });
}
