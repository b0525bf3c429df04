/**
 * The scheduled-task definition (the scheduler article's section 3.4) as a zod schema with
 * every default: CreateTaskBody (POST /v1/tasks, and a follow-up task an agent's next_action
 * asks for) and PatchTaskBody (any subset). Below the API and the worker, so both check a
 * definition with the one schema: the route contracts (api/tasks/contract.ts) re-export it,
 * the whole check is lib/task-definition.ts. Shape is checked here; rules that need more
 * than shape (time zones, template variables, backoff length) are lib/domain/tasks/index.ts's
 * taskDefinitionProblems, cron expressions lib/domain/tasks/schedule.ts's cronProblem.
 * Pure zod: refusals are worded by lib/domain/platform/refusals.ts.
 */
import { z } from 'zod';
import { LIMITS } from './domain/limits';
import { SESSION_ID_RE, SESSION_ID_RULE } from './domain/sessions';
import {
  AGENT_TYPES,
  CALENDAR_NAMES,
  DELIVERY_TYPES,
  MISFIRE_POLICIES,
  OVERLAP_POLICIES,
  PRIORITIES,
  TASK_DEFAULTS,
  TASK_ID_RE,
  TASK_ID_RULE,
  SECRET_NAME_RE,
  TRIGGER_TYPES,
} from './domain/tasks';
import { isTimeZone } from './domain/platform/zones';
import { mistyped, plainText, required } from './domain/platform/refusals';
import { cronProblem } from './domain/tasks/schedule';
import { RETRY_DEFAULTS, defaultMaximumIntervalS, type RetryPolicy } from './domain/tasks/retry';
import { DIGEST_DEFAULTS, DIGEST_STATUSES, fileNameProblem } from './domain/tasks/outputs';
import { ConditionTriggerSchema, DelayTriggerSchema, SIGNAL_TRIGGER_EXAMPLES } from './domain/tasks/trigger-schema';

// ---- fields -----------------------------------------------------------------------------

export const taskId = z.string(required()).regex(TASK_ID_RE, TASK_ID_RULE);
/** An agent id (who created a task): printable text, as a session's agent_id. */
export const createdBy = plainText(LIMITS.taskCreatedByMaxChars).min(1, 'must not be empty');
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
export const isoInstant = z.iso.datetime({ offset: true, error: 'must be an ISO-8601 date-time with a zone (Z or ±hh:mm)' });
export const timezone = z
  .string()
  .max(LIMITS.timeZoneMaxChars)
  .refine(isTimeZone, 'is not a known IANA time zone (e.g. Asia/Shanghai, America/New_York, UTC)');
export const cronExpression = z
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
