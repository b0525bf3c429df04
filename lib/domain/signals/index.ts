/**
 * Named events (POST /v1/signals) and the `delay` trigger that waits after one. A signal has
 * a name, an optional scalar `value`, optional `values` (a flat object the dedupe key and
 * conditions read), the instant it happened, and an id that makes sending it idempotent.
 * Task runs emit signals of their own, `task_run:<task_id>`, so conditions can read run
 * outcomes; that prefix is reserved. Sandbox-safe: the scheduler workflow imports it.
 */
import { DomainError, ErrorCode, type FieldError } from '../errors';

export const SIGNAL_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;
export const SIGNAL_NAME_RULE = 'must be 1-128 characters: letters, digits, ".", "_", ":", "/", "-", starting with a letter or digit';
export const SIGNAL_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,199}$/;
export const SIGNAL_ID_RULE = 'must be 1-200 characters: letters, digits, ".", "_", ":", "/", "@", "-", starting with a letter or digit';
/** Signals a finished run emits; clients may not send names with this prefix. */
export const TASK_RUN_SIGNAL_PREFIX = 'task_run:';
export const taskRunSignalName = (taskId: string) => `${TASK_RUN_SIGNAL_PREFIX}${taskId}`;
/** One run emits one outcome signal, whatever retries its activity takes. */
export const taskRunSignalId = (runId: string) => `${TASK_RUN_SIGNAL_PREFIX}${runId}`;

/** The refusals of the signal API, by catalogue code (lib/domain/errors.ts). */
export const signalErrors = {
  /** The signal_id is the signal's idempotency key: the same id with other content is idempotency_key_reused. */
  idReused: (signalId: string) =>
    DomainError.field(ErrorCode.IdempotencyKeyReused, 'signal_id', 'was used for a different signal').withMessage(`signal_id ${signalId} is already stored with other content; nothing was stored`),
  notFound: (signalId: string) => DomainError.field(ErrorCode.NotFound, 'signal_id', 'is not a known signal').withMessage(`signal ${signalId} not found`),
};

export type SignalValue = number | string | boolean | null;

/** A signal as the scheduler workflows receive it. */
export interface SignalEvent {
  signal_id: string;
  name: string;
  value: SignalValue;
  values: Record<string, SignalValue>;
  /** When it happened (the sender's `at`, or when it was received). */
  atMs: number;
}

export interface DelayTrigger {
  type: 'delay';
  /** The signal name that starts the wait. */
  event: string;
  /** The wait, in seconds, from the event's time to the run. */
  seconds: number;
  /** Events with the same dedupe key arriving while a run waits join that run (the article's field; default false). */
  deduplicate: boolean;
  /** Template over the event ({{name}}, {{value}}, {{values.<field>}}); default: one key for every event of the name. */
  dedupe_key?: string;
}

const KEY_VAR_RE = /\{\{\s*([^}]*?)\s*\}\}/g;
const KEY_VAR_OK = /^(name|value|values\.[A-Za-z0-9_.-]+)$/;

/** Variables of a dedupe key template that are not {{name}}, {{value}} or {{values.<field>}}. */
export function unknownKeyVariables(template: string): string[] {
  return [...template.matchAll(KEY_VAR_RE)].map((m) => m[1]).filter((v) => !KEY_VAR_OK.test(v));
}

/**
 * The dedupe key of an event: the template rendered (a missing field renders empty), made
 * safe for a workflow id and cut to 100 characters. With deduplicate false every event is
 * its own key (its signal id).
 */
export function dedupeKey(t: DelayTrigger, e: SignalEvent): string {
  if (!t.deduplicate) return `id:${e.signal_id}`;
  const raw = (t.dedupe_key ?? '').replace(KEY_VAR_RE, (_, v: string) => {
    if (v === 'name') return e.name;
    if (v === 'value') return e.value === null ? '' : String(e.value);
    const x = e.values[v.slice('values.'.length)];
    return x === undefined || x === null ? '' : String(x);
  });
  return `key:${raw.replace(/[^A-Za-z0-9._:@-]/g, '_').slice(0, 100)}`;
}

/**
 * A delay run's id: the task, the dedupe key and the time of the event that opened the wait.
 * A re-delivered event (same id, same time) names the same run, which starts at most once.
 */
export const delayRunId = (taskId: string, key: string, openedAtMs: number) => `run/${taskId}/delay/${key}/${new Date(openedAtMs).toISOString()}`;

export function delayProblems(t: DelayTrigger): FieldError[] {
  const out: FieldError[] = [];
  if (t.dedupe_key !== undefined) {
    if (!t.deduplicate) out.push({ field: 'trigger.dedupe_key', reason: 'needs deduplicate: true' });
    const unknown = unknownKeyVariables(t.dedupe_key);
    if (unknown.length) out.push({ field: 'trigger.dedupe_key', reason: `uses unknown variable(s) ${unknown.map((v) => `{{${v}}}`).join(', ')}; known: {{name}}, {{value}}, {{values.<field>}}` });
  }
  return out;
}

/** Recent signal ids a scheduler remembers, to drop a re-delivered signal. */
export const SEEN_SIGNALS_KEPT = 1000;
