/**
 * Every workflow type of workflows/index.ts made deliberately incompatible, for the replay
 * test's negative check over all recorded histories: the current workflow plus one command in
 * its first workflow task that no recorded history has (a memo upsert; an extra timer can
 * also be told apart, but where the workflow's own first timer is cancelled, Core fails that
 * replay with a fatal state-machine error rather than a determinism violation). Same type
 * names; the test checks this module exports exactly the types workflows/index.ts does.
 */
import { upsertMemo } from '@temporalio/workflow';
import * as current from '../../workflows';

function withExtraCommand<A extends unknown[], R>(workflow: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return (...args: A) => {
    const result = workflow(...args);
    upsertMemo({ replayTest: 'a command no recorded history has' });
    return result;
  };
}

export const sessionWorkflow = withExtraCommand(current.sessionWorkflow);
export const intentWorkflow = withExtraCommand(current.intentWorkflow);
export const taskSchedulerWorkflow = withExtraCommand(current.taskSchedulerWorkflow);
export const taskRunWorkflow = withExtraCommand(current.taskRunWorkflow);
export const otelExportWorkflow = withExtraCommand(current.otelExportWorkflow);
export const tlogBuilderWorkflow = withExtraCommand(current.tlogBuilderWorkflow);
export const taskFireShardWorkflow = withExtraCommand(current.taskFireShardWorkflow);
