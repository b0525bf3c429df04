/**
 * The `condition` trigger: a predicate over signal values and task-run outcomes, optionally
 * limited to a time window in the task's zone, combined with `all`/`any`; when it holds the
 * task runs `delay_s` later, and it can fire again only after `cooldown_s` (with cooldown 0,
 * only after it was false in between). Pure and sandbox-safe: the scheduler workflow keeps
 * a ConditionState (durable in its history) and calls applySignal / step; timers come from
 * step's nextCheckMs. Every decision is made at an instant derived from the data (a signal's
 * time, a for_s deadline, a window boundary, a cooldown end), never from when the workflow
 * happened to wake, so a fire's run id (its nominal time) is the same however late it runs.
 */
import type { FieldError } from '../errors';
import { LIMITS } from '../limits';
import { taskRunSignalName, type SignalEvent, type SignalValue } from '../signals';
// A function import both ways (tasks.ts checks conditions with conditionProblems): resolved at call time.
import { wallClock } from '../platform/zones';
import type { Trigger } from './index';

export const COMPARE_OPS = ['>', '>=', '<', '<=', '==', '!='] as const;
export type CompareOp = (typeof COMPARE_OPS)[number];

/** `error_rate > 0.05` held for `for_s` seconds; `field` reads `values.<field>` instead of `value`. */
export interface SignalLeaf {
  signal: string;
  op: CompareOp;
  value: number | string | boolean;
  field?: string;
  /** Default 0 (the contract fills it in). */
  for_s?: number;
}
/** Task `task_id`'s last `consecutive` finished runs all had `status` (from its task_run:<task_id> signals). */
export interface RunsLeaf {
  task_id: string;
  status: 'success' | 'failed';
  consecutive: number;
}
/** Local time inside [from, to) on one of `days` (0 = Sunday), in the trigger's zone; from > to spans midnight. */
export interface WindowLeaf {
  window: { days: number[]; from: string; to: string };
}
export interface AllNode {
  all: ConditionNode[];
}
export interface AnyNode {
  any: ConditionNode[];
}
export type ConditionNode = SignalLeaf | RunsLeaf | WindowLeaf | AllNode | AnyNode;

export interface ConditionTrigger {
  type: 'condition';
  when: ConditionNode;
  /** IANA zone of the windows and of the time context (default UTC). */
  timezone: string;
  /** Wait between the condition holding and the run. */
  delay_s: number;
  /** After a fire, the condition cannot fire again for this long; 0: only after it was false in between. */
  cooldown_s: number;
}

/** What the scheduler remembers between signals. JSON-safe (it crosses continue-as-new). */
export interface ConditionState {
  /** The newest signal of each name the condition reads; a value holds until the next one. */
  latest: Record<string, { value: SignalValue; values: Record<string, SignalValue>; atMs: number }>;
  /** Per signal leaf (by its path in the tree): since when its comparison has held, or null. */
  since: Record<string, number | null>;
  /** The last instant evaluated: evaluation never goes back in time. */
  evalMs: number;
  lastFireMs: number | null;
  falseSinceFire: boolean;
}

export const isAll = (n: ConditionNode): n is AllNode => 'all' in n;
export const isAny = (n: ConditionNode): n is AnyNode => 'any' in n;
export const isSignalLeaf = (n: ConditionNode): n is SignalLeaf => 'signal' in n;
export const isRunsLeaf = (n: ConditionNode): n is RunsLeaf => 'task_id' in n;
export const isWindowLeaf = (n: ConditionNode): n is WindowLeaf => 'window' in n;

export const initialConditionState = (nowMs: number): ConditionState => ({ latest: {}, since: {}, evalMs: nowMs, lastFireMs: null, falseSinceFire: true });

function walk(n: ConditionNode, path: string, f: (leaf: ConditionNode, path: string) => void): void {
  if (isAll(n)) n.all.forEach((c, i) => walk(c, `${path}.${i}`, f));
  else if (isAny(n)) n.any.forEach((c, i) => walk(c, `${path}.${i}`, f));
  else f(n, path);
}

/** The signal names a condition reads (task-run leaves read task_run:<task_id>). */
export function conditionSignalNames(n: ConditionNode): string[] {
  const out = new Set<string>();
  walk(n, 'when', (l) => {
    if (isSignalLeaf(l)) out.add(l.signal);
    else if (isRunsLeaf(l)) out.add(taskRunSignalName(l.task_id));
  });
  return [...out];
}

/** The signal names a task's trigger reads: a delay's event, a condition's signals; none for clock triggers. */
export function triggerSignalNames(t: Trigger): string[] {
  if (t.type === 'delay') return [t.event];
  if (t.type === 'condition') return conditionSignalNames(t.when);
  return [];
}
export const listensTo = (t: Trigger, name: string): boolean => triggerSignalNames(t).includes(name);

function compare(actual: SignalValue | undefined, op: CompareOp, expected: number | string | boolean): boolean {
  if (actual === undefined || actual === null) return false;
  switch (op) {
    case '==':
      return actual === expected;
    case '!=':
      return actual !== expected;
    default: {
      if (typeof actual !== 'number' || typeof expected !== 'number') return false;
      return op === '>' ? actual > expected : op === '>=' ? actual >= expected : op === '<' ? actual < expected : actual <= expected;
    }
  }
}

const leafHolds = (l: SignalLeaf, s: ConditionState): boolean => {
  const x = s.latest[l.signal];
  if (!x) return false;
  return compare(l.field === undefined ? x.value : x.values[l.field], l.op, l.value);
};

/**
 * Takes a signal in: it becomes the name's latest value (one older than the latest is
 * ignored), and every signal leaf on that name starts or ends its "held since".
 */
export function applySignal(t: ConditionTrigger, s: ConditionState, e: SignalEvent): ConditionState {
  const prev = s.latest[e.name];
  if (prev && e.atMs < prev.atMs) return s;
  const next: ConditionState = { ...s, latest: { ...s.latest, [e.name]: { value: e.value, values: e.values, atMs: e.atMs } }, since: { ...s.since } };
  walk(t.when, 'when', (l, path) => {
    if (!isSignalLeaf(l) || l.signal !== e.name) return;
    if (!leafHolds(l, next)) next.since[path] = null;
    else if (next.since[path] === null || next.since[path] === undefined) next.since[path] = e.atMs;
  });
  return next;
}

// ---- windows -------------------------------------------------------------------------------

const DAY = 86_400_000;
const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

export function inWindow(w: WindowLeaf['window'], t: number, tz: string): boolean {
  const local = wallClock(t, tz);
  const day = new Date(local).getUTCDay();
  const m = Math.floor((local % DAY) / 60_000);
  const from = minutesOf(w.from);
  const to = minutesOf(w.to);
  if (from < to) return w.days.includes(day) && m >= from && m < to;
  // Spans midnight: the evening part belongs to `day`, the morning part to the day before.
  return (w.days.includes(day) && m >= from) || (w.days.includes((day + 6) % 7) && m < to);
}

/** The instant whose local time is `localMs` (approximately across a DST gap: the window edge moves with it). */
const instantOf = (localMs: number, tz: string) => {
  const first = localMs - (wallClock(localMs, tz) - localMs);
  return localMs - (wallClock(first, tz) - first);
};

/** The first window edge (a local `from` or `to` on any day) after `t`: the window may change there. */
export function nextWindowEdge(w: WindowLeaf['window'], t: number, tz: string): number {
  const today = Math.floor(wallClock(t, tz) / DAY) * DAY;
  let best = Infinity;
  for (let d = -1; d <= 8; d++) {
    for (const hhmm of [w.from, w.to]) {
      const at = instantOf(today + d * DAY + minutesOf(hhmm) * 60_000, tz);
      if (at > t && at < best) best = at;
    }
  }
  return best;
}

// ---- evaluation ----------------------------------------------------------------------------

interface Verdict {
  holds: boolean;
  /** The next instant this verdict may change without a new signal, or Infinity. */
  nextMs: number;
}

function evalNode(n: ConditionNode, path: string, s: ConditionState, t: number, tz: string): Verdict {
  if (isAll(n) || isAny(n)) {
    const kids = (isAll(n) ? n.all : n.any).map((c, i) => evalNode(c, `${path}.${i}`, s, t, tz));
    return { holds: isAll(n) ? kids.every((k) => k.holds) : kids.some((k) => k.holds), nextMs: Math.min(...kids.map((k) => k.nextMs)) };
  }
  if (isSignalLeaf(n)) {
    const since = s.since[path];
    if (!leafHolds(n, s) || since === null || since === undefined) return { holds: false, nextMs: Infinity };
    const due = since + (n.for_s ?? 0) * 1000;
    return t >= due ? { holds: true, nextMs: Infinity } : { holds: false, nextMs: due };
  }
  if (isRunsLeaf(n)) {
    const x = s.latest[taskRunSignalName(n.task_id)];
    return { holds: !!x && x.values.status === n.status && Number(x.values.streak) >= n.consecutive, nextMs: Infinity };
  }
  return { holds: inWindow(n.window, t, tz), nextMs: nextWindowEdge(n.window, t, tz) };
}

export function evaluate(c: ConditionTrigger, s: ConditionState, t: number): Verdict {
  return evalNode(c.when, 'when', s, t, c.timezone);
}

export interface Step {
  state: ConditionState;
  /** The instant the condition fired at (the run's nominal time is this plus delay_s), if it did. */
  firedAtMs?: number;
  /** When to evaluate again without a new signal, or null. */
  nextCheckMs: number | null;
}

/** Evaluates at `atMs` (never before the last evaluation) and decides whether it fires. */
export function step(c: ConditionTrigger, s0: ConditionState, atMs: number): Step {
  const t = Math.max(atMs, s0.evalMs);
  const v = evaluate(c, s0, t);
  const s = { ...s0, evalMs: t };
  const cooldownEnd = s.lastFireMs === null ? -Infinity : s.lastFireMs + c.cooldown_s * 1000;
  let firedAtMs: number | undefined;
  if (!v.holds) s.falseSinceFire = true;
  else if (s.lastFireMs === null || (t >= cooldownEnd && (c.cooldown_s > 0 || s.falseSinceFire))) {
    firedAtMs = t;
    s.lastFireMs = t;
    s.falseSinceFire = false;
  }
  let next = v.nextMs;
  // Still holding when the cooldown ends: it fires again then (cooldown 0 waits for a false first).
  if (v.holds && c.cooldown_s > 0 && s.lastFireMs !== null) {
    const end = s.lastFireMs + c.cooldown_s * 1000;
    if (end > t) next = Math.min(next, end);
  }
  return { state: s, firedAtMs, nextCheckMs: Number.isFinite(next) ? next : null };
}

// ---- rules and words -----------------------------------------------------------------------

const HHMM = /^([01]\d|2[0-3]):[0-5]\d$|^24:00$/;

/** Rules beyond shape; each names its field (prefix `trigger.when`). */
export function conditionProblems(c: ConditionTrigger): FieldError[] {
  const out: FieldError[] = [];
  let nodes = 0;
  const visit = (n: ConditionNode, path: string, depth: number) => {
    nodes++;
    if (depth > LIMITS.conditionDepthMax) out.push({ field: path, reason: `nests all/any deeper than ${LIMITS.conditionDepthMax} levels` });
    if (isAll(n) || isAny(n)) (isAll(n) ? n.all : n.any).forEach((k, i) => visit(k, `${path}.${isAll(n) ? 'all' : 'any'}.${i}`, depth + 1));
    else if (isSignalLeaf(n) && !['==', '!='].includes(n.op) && typeof n.value !== 'number') out.push({ field: `${path}.value`, reason: `must be a number for op ${n.op} (== and != also compare strings and booleans)` });
    else if (isWindowLeaf(n)) {
      for (const k of ['from', 'to'] as const) if (!HHMM.test(n.window[k])) out.push({ field: `${path}.window.${k}`, reason: 'must be a local time HH:MM (00:00 to 24:00)' });
      if (n.window.from === n.window.to) out.push({ field: `${path}.window.to`, reason: 'must differ from window.from' });
    }
  };
  visit(c.when, 'trigger.when', 1);
  if (nodes > LIMITS.conditionNodesMax) out.push({ field: 'trigger.when', reason: `has ${nodes} nodes; at most ${LIMITS.conditionNodesMax}` });
  return out;
}

const DAY_NAMES = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

function nodeWords(n: ConditionNode): string {
  if (isAll(n)) return n.all.length === 1 ? nodeWords(n.all[0]) : `(${n.all.map(nodeWords).join(' and ')})`;
  if (isAny(n)) return n.any.length === 1 ? nodeWords(n.any[0]) : `(${n.any.map(nodeWords).join(' or ')})`;
  if (isSignalLeaf(n)) return `${n.signal}${n.field ? `.${n.field}` : ''} ${n.op} ${JSON.stringify(n.value)}${n.for_s ? ` for ${n.for_s} s` : ''}`;
  if (isRunsLeaf(n)) return `task ${n.task_id} ${n.status === 'failed' ? 'failed' : 'succeeded'} ${n.consecutive} time${n.consecutive === 1 ? '' : 's'} in a row`;
  const days = n.window.days.length === 7 ? 'every day' : n.window.days.map((d) => DAY_NAMES[d]).join(',');
  return `between ${n.window.from} and ${n.window.to} on ${days}`;
}

/** E.g. `when (error_rate > 0.05 for 180 s and between 09:00 and 18:00 on Mon,Tue,Wed,Thu,Fri) in Asia/Shanghai, run 30 s later; cooldown 600 s`. */
export function describeCondition(c: ConditionTrigger): string {
  const words = nodeWords(c.when).replace(/^\((.*)\)$/, '$1');
  return `when ${words} (${c.timezone}), run ${c.delay_s ? `${c.delay_s} s later` : 'at once'}; ${c.cooldown_s ? `cooldown ${c.cooldown_s} s` : 'fires again only after it was false'}`;
}
