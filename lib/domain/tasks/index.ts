/**
 * Scheduled agent tasks: the task model (the scheduler article's section 3.4), trigger kinds,
 * overlap and misfire policies, run ids, prompt-template variables, the agent answer
 * protocol, and the texts an agent wakes up with (time context, run memory). One
 * definition, used by the API contracts, the scheduler and run workflows, the activities
 * and the store. Sandbox-safe: no I/O, no zod (the zod contracts are in api/tasks/contract.ts),
 * no cron library (fire times are computed in lib/schedule.ts, outside workflows).
 */
import { DomainError, ErrorCode, type FieldError } from '../errors';
import { LIMITS } from '../limits';
import { isTimeZone, localDate, localIso, wallClock } from '../platform/zones';
import { retryProblems, retryWarnings, type RetryPolicy } from './retry';
import type { DigestAgent, FollowUpAction } from './outputs';
import { conditionProblems, describeCondition, type ConditionTrigger } from './conditions';
import { delayProblems, type DelayTrigger } from '../signals';

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

// ---- time zones: lib/domain/platform/zones.ts --------------------------------------------

export const triggerZone = (t: Trigger): string => (t.type === 'cron' || t.type === 'condition' ? t.timezone : 'UTC');

// ---- prompt templates ------------------------------------------------------------------

/** The variables a prompt template may use as {{name}}. */
export const TEMPLATE_VARIABLES = ['task_id', 'task_name', 'now_local', 'now_utc', 'date', 'timezone', 'scheduled_at', 'attempt', 'last_run_at', 'run_id'] as const;
export type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];
const VAR_RE = /\{\{\s*([^}]*?)\s*\}\}/g;

export function unknownTemplateVariables(template: string): string[] {
  return [...template.matchAll(VAR_RE)].map((m) => m[1]).filter((v) => !(TEMPLATE_VARIABLES as readonly string[]).includes(v));
}

export function renderTemplate(template: string, vars: Record<TemplateVariable, string>): string {
  return template.replace(VAR_RE, (_, name: string) => vars[name as TemplateVariable] ?? '');
}

// ---- domain rules beyond shape (the contract checks shape; lib/schedule.ts checks cron) -

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

export const ANSWER_INSTRUCTIONS =
  'Answer with one JSON object and nothing else: {"task_id": string, "status": "success" | "failed" | "partial", "processed": integer >= 0, "errors": array, "summary": string, "next_action": string | null | {"type": "follow_up", "task": <a task definition as POST /v1/tasks takes it; trigger optional>, "delay_s"?: number}}. A follow_up hands work to another agent: it becomes a new task linked to this run.';

// ---- what the agent wakes up with ------------------------------------------------------

export interface RunContext {
  task: TaskDefinition;
  runId: string;
  trigger: RunTrigger;
  nominalMs: number;
  startedMs: number;
  /** Of this attempt. */
  nowMs: number;
  attempt: number;
  /** Start of the task's previous run, if any. */
  lastRunMs?: number;
  /** Why a signal-triggered run woke, in words (the event, or the condition that held). */
  cause?: string;
}

/** A past run as the execution log holds it. */
export interface RunMemoryEntry {
  nominal_ms: number;
  status: RunStatus;
  processed: number | null;
  error_count: number | null;
  summary: string | null;
  delivered: boolean;
}

export function formatDuration(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} days ${h % 24} h`;
}

export const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const WEEKDAYS_ZH = ['星期日', '星期一', '星期二', '星期三', '星期四', '星期五', '星期六'];

/** The trigger in words, e.g. `cron "0 17 * * 1-5" in Asia/Shanghai: at 17:00 on Monday to Friday`. */
export function describeTrigger(t: Trigger): string {
  switch (t.type) {
    case 'cron':
      return `cron "${t.expression}" in ${t.timezone}${describeCron(t.expression, t.dom_dow) ? `: ${describeCron(t.expression, t.dom_dow)}` : ''}${t.stagger_offset_s ? `, staggered by ${formatDuration(t.stagger_offset_s * 1000)}` : ''}`;
    case 'interval':
      return t.mode === 'aligned'
        ? `every ${formatDuration(t.every_s * 1000)}, aligned to the clock from ${t.anchor ?? '1970-01-01T00:00:00Z'}`
        : `every ${formatDuration(t.every_s * 1000)} after the previous start`;
    case 'at':
      return `once, at ${new Date(t.at).toISOString()}`;
    case 'delay':
      return `${formatDuration(t.seconds * 1000)} after each "${t.event}" signal${t.deduplicate ? `, one run per ${t.dedupe_key ? `dedupe key ${t.dedupe_key}` : 'wait'} for events that arrive while it waits` : ''}`;
    case 'condition':
      return describeCondition(t);
  }
}

const NICKNAMES: Record<string, string> = {
  '@yearly': 'once a year, at 00:00 on 1 January',
  '@annually': 'once a year, at 00:00 on 1 January',
  '@monthly': 'at 00:00 on the first day of every month',
  '@weekly': 'at 00:00 every Sunday',
  '@daily': 'every day at 00:00',
  '@midnight': 'every day at 00:00',
  '@hourly': 'at the start of every hour',
};
const DOW_NAMES: Record<string, number> = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };

function dowWords(f: string): string | undefined {
  const day = (s: string) => {
    const n = /^\d$/.test(s) ? Number(s) % 7 : DOW_NAMES[s.toLowerCase()];
    return n === undefined ? undefined : WEEKDAYS[n];
  };
  const parts = f.split(',').map((p) => {
    const r = /^(\w+)-(\w+)$/.exec(p);
    if (r) return day(r[1]) && day(r[2]) ? `${day(r[1])} to ${day(r[2])}` : undefined;
    return day(p);
  });
  return parts.every(Boolean) ? parts.join(', ') : undefined;
}

/** A best-effort reading of common expressions; undefined where words would only repeat the fields. */
export function describeCron(expression: string, domDow: 'or' | 'and' = 'or'): string | undefined {
  const e = expression.trim();
  if (e.startsWith('@')) return NICKNAMES[e.toLowerCase()];
  const f = e.split(/\s+/);
  if (f.length !== 5 && f.length !== 6) return undefined;
  const [sec, min, hour, dom, mon, dow] = f.length === 6 ? f : ['0', ...f];
  const num = (s: string) => /^\d+$/.test(s);
  let time: string | undefined;
  if (num(min) && num(hour) && num(sec)) time = `at ${hour.padStart(2, '0')}:${min.padStart(2, '0')}${sec !== '0' ? `:${sec.padStart(2, '0')}` : ''}`;
  else if (hour === '*' && num(min) && num(sec)) time = `at minute ${min}${sec !== '0' ? `, second ${sec}` : ''} of every hour`;
  else if (hour === '*' && min === '*' && num(sec)) time = `at second ${sec} of every minute`;
  else if (hour === '*' && /^\*\/\d+$/.test(min) && num(sec)) time = `every ${min.slice(2)} minutes`;
  else if (hour === '*' && min === '*' && /^\*\/\d+$/.test(sec)) time = `every ${sec.slice(2)} seconds`;
  else if (hour === '*' && min === '*' && sec === '*') time = 'every second';
  if (!time) return undefined;
  const days: string[] = [];
  if (dom !== '*' && dom !== '?') days.push(dom === 'L' ? 'on the last day of the month' : `on day ${dom} of the month`);
  if (dow !== '*' && dow !== '?') {
    const w = dowWords(dow);
    if (!w) return undefined;
    days.push(`on ${w}`);
  }
  // Vixie cron: the day fields OR only when neither starts with `*` (lib/domain/tasks/schedule.ts normalise).
  const and = domDow === 'and' || dom.startsWith('*') || dow.startsWith('*');
  const day = days.length === 2 ? `${days[0]} ${and ? 'and' : 'or'} ${days[1]}` : days[0] ?? (num(hour) ? 'every day' : '');
  const month = mon === '*' ? '' : ` in month ${mon}`;
  return `${time}${day ? ` ${day}` : ''}${month}`;
}

/** The time context's first line: the local time in `tz` and the instant (also time_now's, lib/domain/tasks/time-now.ts). */
export function nowLine(nowMs: number, tz: string, lang: 'en' | 'zh'): string {
  return lang === 'zh'
    ? `当前时间：${localIso(nowMs, tz)}（${tz}），UTC ${new Date(nowMs).toISOString()}。`
    : `Current time: ${localIso(nowMs, tz)} (${tz}), ${new Date(nowMs).toISOString()} (UTC).`;
}

/** The time context's last line: what the calendar says about the local day (also time_now's). `whose`: "the task's calendar", "the cn-workdays calendar". */
export function todayLine(nowMs: number, tz: string, dayInfo: DayInfo, lang: 'en' | 'zh', whose = "the task's calendar"): string {
  const { date, weekday } = localDate(nowMs, tz);
  return lang === 'zh' ? `今天（${date}，${WEEKDAYS_ZH[weekday]}）${dayWords(dayInfo, 'zh')}。` : `Today (${date}, ${WEEKDAYS[weekday]}) is ${dayWords(dayInfo, 'en')} in ${whose}.`;
}

/** The time context the agent's system prompt carries: now, why it woke, how late, since when. */
export function buildTimeContext(c: RunContext, dayInfo: DayInfo): string {
  const tz = triggerZone(c.task.trigger);
  const lateness = c.startedMs - c.nominalMs;
  if (c.task.lang === 'zh') {
    return [
      nowLine(c.nowMs, tz, 'zh'),
      `任务：${c.task.name}（${c.task.task_id}），运行编号 ${c.runId}。`,
      `唤醒原因：${wokeWhy(c.trigger, 'zh')}${c.cause ? `（${c.cause}）` : ''}，触发规则 ${describeTrigger(c.task.trigger)}；计划时间 ${new Date(c.nominalMs).toISOString()}${staggerWords(c, 'zh')}，实际开始 ${new Date(c.startedMs).toISOString()}，延迟 ${formatDuration(lateness)}。`,
      c.lastRunMs === undefined ? '这是该任务的第一次运行。' : `距上次运行：${formatDuration(c.nowMs - c.lastRunMs)}（上次 ${new Date(c.lastRunMs).toISOString()}）。`,
      `第 ${c.attempt} 次尝试，共 ${c.task.retry.max_attempts} 次。`,
      todayLine(c.nowMs, tz, dayInfo, 'zh'),
    ].join('\n');
  }
  return [
    nowLine(c.nowMs, tz, 'en'),
    `Task: ${c.task.name} (${c.task.task_id}), run ${c.runId}.`,
    `Woke because: ${wokeWhy(c.trigger, 'en')}${c.cause ? ` (${c.cause})` : ''}, trigger ${describeTrigger(c.task.trigger)}; scheduled for ${new Date(c.nominalMs).toISOString()}${staggerWords(c, 'en')}, started ${new Date(c.startedMs).toISOString()}, ${formatDuration(lateness)} late.`,
    c.lastRunMs === undefined ? 'This is the first run of this task.' : `Time since the last run: ${formatDuration(c.nowMs - c.lastRunMs)} (last run started ${new Date(c.lastRunMs).toISOString()}).`,
    `Attempt ${c.attempt} of ${c.task.retry.max_attempts}.`,
    todayLine(c.nowMs, tz, dayInfo, 'en'),
  ].join('\n');
}

/** A staggered schedule's fire time: the cron's own time and the task's offset ("", when not staggered or not from the schedule). */
function staggerWords(c: RunContext, lang: 'en' | 'zh'): string {
  const t = c.task.trigger;
  const off = t.type === 'cron' ? (t.stagger_offset_s ?? 0) : 0;
  if (!off || (c.trigger !== 'schedule' && c.trigger !== 'misfire' && c.trigger !== 'backfill')) return '';
  const cronAt = new Date(c.nominalMs - off * 1000).toISOString();
  return lang === 'zh' ? `（cron 时间 ${cronAt}，错峰 ${formatDuration(off * 1000)}）` : ` (the cron's time ${cronAt}, staggered by ${formatDuration(off * 1000)})`;
}

/** The day in words: "a make-up working day (调休) for National Day", "是节假日（国庆节）". */
function dayWords(d: DayInfo, lang: 'en' | 'zh'): string {
  if (lang === 'zh') {
    const w = { holiday: `是节假日${d.holiday ? `（${d.holiday}）` : ''}`, weekend: '是周末', business_day: '是工作日', makeup_workday: `是调休上班日${d.holiday ? `（${d.holiday}调休）` : ''}` }[d.why];
    return d.noData ? `${w}（该年份尚无官方节假日数据，按周一至周五计）` : w;
  }
  const w = {
    holiday: `a holiday${d.holiday ? ` (${d.holiday})` : ''}`,
    weekend: 'a weekend day',
    business_day: 'a business day',
    makeup_workday: `a make-up working day (调休: a weekend day worked in exchange for ${d.holiday ?? 'a holiday'})`,
  }[d.why];
  return d.noData ? `${w} (no official holiday data for this year yet: Monday to Friday count as working days)` : w;
}

function wokeWhy(t: RunTrigger, lang: 'en' | 'zh'): string {
  const en = {
    schedule: 'its schedule fired',
    manual: 'someone triggered it by hand (run now)',
    misfire: 'a fire time missed while the scheduler was down is being caught up',
    backfill: 'a backfill (a past fire time run on request)',
    delay: 'a delay after an event ended',
    condition: 'its condition held',
  };
  const zh = { schedule: '定时触发', manual: '手动触发（立即运行）', misfire: '补跑停机期间错过的触发', backfill: '回填', delay: '事件后的延迟到期', condition: '触发条件成立' };
  return (lang === 'zh' ? zh : en)[t];
}

/** The last runs in natural language, newest first, as the article's 上次…执行成功，共抓取数据128条… */
export function buildRunMemory(entries: RunMemoryEntry[], tz: string, lang: 'en' | 'zh' = 'en'): string {
  if (entries.length === 0) return lang === 'zh' ? '没有以往的执行记录。' : 'No earlier runs.';
  const when = (ms: number) => new Date(wallClock(ms, tz)).toISOString().slice(0, 16).replace('T', ' ');
  if (lang === 'zh') {
    const status = { success: '执行成功', failed: '执行失败', retry: '等待重试', running: '仍在运行', skipped: '被跳过' };
    return entries
      .map((e, i) => {
        const bits = [`${i === 0 ? '上次' : '更早'}${when(e.nominal_ms)}${status[e.status]}`];
        if (e.processed !== null) bits.push(`共处理数据${e.processed}条`);
        if (e.error_count !== null) bits.push(`其中异常${e.error_count}条`);
        if (e.status === 'success') bits.push(e.delivered ? '已推送' : '未推送');
        return bits.join('，') + (e.summary ? `。摘要：${e.summary}` : '。');
      })
      .join('\n');
  }
  const status = { success: 'succeeded', failed: 'failed', retry: 'was waiting to retry', running: 'was still running', skipped: 'was skipped' };
  return entries
    .map((e) => {
      const bits = [`${when(e.nominal_ms)} (${tz}): ${status[e.status]}`];
      if (e.processed !== null) bits.push(`processed ${e.processed}`);
      if (e.error_count !== null) bits.push(`${e.error_count} error${e.error_count === 1 ? '' : 's'}`);
      if (e.status === 'success') bits.push(e.delivered ? 'delivered' : 'not delivered');
      return `- ${bits.join(', ')}.${e.summary ? ` Summary: ${e.summary}` : ''}`;
    })
    .join('\n');
}

/** The system prompt: persona, time context, run memory and the answer protocol. */
export function buildSystemPrompt(c: RunContext, timeContext: string, memory: string): string {
  const zh = c.task.lang === 'zh';
  return [
    c.task.agent.persona ? (zh ? `你是${c.task.agent.persona}。` : `You are ${c.task.agent.persona}.`) : '',
    zh ? '## 时间上下文' : '## Time context',
    timeContext,
    zh ? '## 执行记忆（最近几次运行）' : '## Run memory (recent runs)',
    memory,
    zh ? '## 输出协议' : '## Answer protocol',
    ANSWER_INSTRUCTIONS + ` task_id is "${c.task.task_id}".`,
  ]
    .filter(Boolean)
    .join('\n');
}

export function templateVariables(c: RunContext): Record<TemplateVariable, string> {
  const tz = triggerZone(c.task.trigger);
  return {
    task_id: c.task.task_id,
    task_name: c.task.name,
    now_local: localIso(c.nowMs, tz),
    now_utc: new Date(c.nowMs).toISOString(),
    date: localDate(c.nowMs, tz).date,
    timezone: tz,
    scheduled_at: new Date(c.nominalMs).toISOString(),
    attempt: String(c.attempt),
    last_run_at: c.lastRunMs === undefined ? '' : new Date(c.lastRunMs).toISOString(),
    run_id: c.runId,
  };
}

/** The execution log keeps a summary cut to a few hundred characters; full outputs go elsewhere. */
export const cutSummary = (s: string): string => (s.length <= LIMITS.taskSummaryChars ? s : s.slice(0, LIMITS.taskSummaryChars - 1) + '…');
