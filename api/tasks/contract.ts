/**
 * The scheduled-task routes: the task definition (the scheduler article's section 3.4; its
 * zod schema with every default is lib/task-definition-schema.ts, re-exported here), the
 * task, run and preview responses, and the route contracts.
 */
import { z } from 'zod';
import { LIMITS } from '../../lib/domain/limits';
import { CALENDAR_NAMES, RUN_STATUSES, TASK_STATUSES } from '../../lib/domain/tasks';
import { AgentAnswerSchema } from '../../lib/domain/tasks/answer';
import { TASK_LIST_ORDERS } from '../../lib/domain/list-order';
import { createdBy, CreateTaskBody, cronExpression, isoInstant, PatchTaskBody, taskId, timezone } from '../../lib/task-definition-schema';
import { defineRoute, limitParam, LogCheckSchema } from '../contract';
import { Operation } from '../../lib/platform/scopes';

// ---- the definition (lib/task-definition-schema.ts) -----------------------------------

export {
  AgentSchema,
  AtTriggerSchema,
  CreateTaskBody,
  CronTriggerSchema,
  DeliverySchema,
  DeliveryTargetSchema,
  IntervalTriggerSchema,
  PatchTaskBody,
  RetrySchema,
  TriggerSchema,
  taskId,
} from '../../lib/task-definition-schema';

// ---- responses --------------------------------------------------------------------------

const LastRun = z.object({ run_id: z.string(), status: z.enum(RUN_STATUSES), scheduled_at: z.string(), started_at: z.string().nullable(), finished_at: z.string().nullable() });

export const Task = z
  .object({
    task_id: z.string(),
    name: z.string(),
    status: z.enum(TASK_STATUSES),
    enabled: z.boolean(),
    deleted: z.boolean(),
    version: z.number().int(),
    definition: z.record(z.string(), z.unknown()).describe('the stored definition, every default filled in'),
    trigger_text: z.string().describe('the trigger in words'),
    last_run: LastRun.nullable(),
    next_run: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    last_change: z.object({ action: z.string(), reason: z.string().nullable() }),
    parent_run_id: z.string().nullable().describe('a follow-up task: the run whose next_action created it'),
    created_by: z.string().nullable().describe('the agent that created the task (its agent bounds apply), null for an operator\'s task'),
  })
  .meta({ id: 'Task' });

export const TaskDetail = Task.extend({
  next_fire_times: z.array(z.string()).describe(`the next ${LIMITS.taskNextFireTimesShown} fire times (UTC), calendar days off skipped`),
  history: z.array(z.object({ version: z.number().int(), action: z.string(), enabled: z.boolean(), deleted: z.boolean(), reason: z.string().nullable(), recorded_at: z.string(), log_index: z.number().int().nullable().describe("the row's leaf in the transparency log (docs/hash-chain.md §10.1), null until the log builder took it") })),
  scheduler: z.object({ workflow_id: z.string(), running_runs: z.array(z.string()).nullable(), next_fire_at: z.string().nullable() }),
  warnings: z
    .array(z.object({ field: z.string(), reason: z.string() }))
    .optional()
    .describe('on a create or PATCH answer: what was stored as sent but has no effect (a backoff list longer than the attempts need)'),
}).meta({ id: 'TaskDetail' });

export const Run = z
  .object({
    run_id: z.string(),
    task_id: z.string(),
    status: z.enum(RUN_STATUSES),
    reason: z.string().nullable(),
    trigger: z.string(),
    scheduled_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
    lateness_ms: z.number().nullable(),
    duration_ms: z.number().nullable(),
    attempt: z.number().int(),
    processed: z.number().int().nullable(),
    error_count: z.number().int().nullable(),
    summary: z.string().nullable(),
    result: AgentAnswerSchema.nullable(),
    needs_attention: z.boolean(),
    updated_at: z.string(),
    created_by: z.string().nullable().describe("the agent that created the run's task, or null"),
  })
  .meta({ id: 'Run' });

export const RunDetail = Run.extend({
  log: z.array(z.object({ id: z.number().int().describe("the log row's id (its seq in the transparency log)"), status: z.enum(RUN_STATUSES), attempt: z.number().int(), reason: z.string().nullable(), recorded_at: z.string(), log_index: z.number().int().nullable().describe("the row's leaf in the transparency log (docs/hash-chain.md §10.1), null until the log builder took it") })),
  deliveries: z.array(z.object({ target: z.number().int(), type: z.string(), ok: z.boolean(), detail: z.string().nullable(), recorded_at: z.string() })),
  follow_ups: z.array(z.object({ task_id: z.string(), name: z.string(), created_at: z.string() })).describe('tasks this run handed work to (next_action follow_up)'),
}).meta({ id: 'RunDetail' });

export const TaskResult = z
  .object({
    run_id: z.string(),
    task_id: z.string(),
    status: z.string(),
    scheduled_at: z.string(),
    started_at: z.string(),
    finished_at: z.string(),
    attempt: z.number().int(),
    processed: z.number().int().nullable(),
    error_count: z.number().int().nullable(),
    summary: z.string().describe('in full, not cut as in the execution log'),
    result: AgentAnswerSchema,
    recorded_at: z.string(),
  })
  .meta({ id: 'TaskResult' });

// ---- routes -----------------------------------------------------------------------------

const idPath = z.object({ id: taskId });
const boolString = z.enum(['true', 'false'], { error: 'must be true or false' }).transform((s) => s === 'true');

export const createTask = defineRoute({
  method: 'post',
  path: '/v1/tasks',
  tag: 'tasks',
  summary: 'Create a scheduled agent task (cron, interval, at, delay or condition trigger)',
  scopes: Operation.ManageTasks,
  body: CreateTaskBody,
  responses: { 201: TaskDetail },
  errors: [400, 401, 403, 409, 503],
  example: {
    task_id: 'daily-digest',
    name: '每日舆情摘要',
    trigger: { type: 'cron', expression: '0 17 * * 1-5', timezone: 'Asia/Shanghai' },
    agent: { type: 'openai', base_url: 'http://127.0.0.1:11434/v1', model: 'qwen2.5', api_key_env: 'LLM_API_KEY', persona: '舆情分析师', prompt_template: '请基于今日重点话题生成一份不超过500字的摘要，包含趋势分析和异常提醒。' },
    delivery: { type: 'webhook', url: 'https://robot.example/hook', format: 'markdown' },
    retry: { max_attempts: 3, backoff_seconds: [60, 300] },
  },
});

export const listTasks = defineRoute({
  method: 'get',
  path: '/v1/tasks',
  tag: 'tasks',
  summary: 'List tasks (filters: status, tag, enabled, created_by), newest first (order=oldest, or order=id by task id)',
  scopes: Operation.ReadTasks,
  query: z.object({
    status: z.enum(TASK_STATUSES).optional(),
    tag: z.string().max(LIMITS.taskTagMaxChars).optional(),
    enabled: boolString.optional(),
    created_by: createdBy.optional().describe('only the tasks this agent created'),
    order: z.enum(TASK_LIST_ORDERS, { error: `must be one of ${TASK_LIST_ORDERS.join(', ')}` }).optional().describe('newest (default) or oldest by creation time, or id: by task id'),
    limit: limitParam(LIMITS.pageMax).optional(),
    cursor: z.string().max(LIMITS.taskListCursorMaxChars).optional().describe('next_cursor of the previous page (it continues that page\'s order; a task id pages by id, as before orders)'),
  }),
  responses: { 200: z.object({ tasks: z.array(Task), next_cursor: z.string().nullable() }) },
  errors: [400, 401, 403, 503],
});

export const getTask = defineRoute({
  method: 'get',
  path: '/v1/tasks/:id',
  tag: 'tasks',
  summary: 'A task with its next fire times, its trigger in words and its change history',
  scopes: Operation.ReadTasks,
  parameterExamples: { id: 'daily-digest' },
  params: idPath,
  responses: { 200: TaskDetail },
  errors: [400, 401, 403, 404, 503],
});

export const patchTask = defineRoute({
  method: 'patch',
  path: '/v1/tasks/:id',
  tag: 'tasks',
  summary: 'Change a task: any subset of its fields; the whole result is validated again',
  scopes: Operation.ManageTasks,
  parameterExamples: { id: 'daily-digest' },
  params: idPath,
  body: PatchTaskBody,
  responses: { 200: TaskDetail },
  errors: [400, 401, 403, 404, 409, 503],
  example: { trigger: { type: 'cron', expression: '0 30 15 * * 1-5', timezone: 'Asia/Shanghai' } },
});

export const deleteTask = defineRoute({
  method: 'delete',
  path: '/v1/tasks/:id',
  tag: 'tasks',
  summary: 'Delete a task: it stops firing; its history and runs stay readable',
  scopes: Operation.ManageTasks,
  parameterExamples: { id: 'daily-digest' },
  params: idPath,
  responses: { 200: TaskDetail },
  errors: [400, 401, 403, 404, 409, 503],
});

const action = (name: 'pause' | 'resume', summary: string) =>
  defineRoute({
    method: 'post',
    path: `/v1/tasks/:id/${name}`,
    tag: 'tasks',
    summary,
    scopes: Operation.ManageTasks,
    parameterExamples: { id: 'daily-digest' },
    params: idPath,
    responses: { 200: TaskDetail },
    errors: [400, 401, 403, 404, 409, 503],
  });
export const pauseTask = action('pause', 'Pause a task: no fire times run until it is resumed (none are made up)');
export const resumeTask = action('resume', 'Resume a paused (or auto-disabled) task from now on');

export const triggerTask = defineRoute({
  method: 'post',
  path: '/v1/tasks/:id/trigger',
  tag: 'tasks',
  summary: 'Run a task now, with a run id of its own (works on a paused task too)',
  scopes: Operation.ManageTasks,
  parameterExamples: { id: 'daily-digest' },
  params: idPath,
  responses: { 202: z.object({ run_id: z.string(), url: z.string() }) },
  errors: [400, 401, 403, 404, 409, 503],
});

const BackfilledRun = z.object({ scheduled_at: z.string().describe('the fire time (UTC)'), run_id: z.string() });

export const backfillTask = defineRoute({
  method: 'post',
  path: '/v1/tasks/:id/backfill',
  tag: 'tasks',
  summary: `Run every fire time in [from, to] once (at most ${LIMITS.taskBackfillMax}), under the scheduled run ids: fire times that already ran are not run again`,
  scopes: Operation.ManageTasks,
  parameterExamples: { id: 'daily-digest' },
  params: idPath,
  body: z
    .strictObject({
      from: isoInstant.describe('first instant of the range (included)'),
      to: isoInstant.describe('last instant of the range (included); not in the future'),
    })
    .meta({ id: 'BackfillTask' }),
  responses: {
    202: z
      .object({
        task_id: z.string(),
        from: z.string(),
        to: z.string(),
        started: z.array(BackfilledRun).describe('fire times started now, with trigger "backfill"'),
        already_run: z.array(BackfilledRun).describe('fire times that had already run (or were started meanwhile): not run again'),
      })
      .meta({ id: 'Backfill' }),
  },
  errors: [400, 401, 403, 404, 409, 503],
  example: { from: '2026-03-02T00:00:00Z', to: '2026-03-06T23:59:59Z' },
});

const runCursor = { cursor: z.string().max(LIMITS.runListCursorMaxChars).optional().describe('next_cursor of the previous page') };
const nextCursor = z.string().nullable().describe('pass back as cursor for the next page; null on the last');

/** A page of what belongs to one task (its stored results), newest first. */
function ofTask<K extends 'results', T extends z.ZodType>(what: K, summary: string, item: T) {
  return defineRoute({
    method: 'get',
    path: `/v1/tasks/:id/${what}` as const,
    tag: 'tasks',
    summary,
    scopes: Operation.ReadTasks,
    parameterExamples: { id: 'daily-digest', limit: 20 },
    params: idPath,
    query: z.object({ limit: limitParam(LIMITS.pageMax).optional() }),
    responses: { 200: z.object({ [what]: z.array(item) } as { [k in K]: z.ZodArray<T> }) },
    errors: [400, 401, 403, 404, 503],
  });
}

export const listTaskRuns = defineRoute({
  method: 'get',
  path: '/v1/tasks/:id/runs',
  tag: 'tasks',
  summary: "A task's runs, newest fire time first, with cursor paging",
  scopes: Operation.ReadTasks,
  parameterExamples: { id: 'daily-digest', limit: 20 },
  params: idPath,
  query: z.object({ limit: limitParam(LIMITS.pageMax).optional(), ...runCursor }),
  responses: { 200: z.object({ runs: z.array(Run), next_cursor: nextCursor }) },
  errors: [400, 401, 403, 404, 503],
});
export const listTaskResults = ofTask('results', "The rows a task's `table` delivery stored, one per run, newest first", TaskResult);

export const listRuns = defineRoute({
  method: 'get',
  path: '/v1/runs',
  tag: 'tasks',
  summary: 'Runs by status, newest change first, with cursor paging; status=needs_attention is the queue of runs that failed for good',
  scopes: Operation.ReadTasks,
  query: z.object({
    status: z.enum([...RUN_STATUSES, 'needs_attention']).optional(),
    task_id: taskId.optional(),
    limit: limitParam(LIMITS.pageMax).optional(),
    ...runCursor,
  }),
  responses: { 200: z.object({ runs: z.array(Run), next_cursor: nextCursor }) },
  errors: [400, 401, 403, 503],
});

export const getRun = defineRoute({
  method: 'get',
  path: '/v1/runs/:id',
  tag: 'tasks',
  summary: 'One run with every state it went through and its deliveries (the id is percent-encoded: run%2F…)',
  scopes: Operation.ReadTasks,
  parameterExamples: { id: 'run/daily-digest/2025-01-06T07:00:00.000Z' },
  params: z.object({ id: z.string().min(1).max(LIMITS.runIdMaxChars) }),
  responses: { 200: RunDetail },
  errors: [400, 401, 403, 404, 503],
});

export const ReportResultBody = z
  .strictObject({
    ...AgentAnswerSchema.shape,
    attempt: z.number().int().min(1).max(LIMITS.taskMaxAttempts).optional().describe('the attempt this result answers (the run context names it); default the attempt in progress'),
  })
  .meta({ id: 'RunResultReport' });

export const ResultOutcome = z
  .object({
    run_id: z.string(),
    task_id: z.string(),
    attempt: z.number().int(),
    outcome: z.enum(['success', 'retry', 'failed']).describe('success: the run succeeds with this answer; retry: the agent reported failed and an attempt remains; failed: it was the last attempt'),
    deduplicated: z.boolean().describe('true when this exact result had been accepted before: the first outcome, nothing done twice'),
  })
  .meta({ id: 'RunResultOutcome' });

export const reportRunResult = defineRoute({
  method: 'post',
  path: '/v1/runs/:id/result',
  tag: 'tasks',
  summary: "An agent reports its result (the answer protocol) for a run that waits for it (webhook agent after 202, openclaw agent); the same result again answers the same outcome",
  description:
    'Refusals: 400 naming the field for an answer outside the protocol (the run keeps waiting); 404 for an unknown run; 409 run_not_waiting (finished, between attempts, or an agent that answers directly) or result_conflict (another task_id, or a different result already accepted for the attempt), with run_status, attempt and waiting.',
  scopes: Operation.ManageTasks,
  parameterExamples: { id: 'run/daily-digest/2025-01-06T07:00:00.000Z' },
  params: z.object({ id: z.string().min(1).max(LIMITS.runIdMaxChars) }),
  body: ReportResultBody,
  responses: { 200: ResultOutcome },
  errors: [400, 401, 403, 404, 409, 503],
  example: { task_id: 'daily-digest', status: 'success', processed: 128, errors: [{ item: 7, reason: 'source timed out' }], summary: '今日舆情平稳，2 条异常已标注。', next_action: null },
});

export const previewSchedule = defineRoute({
  method: 'get',
  path: '/v1/schedules/preview',
  tag: 'tasks',
  summary: 'The fire times of a cron expression in a time zone, under the declared time-zone policy (UTC, `from` exclusive)',
  scopes: Operation.ReadTasks,
  parameterExamples: { cron: '0 0 8 * * 1-5', timezone: 'Europe/Berlin', count: 5 },
  query: z.object({
    cron: cronExpression,
    timezone: timezone.default('UTC'),
    dom_dow: z.enum(['or', 'and']).default('or'),
    from: isoInstant.optional().describe('default now'),
    count: limitParam(LIMITS.schedulePreviewMax).optional(),
    stagger_s: z
      .string()
      .regex(/^\d+$/, 'must be a whole number of seconds')
      .transform(Number)
      .refine((n) => n <= LIMITS.taskStaggerMaxS, `must be at most ${LIMITS.taskStaggerMaxS}`)
      .optional()
      .describe('a stagger window, as on the trigger'),
    task_id: taskId.optional().describe('the task whose offset within stagger_s to use (required with stagger_s)'),
  }),
  responses: {
    200: z.object({
      fire_times: z.array(z.string()),
      timezone: z.string(),
      description: z.string(),
      cron_times: z.array(z.string()).optional().describe("with stagger_s: the cron's own times, before the offset"),
      stagger_offset_s: z.number().int().optional(),
    }),
  },
  errors: [400, 401, 403],
});

export const timeNow = defineRoute({
  method: 'get',
  path: '/v1/time',
  tag: 'tasks',
  summary: "Now: the instant, the local time in a zone, and whether today is a working day in a named calendar (the time context a task run's agent gets)",
  scopes: Operation.ReadTasks,
  parameterExamples: { timezone: 'Asia/Shanghai', calendar: 'cn-workdays' },
  query: z.object({
    timezone: timezone.default('UTC').describe("the user's IANA zone"),
    calendar: z.enum(CALENDAR_NAMES, { error: `must be one of ${CALENDAR_NAMES.join(', ')}` }).optional().describe('a named calendar; default a plain Monday-to-Friday week'),
    lang: z.enum(['en', 'zh']).default('en'),
  }),
  responses: {
    200: z
      .object({
        instant: z.string().describe('now, UTC'),
        timezone: z.string(),
        local_time: z.string().describe('now in the zone, with its offset'),
        date: z.string().describe('the local date'),
        weekday: z.string(),
        calendar: z.string().nullable(),
        working_day: z.boolean(),
        day: z.enum(['business_day', 'holiday', 'weekend', 'makeup_workday']),
        holiday: z.string().optional().describe('the statutory holiday (or the one a make-up day belongs to)'),
        no_data: z.boolean().optional().describe('the calendar has no official data for this year: Monday to Friday count'),
        text: z.string().describe("the same lines a task run's time context opens and ends with"),
      })
      .meta({ id: 'TimeNow' }),
  },
  errors: [400, 401, 403],
});

export const verifyTask = defineRoute({
  method: 'get',
  path: '/v1/tasks/:id/verify',
  tag: 'tasks',
  summary: "Check every history row of a task against a checkpoint of the transparency log (the newest witnessed one when LOG_WITNESSES is set): a row changed after it was logged is named by its version",
  scopes: Operation.ReadTasks,
  parameterExamples: { id: 'daily-digest' },
  params: idPath,
  responses: { 200: z.object({ task_id: z.string(), ok: z.boolean(), checked: z.number().int(), log: LogCheckSchema }) },
  errors: [400, 401, 403, 404, 503],
});

export const verifyRun = defineRoute({
  method: 'get',
  path: '/v1/runs/:id/verify',
  tag: 'tasks',
  summary: "Check every log row of a run against a checkpoint of the transparency log (the newest witnessed one when LOG_WITNESSES is set): a row changed after it was logged is named by its id",
  scopes: Operation.ReadTasks,
  parameterExamples: { id: 'run/daily-digest/2025-01-06T07:00:00.000Z' },
  params: z.object({ id: z.string().min(1).max(LIMITS.runIdMaxChars) }),
  responses: { 200: z.object({ run_id: z.string(), ok: z.boolean(), checked: z.number().int(), log: LogCheckSchema }) },
  errors: [400, 401, 403, 404, 503],
});

export const taskRoutes = {
  createTask,
  listTasks,
  getTask,
  patchTask,
  deleteTask,
  pauseTask,
  resumeTask,
  triggerTask,
  backfillTask,
  listTaskRuns,
  listTaskResults,
  listRuns,
  getRun,
  reportRunResult,
  previewSchedule,
  timeNow,
  verifyTask,
  verifyRun,
} as const;
