/**
 * What a task's scheduler does with signals when its trigger is `delay` or `condition`, as
 * pure state transitions (the scheduler workflow keeps the state, durable in its history,
 * and carries it across continue-as-new):
 *
 *  - takeSignal: a signal id seen before is dropped (a re-delivery); a delay event opens a
 *    wait (or, deduplicated, joins the one waiting for its key); a condition takes the value
 *    in and is evaluated at the signal's time;
 *  - dueAt: timers that came due (for_s deadlines, window edges, cooldown ends) are
 *    evaluated at their own instants, and the waiting runs whose time has come are handed
 *    out to start;
 *  - nextWakeMs: when the scheduler must look again without a signal.
 *
 * Run ids: a delay run is `run/<task>/delay/<dedupe key>/<time of the event that opened
 * the wait>`, a condition run `run/<task>/<nominal time>`; both come from the data only, so
 * a re-delivered signal or a replayed decision names the same run, which starts at most once.
 */
import { step, initialConditionState, type ConditionState, type ConditionTrigger } from './conditions';
import { SEEN_SIGNALS_KEPT, dedupeKey, delayRunId, type DelayTrigger, type SignalEvent } from '../signals';
import { applySignal, listensTo } from './conditions';
import { formatDuration, runId as runIdAt } from './index';

export interface PendingRun {
  key: string;
  runId: string;
  nominalMs: number;
  trigger: 'delay' | 'condition';
  cause: string;
  /** Further events that joined this run (deduplicate). */
  joined: number;
}

export interface SignalTriggerState {
  /** The trigger this state belongs to (JSON): a changed trigger starts afresh. */
  triggerJson: string;
  seen: string[];
  pending: PendingRun[];
  condition?: ConditionState;
  nextCheckMs: number | null;
}

type SignalTrigger = DelayTrigger | ConditionTrigger;

/** The state to go on with: the carried one if it belongs to this trigger, else a fresh one (keeping the seen ids). */
export function signalStateFor(prev: SignalTriggerState | undefined, t: SignalTrigger): SignalTriggerState {
  const json = JSON.stringify(t);
  if (prev && prev.triggerJson === json) return prev;
  // Evaluation starts at the epoch, not now: signals taken in again after a restart are evaluated at their own times.
  return { triggerJson: json, seen: prev?.seen ?? [], pending: [], condition: t.type === 'condition' ? initialConditionState(0) : undefined, nextCheckMs: null };
}

const iso = (ms: number) => new Date(ms).toISOString();

function conditionStep(t: ConditionTrigger, st: SignalTriggerState, atMs: number, taskId: string, why: string): SignalTriggerState {
  const r = step(t, st.condition!, atMs);
  const next: SignalTriggerState = { ...st, condition: r.state, nextCheckMs: r.nextCheckMs };
  if (r.firedAtMs === undefined) return next;
  const nominalMs = r.firedAtMs + t.delay_s * 1000;
  const readings = Object.entries(r.state.latest)
    .map(([name, x]) => `signal "${name}" = ${JSON.stringify(x.value)} at ${iso(x.atMs)}`)
    .join(', ');
  const cause = `at ${iso(r.firedAtMs)}, ${why}; latest readings: ${readings || 'none'}${t.delay_s ? `; then waited delay_s ${t.delay_s} s` : ''}`;
  return { ...next, pending: [...next.pending, { key: `condition:${nominalMs}`, runId: runIdAt(taskId, nominalMs), nominalMs, trigger: 'condition', cause, joined: 0 }] };
}

export function takeSignal(t: SignalTrigger, st0: SignalTriggerState, e: SignalEvent, taskId: string): SignalTriggerState {
  if (st0.seen.includes(e.signal_id) || !listensTo(t, e.name)) return st0;
  const st: SignalTriggerState = { ...st0, seen: [...st0.seen, e.signal_id].slice(-SEEN_SIGNALS_KEPT) };
  const what = `signal "${e.name}"${e.value === null ? '' : ` = ${JSON.stringify(e.value)}`} (${e.signal_id}) at ${iso(e.atMs)}`;
  if (t.type === 'condition') return conditionStep(t, { ...st, condition: applySignal(t, st.condition!, e) }, e.atMs, taskId, `on the ${what}`);
  const key = dedupeKey(t, e);
  // Joins only a wait still open at the event's time (one taken in again after a restart may be later).
  const waiting = t.deduplicate ? st.pending.find((p) => p.key === key && e.atMs < p.nominalMs) : undefined;
  if (waiting) return { ...st, pending: st.pending.map((p) => (p === waiting ? { ...p, joined: p.joined + 1 } : p)) };
  const nominalMs = e.atMs + t.seconds * 1000;
  const cause = `the ${what}, ${formatDuration(t.seconds * 1000)} before`;
  return { ...st, pending: [...st.pending, { key, runId: delayRunId(taskId, key, e.atMs), nominalMs, trigger: 'delay', cause, joined: 0 }] };
}

/** Evaluates timers that came due by `nowMs` at their own instants, and hands out the runs due to start. */
export function dueAt(t: SignalTrigger, st0: SignalTriggerState, nowMs: number, taskId: string): { state: SignalTriggerState; start: PendingRun[] } {
  let st = st0;
  // Each step moves time forward (a deadline, an edge, a cooldown end); bounded anyway.
  for (let i = 0; t.type === 'condition' && st.nextCheckMs !== null && st.nextCheckMs <= nowMs && i < 100; i++) {
    st = conditionStep(t, st, st.nextCheckMs, taskId, 'when its for_s, window or cooldown came due');
  }
  const start = st.pending.filter((p) => p.nominalMs <= nowMs).map((p) => (p.joined ? { ...p, cause: `${p.cause}; ${p.joined} more event${p.joined === 1 ? '' : 's'} with its dedupe key joined this run` } : p));
  return { state: { ...st, pending: st.pending.filter((p) => p.nominalMs > nowMs) }, start };
}

export function nextWakeMs(st: SignalTriggerState): number | null {
  const times = [...st.pending.map((p) => p.nominalMs), ...(st.nextCheckMs === null ? [] : [st.nextCheckMs])];
  return times.length ? Math.min(...times) : null;
}
