/**
 * A deliberately incompatible session workflow, for the replay test's negative check: the
 * current workflow plus one timer that no recorded history contains. Same type name.
 */
import { sleep } from '@temporalio/workflow';
import type { SessionWorkflowInput, SessionWorkflowResult } from '../../workflows/sessions/messages';
import { sessionWorkflow as current } from '../../workflows/sessions/workflow';

export async function sessionWorkflow(input: SessionWorkflowInput): Promise<SessionWorkflowResult> {
  const result = current(input);
  await sleep('1 second');
  return result;
}
