/** The zod shapes of the delay and condition triggers: lib/domain/tasks/trigger-schema.ts (the task definition's, below the API and the worker). */
export { ConditionNodeSchema, ConditionTriggerSchema, DelayTriggerSchema, SIGNAL_TRIGGER_EXAMPLES } from '../../lib/domain/tasks/trigger-schema';
