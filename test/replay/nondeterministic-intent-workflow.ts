/**
 * A deliberately incompatible intent workflow, for the replay test's negative check: the
 * current workflow plus one timer that no recorded history contains. Same type name.
 */
import { sleep } from '@temporalio/workflow';
import type { IntentWorkflowInput, IntentWorkflowResult } from '../../workflows/intents/messages';
import { intentWorkflow as current } from '../../workflows/intents/workflow';

export async function intentWorkflow(input: IntentWorkflowInput): Promise<IntentWorkflowResult> {
  const result = current(input);
  await sleep('1 second');
  return result;
}
