/** Workflow bundle entry point: every workflow the worker registers. */
export { sessionWorkflow } from './sessions/workflow';
export { intentWorkflow } from './intents/workflow';
export { taskSchedulerWorkflow } from './tasks/scheduler';
export { taskRunWorkflow } from './tasks/run';
export { taskFireShardWorkflow } from './tasks/fire-shard';
export { otelExportWorkflow } from './otel/workflow';
export { tlogBuilderWorkflow } from './tlog/builder';
