/**
 * The log builder: one workflow per instance (id `tlog-builder/<instance id>`), which keeps the
 * transparency log up to date. All the work is in the buildLog activity (activities/tlog/index.ts):
 * each run builds batches and checkpoints for a minute, so an idle log writes a few history
 * events a minute, and the workflow continues as new after LIMITS.tlogRunsPerWorkflow runs.
 */
import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { BuildLogInput, TlogActivities } from '../../activities/tlog';
import { LIMITS } from '../../lib/domain/limits';

const { buildLog } = proxyActivities<TlogActivities>({
  startToCloseTimeout: LIMITS.tlogActivityRunMs + 60_000,
  // A crashed worker's run is handed on after this long without a batch (each batch heartbeats).
  heartbeatTimeout: 20_000,
  // The database may be down for long: keep trying, never give up on the log.
  retry: { initialInterval: 1_000, maximumInterval: 10_000, backoffCoefficient: 2 },
});

export const tlogBuilderWorkflowId = (instanceId: string): string => `tlog-builder/${instanceId}`;

export async function tlogBuilderWorkflow(input: BuildLogInput): Promise<void> {
  for (let i = 0; i < LIMITS.tlogRunsPerWorkflow; i++) await buildLog(input);
  await continueAsNew<typeof tlogBuilderWorkflow>(input);
}
