/**
 * What a task run's agent wakes up with: the time context (the instant, the local time, why
 * it woke, the day in its calendar), the run memory (its last runs), the system prompt with
 * the answer protocol's instructions, and the prompt template's variables. Sandbox-safe.
 */
import { LIMITS } from '../limits';
import { localDate, localIso, wallClock } from '../platform/zones';
import type { DayInfo, RunStatus, RunTrigger, TaskDefinition } from './index';
import type { TemplateVariable } from './templates';
import { triggerZone } from './trigger-zone';
import { describeTrigger, formatDuration, WEEKDAYS, WEEKDAYS_ZH } from './wording';

export const ANSWER_INSTRUCTIONS =
  'Answer with one JSON object and nothing else: {"task_id": string, "status": "success" | "failed" | "partial", "processed": integer >= 0, "errors": array, "summary": string, "next_action": string | null | {"type": "follow_up", "task": <a task definition as POST /v1/tasks takes it; trigger optional>, "delay_s"?: number}}. A follow_up hands work to another agent: it becomes a new task linked to this run.';


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
