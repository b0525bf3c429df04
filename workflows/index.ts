/**
 * Workflow bundle entry point: every workflow the worker registers.
 *
 * Each export is a thin function that loads its workflow's module when a workflow of that type
 * runs, not when this entry is loaded. Why: in the SDK's reusable V8 context every workflow
 * execution has a module cache of its own and evaluates the modules it loads afresh, and the
 * SDK loads this entry for every execution (`importWorkflows`) to look the type up by name.
 * With plain re-exports, every new workflow (a scheduled task's run, a session's create)
 * evaluated the code of all seven types and what they import; now it evaluates its own.
 * `require`, not `import()`: loading stays synchronous, so the workflow function runs in the
 * same turn as before and its commands and their order are unchanged (the replay test replays
 * every recorded history against this entry).
 */
import type * as Sessions from './sessions/workflow';
import type * as Intents from './intents/workflow';
import type * as Scheduler from './tasks/scheduler';
import type * as Runs from './tasks/run';
import type * as FireShard from './tasks/fire-shard';
import type * as OtelExport from './otel/workflow';
import type * as TlogBuilder from './tlog/builder';

export const sessionWorkflow: typeof Sessions.sessionWorkflow = (input) => (require('./sessions/workflow') as typeof Sessions).sessionWorkflow(input);
export const intentWorkflow: typeof Intents.intentWorkflow = (input) => (require('./intents/workflow') as typeof Intents).intentWorkflow(input);
export const taskSchedulerWorkflow: typeof Scheduler.taskSchedulerWorkflow = (input) => (require('./tasks/scheduler') as typeof Scheduler).taskSchedulerWorkflow(input);
export const taskRunWorkflow: typeof Runs.taskRunWorkflow = (input) => (require('./tasks/run') as typeof Runs).taskRunWorkflow(input);
export const taskFireShardWorkflow: typeof FireShard.taskFireShardWorkflow = (input) => (require('./tasks/fire-shard') as typeof FireShard).taskFireShardWorkflow(input);
export const otelExportWorkflow: typeof OtelExport.otelExportWorkflow = (input) => (require('./otel/workflow') as typeof OtelExport).otelExportWorkflow(input);
export const tlogBuilderWorkflow: typeof TlogBuilder.tlogBuilderWorkflow = (input) => (require('./tlog/builder') as typeof TlogBuilder).tlogBuilderWorkflow(input);
