/**
 * The scheduled-task routes: the task definition (the scheduler article's section 3.4) as a
 * zod schema with every default, the task, run and preview responses, and the route
 * contracts. Shape is checked here; rules that need more than shape (time zones, template
 * variables, backoff length) are lib/domain/tasks/index.ts's taskDefinitionProblems, cron
 * expressions lib/schedule.ts's cronProblem.
 */
import { z } from 'zod';
import { LIMITS } from '../../lib/domain/limits';
import { SESSION_ID_RE, SESSION_ID_RULE } from '../../lib/domain/sessions';
import {
  AGENT_TYPES,
  CALENDAR_NAMES,
  DELIVERY_TYPES,
  MISFIRE_POLICIES,
  OVERLAP_POLICIES,
  PRIORITIES,
  RUN_STATUSES,
  TASK_DEFAULTS,
  TASK_ID_RE,
  TASK_ID_RULE,
  SECRET_NAME_RE,
  TASK_STATUSES,
  TRIGGER_TYPES,
} from '../../lib/domain/tasks';
import { isTimeZone } from '../../lib/domain/platform/zones';
import { cronProblem } from '../../lib/domain/tasks/schedule';
import { AgentAnswerSchema } from '../../lib/domain/tasks/answer';
import { RETRY_DEFAULTS, defaultMaximumIntervalS, type RetryPolicy } from '../../lib/domain/tasks/retry';
import { DIGEST_DEFAULTS, DIGEST_STATUSES, fileNameProblem } from '../../lib/domain/tasks/outputs';
import { TASK_LIST_ORDERS } from '../../lib/domain/list-order';
import { defineRoute, limitParam, LogCheckSchema, mistyped, plainText, required } from '../contract';
import { ConditionTriggerSchema, DelayTriggerSchema, SIGNAL_TRIGGER_EXAMPLES } from './trigger-contract';
import { Operation } from '../scopes';

// ---- fields -----------------------------------------------------------------------------

export const taskId = z.string(required()).regex(TASK_ID_RE, TASK_ID_RULE);
/** An agent id (who created a task): printable text, as a session's agent_id. */
const createdBy = plainText(LIMITS.taskCreatedByMaxChars).min(1, 'must not be empty');
const httpUrl = z
  .string(mistyped('must be an http(s) URL'))
  .max(LIMITS.taskUrlMaxChars)
  .refine((s) => {
    try {
      return ['http:', 'https:'].includes(new URL(s).protocol);
    } catch {
      return false;
    }
  }, 'must be an http(s) URL');
/** An HMAC secret: write-only (sealed when stored, never returned: reads show `secret_set: true`). */
const hmacSecret = plainText(LIMITS.taskSecretMaxChars)
  .min(LIMITS.taskSecretMinChars, `must be at least ${LIMITS.taskSecretMinChars} characters`)
  .describe('HMAC-SHA256 key for X-Timekeeper-Signature; write-only: never returned (reads show "secret_set": true), stored sealed; a PATCH that omits it keeps it');
const isoInstant = z.iso.datetime({ offset: true, error: 'must be an ISO-8601 date-time with a zone (Z or ±hh:mm)' });
const timezone = z
  .string()
  .max(LIMITS.timeZoneMaxChars)
  .refine(isTimeZone, 'is not a known IANA time zone (e.g. Asia/Shanghai, America/New_York, UTC)');
const cronExpression = z
  .string(required())
  .min(1)
  .max(LIMITS.cronExpressionMaxChars)
  .superRefine((e, ctx) => {
    const p = cronProblem(e);
    if (p) ctx.addIssue({ code: 'custom', message: p });
  });
const seconds = (what: string, min: number, max: number) =>
  z.number(mistyped('must be a number of seconds')).min(min, `${what} must be at least ${min}`).max(max, `${what} must be at most ${max}`);

export const CronTriggerSchema = z.strictObject({
  type: z.literal('cron'),
  expression: cronExpression,
  timezone: timezone.default('UTC'),
  dom_dow: z.enum(['or', 'and']).default('or'),
  tolerant: z.boolean().default(true),
  stagger_s: z
    .number()
    .int('must be a whole number of seconds')
    .min(0, 'must be at least 0')
    .max(LIMITS.taskStaggerMaxS, `must be at most ${LIMITS.taskStaggerMaxS}`)
    .optional()
    .describe('spread window: every fire time moves later by one fixed offset below it, from the task id (0: none, also for the top-of-hour default)'),
  stagger_offset_s: z
    .number()
    .int('must be a whole number of seconds')
    .min(0, 'must be at least 0')
    .optional()
    .describe('the offset within stagger_s; default derived from the task id (the stored trigger always has it)'),
});
export const IntervalTriggerSchema = z.strictObject({
  type: z.literal('interval'),
  every_s: z.number(required(' (seconds, greater than 0)')).int('must be a whole number of seconds').min(LIMITS.taskMinIntervalS, `must be at least ${LIMITS.taskMinIntervalS} (greater than 0)`),
  mode: z.enum(['from_last_start', 'aligned']).default('from_last_start'),
  anchor: isoInstant.optional(),
});
export const AtTriggerSchema = z.strictObject({ type: z.literal('at'), at: isoInstant });
export const TriggerSchema = z
  .discriminatedUnion('type', [CronTriggerSchema, IntervalTriggerSchema, AtTriggerSchema, DelayTriggerSchema, ConditionTriggerSchema], {
    error: (i) => (i.code === 'invalid_union' ? `type must be one of ${TRIGGER_TYPES.join(', ')}` : undefined),
  })
  .meta({ id: 'Trigger', examples: [{ type: 'cron', expression: '0 17 * * 1-5', timezone: 'Asia/Shanghai' }, ...Object.values(SIGNAL_TRIGGER_EXAMPLES)] });

const template = z.string(required()).min(1).max(LIMITS.promptTemplateMaxChars);
const OpenAiAgentSchema = z.strictObject({
  type: z.literal('openai'),
  base_url: httpUrl,
  model: plainText(LIMITS.agentNameMaxChars),
  api_key_env: z.string().regex(SECRET_NAME_RE, 'must be an environment variable name (A-Z, 0-9, _)').optional(),
  persona: plainText(LIMITS.personaMaxChars).optional(),
  prompt_template: template,
  temperature: z.number().min(0).max(LIMITS.agentTemperatureMax).optional(),
});
const WebhookAgentSchema = z.strictObject({
  type: z.literal('webhook'),
  url: httpUrl,
  persona: plainText(LIMITS.personaMaxChars).optional(),
  prompt_template: template,
  secret: hmacSecret.optional(),
});
const OpenClawAgentSchema = z.strictObject({
  type: z.literal('openclaw'),
  url: httpUrl.describe("the Gateway's base URL, e.g. http://127.0.0.1:18789"),
  hooks_path: z.string().regex(/^\/[A-Za-z0-9._~\/-]{0,99}$/, 'must be a path starting with /').default('/hooks').describe("the Gateway's hooks.path"),
  token_env: z.string(required()).regex(SECRET_NAME_RE, 'must be an environment variable name (A-Z, 0-9, _)').describe("the environment variable (on the worker) holding the Gateway's hooks.token"),
  persona: plainText(LIMITS.personaMaxChars).optional(),
  prompt_template: template,
  agent_id: plainText(LIMITS.agentNameMaxChars).optional(),
  session_key: plainText(LIMITS.agentSessionKeyMaxChars).optional(),
  model: plainText(LIMITS.agentNameMaxChars).optional(),
  deliver: z.boolean().default(false).describe("whether OpenClaw also sends the agent's reply to a channel"),
});
/** The built-in digest: reads the needs-attention queue and summarises it, no LLM (lib/domain/tasks/outputs.ts). */
const DigestAgentSchema = z.strictObject({
  type: z.literal('digest'),
  since_s: z.number().int('must be a whole number of seconds').min(1, 'must be at least 1').max(LIMITS.taskDigestSinceMaxS, `must be at most ${LIMITS.taskDigestSinceMaxS}`).optional(),
  statuses: z.array(z.enum(DIGEST_STATUSES)).min(1).max(DIGEST_STATUSES.length).default(DIGEST_DEFAULTS.statuses),
  task_ids: z.array(taskId).min(1).max(LIMITS.taskDigestTaskIdsMax).optional(),
  max_items: z.number().int().min(1).max(LIMITS.taskDigestItemsMax).default(DIGEST_DEFAULTS.max_items),
});
export const AgentSchema = z
  .discriminatedUnion('type', [OpenAiAgentSchema, WebhookAgentSchema, OpenClawAgentSchema, DigestAgentSchema], {
    error: (i) => (i.code === 'invalid_union' ? `type must be one of ${AGENT_TYPES.join(', ')}` : undefined),
  })
  .meta({ id: 'Agent' });

const WebhookDeliverySchema = z.strictObject({
  type: z.literal('webhook'),
  url: httpUrl,
  format: z.enum(['json', 'markdown']).default('json'),
  secret: hmacSecret.optional(),
});
const SessionDeliverySchema = z.strictObject({ type: z.literal('session'), session_id: z.string().regex(SESSION_ID_RE, SESSION_ID_RULE) });
const FileDeliverySchema = z.strictObject({
  type: z.literal('file'),
  path: z
    .string()
    .max(LIMITS.deliveryPathMaxChars)
    .superRefine((p, ctx) => {
      const problem = fileNameProblem(p);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .optional()
    .describe('a file name template directly under ARTIFACTS_DIR; default {{task_id}}-{{run_key}}.md (or .json)'),
  format: z.enum(['markdown', 'json']).default('markdown'),
});
const TableDeliverySchema = z.strictObject({ type: z.literal('table') });
export const DeliveryTargetSchema = z.discriminatedUnion('type', [WebhookDeliverySchema, SessionDeliverySchema, FileDeliverySchema, TableDeliverySchema], {
  error: (i) => (i.code === 'invalid_union' ? `type must be one of ${DELIVERY_TYPES.join(', ')}` : undefined),
});
/** One target or a list (the article writes one object). */
export const DeliverySchema = z
  .preprocess((d) => (d !== null && typeof d === 'object' && !Array.isArray(d) ? [d] : d), z.array(DeliveryTargetSchema).max(LIMITS.taskDeliveryTargetsMax))
  .describe('one delivery target, or a list of them');

const backoffS = z.number(mistyped('must be a number of seconds')).min(0, 'must not be negative').max(LIMITS.taskBackoffMaxS, `must be at most ${LIMITS.taskBackoffMaxS}`);
const EXPONENTIAL_FIELDS = ['initial_interval_s', 'backoff_coefficient', 'maximum_interval_s'] as const;

/**
 * Retry settings in exactly one of two styles: `backoff_seconds` (an explicit list), or
 * `initial_interval_s` with optional `backoff_coefficient` (default 2) and
 * `maximum_interval_s` (default 100 initial intervals). A mix is refused naming the field.
 */
export const RetrySchema = z
  .strictObject({
    max_attempts: z.number().int().min(1).max(LIMITS.taskMaxAttempts).default(TASK_DEFAULTS.retry.max_attempts),
    backoff_seconds: z.array(backoffS).max(LIMITS.taskMaxAttempts).optional(),
    initial_interval_s: backoffS.optional(),
    backoff_coefficient: z.number().min(1, 'must be at least 1').max(LIMITS.taskBackoffCoefficientMax, `must be at most ${LIMITS.taskBackoffCoefficientMax}`).optional(),
    maximum_interval_s: backoffS.optional(),
  })
  .superRefine((r, ctx) => {
    const exponential = EXPONENTIAL_FIELDS.filter((k) => r[k] !== undefined);
    if (r.backoff_seconds !== undefined) {
      for (const k of exponential) ctx.addIssue({ code: 'custom', path: [k], message: 'cannot be combined with backoff_seconds: use either backoff_seconds or the exponential settings (initial_interval_s, backoff_coefficient, maximum_interval_s)' });
    } else if (exponential.length && r.initial_interval_s === undefined) {
      ctx.addIssue({ code: 'custom', path: ['initial_interval_s'], message: `is required with ${exponential.join(' and ')} (the exponential retry style)` });
    }
  })
  .transform((r): RetryPolicy =>
    r.initial_interval_s !== undefined
      ? {
          max_attempts: r.max_attempts,
          initial_interval_s: r.initial_interval_s,
          backoff_coefficient: r.backoff_coefficient ?? RETRY_DEFAULTS.backoff_coefficient,
          maximum_interval_s: r.maximum_interval_s ?? defaultMaximumIntervalS(r.initial_interval_s),
        }
      : { max_attempts: r.max_attempts, backoff_seconds: r.backoff_seconds ?? [] },
  )
  .meta({ id: 'Retry' });

const CalendarSchema = z.strictObject({
  name: z
    .enum(CALENDAR_NAMES, { error: `must be one of ${CALENDAR_NAMES.join(', ')}` })
    .optional()
    .describe('cn-workdays: official Chinese working days (statutory holidays off, make-up weekend days worked); cn-trading: Mon-Fri minus statutory holidays, no make-up days'),
  holidays: z.array(z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date (YYYY-MM-DD)')).max(LIMITS.holidaysMax).default([]),
  skip_weekends: z.boolean().default(false),
});

/** The fields a task definition has, all optional except trigger and agent (PATCH takes any subset). */
const fields = {
  name: plainText(LIMITS.taskNameMaxChars),
  trigger: TriggerSchema,
  agent: AgentSchema,
  delivery: DeliverySchema,
  retry: RetrySchema,
  timeout_s: z.number().int('must be a whole number of seconds').min(1, 'must be at least 1').max(LIMITS.taskTimeoutMaxS, `must be at most ${LIMITS.taskTimeoutMaxS}`),
  overlap: z.enum(OVERLAP_POLICIES),
  max_concurrency: z.number().int().min(1).max(LIMITS.taskMaxConcurrency),
  priority: z.enum(PRIORITIES),
  misfire: z.enum(MISFIRE_POLICIES),
  misfire_grace_s: seconds('misfire_grace_s', 0, LIMITS.taskMisfireGraceMaxS),
  calendar: CalendarSchema,
  session_id: z.string().regex(SESSION_ID_RE, SESSION_ID_RULE),
  memory_runs: z.number().int().min(0).max(LIMITS.taskMemoryRunsMax),
  auto_disable_after: z.number().int().min(1).max(LIMITS.taskAutoDisableAfterMax),
  alert: z.strictObject({ url: httpUrl, secret: hmacSecret.optional() }),
  enabled: z.boolean(),
  tags: z.array(plainText(LIMITS.taskTagMaxChars)).max(LIMITS.taskTagsMax),
  lang: z.enum(['en', 'zh']),
  agent_id: plainText(LIMITS.agentIdMaxChars).describe('the agent the task belongs to (keys bound to agents see and change only theirs; a key bound to one agent fills in its own)'),
};

export const CreateTaskBody = z
  .strictObject({
    task_id: taskId.optional(),
    name: fields.name.optional(),
    trigger: fields.trigger,
    agent: fields.agent,
    delivery: fields.delivery.default([]),
    retry: fields.retry.default({ ...TASK_DEFAULTS.retry }),
    timeout_s: fields.timeout_s.default(TASK_DEFAULTS.timeout_s),
    overlap: fields.overlap.default(TASK_DEFAULTS.overlap),
    max_concurrency: fields.max_concurrency.default(TASK_DEFAULTS.max_concurrency),
    priority: fields.priority.default(TASK_DEFAULTS.priority),
    misfire: fields.misfire.default(TASK_DEFAULTS.misfire),
    misfire_grace_s: fields.misfire_grace_s.default(TASK_DEFAULTS.misfire_grace_s),
    calendar: fields.calendar.optional(),
    session_id: fields.session_id.optional(),
    memory_runs: fields.memory_runs.default(TASK_DEFAULTS.memory_runs),
    auto_disable_after: fields.auto_disable_after.default(TASK_DEFAULTS.auto_disable_after),
    alert: fields.alert.optional(),
    enabled: fields.enabled.default(true),
    tags: fields.tags.default([]),
    lang: fields.lang.default(TASK_DEFAULTS.lang),
    agent_id: fields.agent_id.optional(),
    created_by: createdBy.optional().describe("the agent scheduling this task for itself: the operator's agent bounds (AGENT_TASK_*) apply to it, now and at every PATCH; a key bound to an agent sets it"),
  })
  .meta({ id: 'CreateTask' });

/** The optional fields a PATCH may remove with `null`. */
type Removable = 'calendar' | 'session_id' | 'alert';

/** Any subset of the fields; `null` removes an optional one (calendar, session_id, alert). */
export const PatchTaskBody = z
  .strictObject({
    ...Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.optional()])),
    calendar: fields.calendar.nullable().optional(),
    session_id: fields.session_id.nullable().optional(),
    alert: fields.alert.nullable().optional(),
  } as { [K in Exclude<keyof typeof fields, Removable>]: z.ZodOptional<(typeof fields)[K]> } & {
    calendar: z.ZodOptional<z.ZodNullable<typeof fields.calendar>>;
    session_id: z.ZodOptional<z.ZodNullable<typeof fields.session_id>>;
    alert: z.ZodOptional<z.ZodNullable<typeof fields.alert>>;
  })
  .meta({ id: 'PatchTask' });

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
