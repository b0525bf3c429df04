/**
 * Where a task run's output goes besides webhooks and sessions (issue 7's self-healing loop):
 * the `file` delivery's file-name template, the built-in `digest` agent's summary of the
 * needs-attention queue, and the `follow_up` next_action that hands work to another agent.
 * Pure and sandbox-safe; the I/O is in activities/task-outputs/.
 */
import type { FieldError } from '../errors';
import { localDate, wallClock } from '../platform/zones';
import type { TaskDefinition } from './index';
import { triggerZone } from './trigger-zone';

// ---- file delivery: one file name directly under ARTIFACTS_DIR --------------------------

/**
 * Variables a file name may use. All are stable for one run (they come from the run id and
 * its nominal time, never from the clock), so a retried delivery writes the same file, and
 * all render to [A-Za-z0-9._-] only, so no value can carry a separator.
 */
export const FILE_NAME_VARIABLES = ['task_id', 'date', 'time', 'run_key'] as const;
export type FileNameVariable = (typeof FILE_NAME_VARIABLES)[number];

/** A rendered file name: one segment, safe characters, not hidden (temp files start with "."). */
export const FILE_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;
const VAR_RE = /\{\{\s*([^}]*?)\s*\}\}/g;

export const defaultFileName = (format: 'markdown' | 'json') => `{{task_id}}-{{run_key}}.${format === 'markdown' ? 'md' : 'json'}`;

/** The part of a run id after `run/<task_id>/`, made file-safe: 2026-03-09T07-00-00-000Z, manual-2026-…. */
export function runKey(runId: string, taskId: string): string {
  const prefix = `run/${taskId}/`;
  const rest = runId.startsWith(prefix) ? runId.slice(prefix.length) : runId;
  return rest.replace(/[^A-Za-z0-9._-]+/g, '-');
}

export function fileNameVariables(task: TaskDefinition, runId: string, nominalMs: number): Record<FileNameVariable, string> {
  const tz = triggerZone(task.trigger);
  const wall = new Date(wallClock(nominalMs, tz)).toISOString();
  return { task_id: task.task_id, date: localDate(nominalMs, tz).date, time: wall.slice(11, 19).replace(/:/g, ''), run_key: runKey(runId, task.task_id) };
}

export function renderFileName(template: string, vars: Record<FileNameVariable, string>): string {
  return template.replace(VAR_RE, (_, name: string) => vars[name as FileNameVariable] ?? '');
}

/** Why a file-name template is refused, or null. Checked at create time on a sample rendering. */
export function fileNameProblem(template: string): string | null {
  const unknown = [...template.matchAll(VAR_RE)].map((m) => m[1]).filter((v) => !(FILE_NAME_VARIABLES as readonly string[]).includes(v));
  if (unknown.length) return `uses unknown variable(s) ${unknown.map((v) => `{{${v}}}`).join(', ')}; known: ${FILE_NAME_VARIABLES.join(', ')}`;
  const sample = renderFileName(template, { task_id: 'task', date: '2026-01-01', time: '000000', run_key: '2026-01-01T00-00-00-000Z' });
  if (!FILE_NAME_RE.test(sample) || sample === '.' || sample === '..') {
    return 'must be one file name directly inside ARTIFACTS_DIR: letters, digits, ".", "_", "-" and {{variables}}, starting with a letter or digit (no folders, "..", "%", "\\" or absolute paths)';
  }
  return null;
}

// ---- the digest agent: a summary of what failed and why --------------------------------

/** Run states a digest may summarise; `needs_attention` is the queue of runs that failed for good. */
export const DIGEST_STATUSES = ['needs_attention', 'failed', 'skipped'] as const;
export type DigestStatus = (typeof DIGEST_STATUSES)[number];

export interface DigestAgent {
  type: 'digest';
  /** Look back this far; default: since the digest's own previous run started (first run: one day). */
  since_s?: number;
  statuses: DigestStatus[];
  /** Only these tasks (default: every task but the digest itself). */
  task_ids?: string[];
  /** Runs listed in the answer's `errors` at most; the count covers all of them. */
  max_items: number;
  persona?: undefined;
  prompt_template?: undefined;
}

export const DIGEST_DEFAULTS = { statuses: ['needs_attention'] as DigestStatus[], max_items: 50, first_window_s: 24 * 3600 };

/** A run the digest found. */
export interface DigestItem {
  run_id: string;
  task_id: string;
  status: string;
  scheduled_at: string;
  reason: string | null;
}

/** The summary: how many, which tasks, and the newest reason of each, in the task's language. */
export function digestSummary(items: DigestItem[], total: number, sinceMs: number, lang: 'en' | 'zh'): string {
  const since = new Date(sinceMs).toISOString();
  if (total === 0) return lang === 'zh' ? `自 ${since} 以来没有需要处理的失败运行。` : `No runs needing attention since ${since}.`;
  const byTask = new Map<string, DigestItem[]>();
  for (const i of items) byTask.set(i.task_id, [...(byTask.get(i.task_id) ?? []), i]);
  const lines = [...byTask].map(([task, runs]) => {
    const last = runs[0];
    return lang === 'zh'
      ? `- ${task}：${runs.length} 次，最近一次 ${last.scheduled_at}：${last.reason ?? '无原因'}`
      : `- ${task}: ${runs.length} run${runs.length === 1 ? '' : 's'}, newest ${last.scheduled_at}: ${last.reason ?? 'no reason recorded'}`;
  });
  const more = total > items.length ? (lang === 'zh' ? `（另有 ${total - items.length} 次未列出）` : ` (${total - items.length} more not listed)`) : '';
  const head =
    lang === 'zh'
      ? `自 ${since} 以来有 ${total} 次运行需要处理，涉及 ${byTask.size} 个任务${more}：`
      : `${total} run${total === 1 ? '' : 's'} needing attention since ${since}, in ${byTask.size} task${byTask.size === 1 ? '' : 's'}${more}:`;
  return [head, ...lines].join('\n');
}

// ---- next_action: a follow-up task -----------------------------------------------------

/**
 * A next_action that hands work to another agent: a task definition (the POST /v1/tasks
 * body) created with a link to the run that asked for it. Without a trigger it runs once,
 * `delay_s` after the parent run (default 1 s).
 */
export interface FollowUpAction {
  type: 'follow_up';
  task: Record<string, unknown>;
  delay_s?: number;
}

export const isFollowUp = (a: unknown): a is FollowUpAction => typeof a === 'object' && a !== null && (a as { type?: unknown }).type === 'follow_up';

/** Problems of a digest agent that need more than its shape. */
export function digestProblems(d: TaskDefinition): FieldError[] {
  const a = d.agent as unknown as DigestAgent;
  if (a.type !== 'digest') return [];
  return (a.task_ids ?? []).includes(d.task_id) ? [{ field: 'agent.task_ids', reason: 'must not list the digest task itself' }] : [];
}
