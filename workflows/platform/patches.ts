/**
 * Patches whose path a workflow's starter already chose, shared by every capability's
 * workflows: executions started by current code get the patch ids in their input
 * (RunInput.patches, SchedulerInput.patches, IntentSettings.patches) and take those paths
 * without patched(), so a new execution records no patch marker and no TemporalChangeVersion
 * search-attribute upsert (the SDK adds one to every first patched() of a run: an event and a
 * visibility write per run or create). Executions started before that field ask patched() as
 * their histories did.
 */
import { patched } from '@temporalio/workflow';

export const hasPatch = (given: string[] | undefined, id: string): boolean => given?.includes(id) || patched(id);
