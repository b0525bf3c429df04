/**
 * Function-calling tool definitions for an agent that schedules its own work (issue 22):
 * schedule, list, read, pause, resume, cancel and run its tasks, preview a cron expression,
 * send a signal, and read the time now. Like the intent and session tools, the JSON Schemas
 * come from the route contracts (api/tasks/contract.ts, api/signals/contract.ts): a tool takes
 * what its route accepts, query values as numbers and booleans. Two conveniences the handler
 * (integrations/mcp/server.ts) turns into the route's own terms: schedule_task's `in_s` (an
 * `at` trigger that many seconds from now) and get_task's `runs` (its last runs, from
 * GET /v1/tasks/:id/runs). Descriptions are short on purpose: a model reads every one on
 * every turn (their size: `npm run tools:size`).
 */
import { z } from 'zod';
import { LIMITS } from '../../lib/domain/limits';
import { SendSignalBody, sendSignal } from '../../api/signals/contract';
import { toolParameters, type ToolDefinition } from '../tool-schema';
import { DelayTriggerSchema } from '../../lib/domain/tasks/trigger-schema';
import {
  AgentSchema,
  AtTriggerSchema,
  CreateTaskBody,
  DeliveryTargetSchema,
  CronTriggerSchema,
  IntervalTriggerSchema,
  createTask,
  deleteTask,
  getTask,
  listTasks,
  pauseTask,
  previewSchedule,
  resumeTask,
  taskId,
  timeNow,
  triggerTask,
} from '../../api/tasks/contract';

const int = (min: number, max: number) => z.number().int().min(min).max(max);
const create = CreateTaskBody.shape;
const preview = previewSchedule.query.shape;
const byId = z.strictObject({ task_id: taskId });
// The triggers an agent schedules with, without the fields only an operator tunes (stagger, tolerance, alignment, dedupe templates).
const trigger = z.discriminatedUnion('type', [
  CronTriggerSchema.omit({ tolerant: true, stagger_s: true, stagger_offset_s: true }),
  IntervalTriggerSchema.omit({ mode: true, anchor: true }),
  AtTriggerSchema,
  DelayTriggerSchema.omit({ deduplicate: true, dedupe_key: true }),
]);

/**
 * A union's members without their HMAC `secret` (an operator's setting, and its description
 * is long) and without the built-in digest agent (a report for operators, not an agent's
 * wake-up): what an agent schedules for itself, in fewer bytes.
 */
function forAgents<T extends z.ZodDiscriminatedUnion>(u: T): z.ZodDiscriminatedUnion {
  const members = (u.options as z.ZodObject[]).filter((o) => (o.shape.type as z.ZodLiteral).value !== 'digest').map((o) => ('secret' in o.shape ? o.omit({ secret: true }) : o));
  return z.discriminatedUnion('type', members as [z.ZodObject, ...z.ZodObject[]]);
}

export function taskTools(): ToolDefinition[] {
  return [
    {
      name: 'schedule_task',
      description: 'Schedule work for later: trigger cron, interval, at, or delay (after a signal); or in_s for once in N seconds. Answers the next fire times and the trigger in words: check them.',
      parameters: toolParameters(
        z.strictObject({
          task_id: create.task_id,
          name: create.name,
          trigger: trigger.optional(),
          in_s: int(1, LIMITS.signalTriggerMaxS).optional().describe('instead of trigger: run once this many seconds from now'),
          agent: forAgents(AgentSchema),
          delivery: z.array(forAgents(DeliveryTargetSchema)).max(LIMITS.taskDeliveryTargetsMax).optional(),
          calendar: create.calendar,
          session_id: create.session_id,
          tags: create.tags,
          lang: create.lang,
          created_by: create.created_by.describe('your agent id (default: the server\'s)'),
        }),
      ),
      route: { method: 'POST', path: createTask.path },
    },
    {
      name: 'list_tasks',
      description: 'List tasks (trigger in words, next and last run), ordered by id.',
      parameters: toolParameters(
        z.strictObject({
          created_by: listTasks.query.shape.created_by,
          tag: listTasks.query.shape.tag,
          enabled: z.boolean().optional(),
          limit: int(1, LIMITS.pageMax).optional(),
          cursor: listTasks.query.shape.cursor,
        }),
      ),
      route: { method: 'GET', path: listTasks.path },
    },
    {
      name: 'get_task',
      description: 'One task: definition, next fire times, and its last runs.',
      parameters: toolParameters(byId.extend({ runs: int(0, LIMITS.pageMax).optional().describe('how many last runs (default 5)') })),
      route: { method: 'GET', path: getTask.path },
    },
    { name: 'pause_task', description: 'Pause a task (missed fire times are not made up).', parameters: toolParameters(byId), route: { method: 'POST', path: pauseTask.path } },
    { name: 'resume_task', description: 'Resume a paused task from now on.', parameters: toolParameters(byId), route: { method: 'POST', path: resumeTask.path } },
    { name: 'cancel_task', description: 'Delete a task: it never fires again; its runs stay readable.', parameters: toolParameters(byId), route: { method: 'DELETE', path: deleteTask.path } },
    { name: 'run_task_now', description: 'Run a task once now (also when paused).', parameters: toolParameters(byId), route: { method: 'POST', path: triggerTask.path } },
    {
      name: 'preview_schedule',
      description: 'The next fire times (UTC) of a cron expression in a zone, and the expression in words.',
      parameters: toolParameters(
        z.strictObject({
          cron: preview.cron,
          timezone: preview.timezone,
          from: preview.from,
          count: int(1, LIMITS.schedulePreviewMax).optional(),
        }),
      ),
      route: { method: 'GET', path: previewSchedule.path },
    },
    {
      name: 'send_signal',
      description: 'Send a named event to the tasks whose delay or condition trigger listens to it.',
      parameters: toolParameters(z.strictObject(SendSignalBody.shape)),
      route: { method: 'POST', path: sendSignal.path },
    },
    {
      name: 'time_now',
      description: "Now: UTC instant, local time in the user's zone, and whether today is a working day (named calendar).",
      parameters: toolParameters(z.strictObject(timeNow.query.shape)),
      route: { method: 'GET', path: timeNow.path },
    },
  ];
}
