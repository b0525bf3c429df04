/**
 * Patches whose path a task workflow's starter already chose: runs and schedulers started by
 * current code get the patch ids in their input (RunInput.patches, SchedulerInput.patches) and
 * take those paths without patched(), so a new execution records no patch marker and no
 * TemporalChangeVersion search-attribute upsert (a visibility write per run or create).
 * Executions started before that field ask patched() as their histories did.
 */
import { patched } from '@temporalio/workflow';

export const hasPatch = (given: string[] | undefined, id: string): boolean => given?.includes(id) || patched(id);
