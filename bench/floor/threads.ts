/**
 * The floors' workers start their workflow threads as Timekeeper's worker does: without the
 * Temporal SDK's per-promise stack capture unless WORKFLOW_STACK_TRACES is true
 * (worker/workflow-threads.ts). A floor then costs what the engine costs under the same setting,
 * so turning the capture off cannot pass for a gain over the floor.
 */
import { workflowStackTracesOf } from '../../lib/config';
import { setWorkflowStackTraces } from '../../worker/workflow-threads';

/** Call before the floor's Worker.create. */
export function floorThreadsLikeTimekeeper(): void {
  setWorkflowStackTraces(workflowStackTracesOf());
}
