/**
 * Scheduled agent tasks: the task model (the scheduler article's section 3.4), trigger kinds,
 * overlap and misfire policies, run ids, the agent answer's shape and the domain rules of a
 * definition. Re-exported from their own modules: prompt templates (templates.ts), tasks in
 * words (wording.ts) and what an agent wakes up with (wake-context.ts). One
 * definition, used by the API contracts, the scheduler and run workflows, the activities
 * and the store. Sandbox-safe: no I/O, no zod (the zod contracts are in api/tasks/contract.ts),
 * no cron library (fire times are computed in ./schedule.ts, outside workflows).
 */
import { DomainError, ErrorCode, type FieldError } from '../errors';
import { LIMITS } from '../limits';
import { isTimeZone } from '../platform/zones';
import { retryProblems, retryWarnings, type RetryPolicy } from './retry';
import type { DigestAgent, FollowUpAction } from './outputs';
import { conditionProblems, type ConditionTrigger } from './conditions';
import { delayProblems, type DelayTrigger } from '../signals';
import { TEMPLATE_VARIABLES, unknownTemplateVariables } from './templates';

export * from './templates';
export * from './wording';
export * from './wake-context';
export * from './trigger-zone';

/** A secret's environment variable name, as a task's `api_key_env` or `token_env` may give it (lib/config.ts readSecret reads it). */
export const SECRET_NAME_RE = /^[A-Z][A-Z0-9_]{0,127}$/;

// ---- the model -----------------------------------------------------------------------

export const TASK_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const TASK_ID_RULE = 'must be 1-128 characters: letters, digits, ".", "_", "-", starting with a letter or digit';

export interface CronTrigger {
  type: 'cron';
  /** 5 fields (minute first), 6 fields (seconds first), or @daily/@hourly/...; L, W, # and names allowed. */
  expression: string;
  /** IANA zone; default UTC, never the server's zone. */
  timezone: string;
  /** How day-of-month and day-of-week combine: `or` (Vixie cron, default) or `and`. */
  dom_dow: 'or' | 'and';
  /** The article's field: a late fire inside the misfire grace still runs (default true). */
  tolerant: boolean;
  /**
   * Spread of a crowd of tasks on one instant (OpenClaw, Temporal Schedules' jitter): every
   * fire time is moved later by `stagger_offset_s`, a fixed offset below `stagger_s` that the
   * API derives from the task id (lib/domain/tasks/stagger.ts). Absent: no stagger.
   */
  stagger_s?: number;
  /** The task's own offset within `stagger_s`, in whole seconds; the same for every fire time. */
  stagger_offset_s?: number;
}
export interface IntervalTrigger {
  type: 'interval';
  every_s: number;
  /** `from_last_start`: each fire `every_s` after the previous one; `aligned`: on multiples of `every_s` from `anchor`. */
  mode: 'from_last_start' | 'aligned';
  /** ISO-8601 instant the aligned grid starts at (default the Unix epoch). */
  anchor?: string;
}
export interface AtTrigger {
  type: 'at';
  /** One ISO-8601 instant with offset; the task completes after it ran. */
  at: string;
}
export type { ConditionTrigger, DelayTrigger };
export type Trigger = CronTrigger | IntervalTrigger | AtTrigger | DelayTrigger | ConditionTrigger;
export const TRIGGER_TYPES = ['cron', 'interval', 'at', 'delay', 'condition'] as const;
/** Triggers that fire on signals (POST /v1/signals, task-run outcomes) rather than on the clock. */
export const isSignalTrigger = (t: Trigger): t is DelayTrigger | ConditionTrigger => t.type === 'delay' || t.type === 'condition';

export interface OpenAiAgent {
  type: 'openai';
  /** An OpenAI-compatible API base, e.g. http://127.0.0.1:11434/v1 (POST <base_url>/chat/completions). */
  base_url: string;
  model: string;
  /** Name of the environment variable holding the key; the key itself is never stored. */
  api_key_env?: string;
  persona?: string;
  prompt_template: string;
  temperature?: number;
}
export interface WebhookAgent {
  type: 'webhook';
  /** Receives the run context as JSON and answers with the protocol object. */
  url: string;
  persona?: string;
  prompt_template: string;
  /** When set, requests carry X-Timekeeper-Signature: sha256=<hex HMAC of the body>. */
  secret?: string;
}
/**
 * An OpenClaw Gateway: POST <url><hooks_path>/agent starts an agent turn with `message`; the
 * agent reports its result through POST /v1/runs/{run_id}/result (lib/domain/tasks/results.ts).
 */
export interface OpenClawAgent {
  type: 'openclaw';
  /** The Gateway's base URL, e.g. http://127.0.0.1:18789. */
  url: string;
  /** The Gateway's hooks.path (default /hooks). */
  hooks_path: string;
  /** Name of the environment variable holding the Gateway's hooks.token; the token itself is never stored. */
  token_env: string;
  persona?: string;
  prompt_template: string;
  /** Routes the turn to this configured agent (hooks.allowedAgentIds must allow it). */
  agent_id?: string;
  /** The agent session to run in (the Gateway must allow request session keys). */
  session_key?: string;
  /** Model override, as OpenClaw's `model` (e.g. openai/gpt-5.2-mini). */
  model?: string;
  /** Whether OpenClaw also sends the agent's reply to a channel (default false: the result comes back here). */
  deliver: boolean;
}
/** The built-in digest agent (lib/domain/tasks/outputs.ts): summarises the needs-attention queue, no LLM. */
export type AgentTarget = OpenAiAgent | WebhookAgent | OpenClawAgent | DigestAgent;
export const AGENT_TYPES = ['openai', 'webhook', 'openclaw', 'digest'] as const;

export interface WebhookDelivery {
  type: 'webhook';
  url: string;
  format: 'json' | 'markdown';
  secret?: string;
}
export interface SessionDelivery {
  type: 'session';
  session_id: string;
}
/** A file directly under ARTIFACTS_DIR, named by a template (lib/domain/tasks/outputs.ts), written atomically per run. */
export interface FileDelivery {
  type: 'file';
  path: string;
  format: 'markdown' | 'json';
}
/** A row in the task_results table (schema/008_task_results.sql), once per run. */
export interface TableDelivery {
  type: 'table';
}
export type DeliveryTarget = WebhookDelivery | SessionDelivery | FileDelivery | TableDelivery;
export const DELIVERY_TYPES = ['webhook', 'session', 'file', 'table'] as const;

/** Either style of retry settings (explicit list or exponential): lib/domain/tasks/retry.ts. */
export type { RetryPolicy } from './retry';
export { backoffBeforeAttempt } from './retry';

export const OVERLAP_POLICIES = ['skip', 'buffer_one', 'allow', 'cancel_previous'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];
export const MISFIRE_POLICIES = ['skip', 'run_latest', 'run_all'] as const;
export type MisfirePolicy = (typeof MISFIRE_POLICIES)[number];
export const PRIORITIES = ['core', 'default'] as const;
export type Priority = (typeof PRIORITIES)[number];

/** Named calendars (lib/domain/tasks/calendars.ts, from the chinese-days package's data). */
export const CALENDAR_NAMES = ['cn-workdays', 'cn-trading'] as const;
export type CalendarName = (typeof CALENDAR_NAMES)[number];

/** Days a task does not run on: a named calendar's days off, a user-given list, weekends. */
export interface Calendar {
  /** `cn-workdays`: China's official working days (make-up weekend days included); `cn-trading`: Mon–Fri minus statutory holidays. */
  name?: CalendarName;
  /** Local dates (YYYY-MM-DD, in the trigger's zone) to skip, on top of the named calendar. */
  holidays: string[];
  /** Also skip Saturdays and Sundays (make-up working days included). */
  skip_weekends: boolean;
}

/** What a task's calendar says about one local day (lib/domain/tasks/calendars.ts isRunDay). */
export interface DayInfo {
  run: boolean;
  why: 'business_day' | 'holiday' | 'weekend' | 'makeup_workday';
  /** The statutory holiday (or the one a make-up day belongs to), in the task's language. */
  holiday?: string;
  /** The named calendar has no official data for this year: Mon–Fri counted as working days. */
  noData?: boolean;
}

export interface AlertTarget {
  url: string;
  secret?: string;
}

/** A task as stored: every default filled in. */
export interface TaskDefinition {
  task_id: string;
  name: string;
  trigger: Trigger;
  agent: AgentTarget;
  delivery: DeliveryTarget[];
  retry: RetryPolicy;
  timeout_s: number;
  overlap: OverlapPolicy;
  max_concurrency: number;
  priority: Priority;
  misfire: MisfirePolicy;
  misfire_grace_s: number;
  calendar?: Calendar;
  session_id?: string;
  memory_runs: number;
  auto_disable_after: number;
  alert?: AlertTarget;
  tags: string[];
  /** Language of the time context and run memory the agent reads. */
  lang: 'en' | 'zh';
  /** Set on a follow-up task: the run whose next_action asked for it (never taken from a request body). */
  parent_run_id?: string;
  /** The agent the task belongs to: API keys bound to agents see and change only theirs (a follow-up inherits it). */
  agent_id?: string;
}

export const TASK_DEFAULTS = {
  timeout_s: 900,
  overlap: 'skip' as OverlapPolicy,
  max_concurrency: 1,
  priority: 'default' as Priority,
  misfire: 'run_latest' as MisfirePolicy,
  misfire_grace_s: 60,
  memory_runs: 3,
  auto_disable_after: 10,
  retry: { max_attempts: 1, backoff_seconds: [] as number[] },
  lang: 'en' as const,
};

/** Task statuses, from its newest run: pending until one ran. */
export const TASK_STATUSES = ['pending', 'running', 'success', 'retry', 'failed', 'skipped'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export const RUN_STATUSES = ['running', 'retry', 'success', 'failed', 'skipped'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
/** How the log's reason of a run cancelled by a newer one (overlap cancel_previous) begins; such a run is not a failure of the task. */
export const CANCELLED_REASON_PREFIX = 'cancelled:';
/** How the log's reason of a run found lost begins: its workflow closed without logging a finish, or never started. */
export const LOST_REASON_PREFIX = 'lost:';
/** Why a run exists. */
export type RunTrigger = 'schedule' | 'manual' | 'misfire' | 'backfill' | 'delay' | 'condition';

export const TaskAction = {
  Create: 'create',
  Update: 'update',
  Pause: 'pause',
  Resume: 'resume',
  Delete: 'delete',
  AutoDisable: 'auto_disable',
  Complete: 'complete',
} as const;
export type TaskAction = (typeof TaskAction)[keyof typeof TaskAction];

// ---- ids -------------------------------------------------------------------------------

export const schedulerWorkflowId = (taskId: string) => `task/${taskId}`;
/** One run per fire time: the id is the task and its nominal UTC time, so a fire time runs at most once. */
export const runId = (taskId: string, nominalMs: number) => `run/${taskId}/${new Date(nominalMs).toISOString()}`;
/** A manual trigger (run now) gets an id of its own, apart from the schedule's fire times. */
export const manualRunId = (taskId: string, nowMs: number) => `run/${taskId}/manual/${new Date(nowMs).toISOString()}`;

export const taskErrors = {
  notFound: (id: string) => DomainError.field(ErrorCode.NotFound, 'task_id', 'is not a known task').withMessage(`task ${id} not found`),
  exists: (id: string) => DomainError.field(ErrorCode.TaskExists, 'task_id', 'is already used').withMessage(`task ${id} already exists`),
  deleted: (id: string) => DomainError.field(ErrorCode.TaskDeleted, 'task_id', 'is deleted').withMessage(`task ${id} was deleted; its history and runs stay readable`),
  runNotFound: (id: string) => DomainError.field(ErrorCode.NotFound, 'run_id', 'is not a known run').withMessage(`run ${id} not found`),
};

// ---- domain rules beyond shape (the contract checks shape; ./schedule.ts checks cron) ----

/** Rules the zod contract cannot express alone; each problem names its field. */
export function taskDefinitionProblems(d: TaskDefinition): FieldError[] {
  const out: FieldError[] = [];
  const t = d.trigger;
  if (t.type === 'cron' && !isTimeZone(t.timezone)) out.push({ field: 'trigger.timezone', reason: `is not a known IANA time zone: ${t.timezone}` });
  if (t.type === 'cron' && t.stagger_offset_s !== undefined && t.stagger_offset_s >= (t.stagger_s ?? 0)) {
    out.push({ field: 'trigger.stagger_offset_s', reason: `must be below stagger_s (${t.stagger_s ?? 'not set'})` });
  }
  if (t.type === 'interval' && t.every_s < LIMITS.taskMinIntervalS) out.push({ field: 'trigger.every_s', reason: `must be at least ${LIMITS.taskMinIntervalS}` });
  if (t.type === 'delay') out.push(...delayProblems(t));
  if (t.type === 'condition') {
    if (!isTimeZone(t.timezone)) out.push({ field: 'trigger.timezone', reason: `is not a known IANA time zone: ${t.timezone}` });
    else out.push(...conditionProblems(t));
  }
  out.push(...retryProblems(d.retry));
  const unknown = unknownTemplateVariables(d.agent.prompt_template ?? '');
  if (unknown.length) out.push({ field: 'agent.prompt_template', reason: `uses unknown variable(s) ${unknown.map((v) => `{{${v}}}`).join(', ')}; known: ${TEMPLATE_VARIABLES.join(', ')}` });
  for (const [i, h] of (d.calendar?.holidays ?? []).entries()) {
    if (Number.isNaN(Date.parse(`${h}T00:00:00Z`))) out.push({ field: `calendar.holidays.${i}`, reason: 'is not a date (YYYY-MM-DD)' });
  }
  return out;
}

/** What a definition holds that is stored as sent but has no effect; the create or PATCH answer lists it. */
export function taskDefinitionWarnings(d: TaskDefinition): FieldError[] {
  return retryWarnings(d.retry);
}

// ---- the agent answer protocol (the article's schedule_invoke) ------------------------

export interface AgentAnswer {
  task_id: string;
  status: 'success' | 'failed' | 'partial';
  processed: number;
  errors: unknown[];
  summary: string;
  /** Recorded as given; a `follow_up` object also creates a follow-up task linked to this run. */
  next_action: string | FollowUpAction | null;
}
