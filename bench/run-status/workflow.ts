/**
 * bench/run-status/bench.ts's two workflows: a task run's Temporal shape with a no-op body
 * (one no-op local activity, then completion), with and without the run's RunStatus upsert at
 * its finish (workflows/tasks/run.ts's setStatus('success'), which runs started since stop 38
 * skip when nothing notable happened before). Bench-only, never registered by the production
 * worker.
 */
import { proxyLocalActivities, upsertSearchAttributes } from '@temporalio/workflow';
import { RunStatusKey } from '../../lib/domain/platform/search-attributes';

const { noop } = proxyLocalActivities<{ noop(): Promise<void> }>({ startToCloseTimeout: '10s' });

/** Start, one no-op local activity, completion. */
export async function runShapeWorkflow(): Promise<void> {
  await noop();
}

/** The same, with RunStatus set to success before completing, as every successful run did before stop 38. */
export async function runShapeUpsertWorkflow(): Promise<void> {
  await noop();
  upsertSearchAttributes([{ key: RunStatusKey, value: 'success' }]);
}
