/**
 * Fire times: croner parses the cron expression (5 or 6 fields, L, W, #, names, @daily …)
 * and steps through local wall-clock times; this module maps wall-clock times to instants
 * under Timekeeper's one declared time-zone policy (docs/api.md#time-zone-policy):
 *
 *  - a fixed-time job whose local time does not exist that day (spring forward) runs once,
 *    at the first valid instant after the gap (the transition itself), the same day;
 *  - a local time that occurs twice (fall back) runs once, at its first occurrence;
 *  - a job whose hour field is a wildcard or a step (`*`, `*\/n`, `@hourly`) follows real
 *    elapsed time: a repeated hour runs again, a skipped one is not made up.
 *
 * Before croner sees an expression, `normalise` applies the readings cron users know that
 * croner does not have: `?` in a day field is "no restriction" (Quartz/Spring), and
 * day-of-month and day-of-week combine as Vixie cron/cronie do (OR only when neither field
 * starts with `*`; a `*` or `*\/2` field ANDs). `3/20` (start at 3, every 20) is croner's
 * `sloppyRanges` reading, as Quartz, croniter and cron-parser have it.
 *
 * croner's own time-zone mode differs (it moves a skipped time by the length of the gap,
 * 02:30 → 03:30 in New York, and runs a repeated hour once even for `0 * * * *`), so it is
 * used in UTC on wall-clock values only. Used by the API (validation, preview, next fire
 * times) and by activities (the scheduler workflow asks a local activity); not by workflows.
 */
import { Cron } from 'croner';
import { DomainError } from '../errors';
import { LIMITS } from '../limits';
import { isRunDay } from './calendars';
import { staggerMs } from './stagger';
import { wallClock, zoneOffsetMs } from '../platform/zones';
import type { Calendar, CronTrigger, Trigger } from './index';

const HOUR = 3_600_000;

type CronSpec = Pick<CronTrigger, 'expression' | 'dom_dow'>;

/** An expression as croner is given it: the pattern and whether its day fields AND. */
interface Normalised {
  pattern: string;
  and: boolean;
}

/**
 * `?` (Quartz/Spring: no restriction) becomes `*` in the day fields and is refused elsewhere;
 * the day fields AND when `dom_dow` is `and` or either field starts with `*` (Vixie cron:
 * `0 0 *\/2 * 1` is odd-numbered days that are Mondays), else OR. Throws with the reason.
 */
function normalise(spec: CronSpec): Normalised {
  const e = spec.expression.trim();
  if (e.startsWith('@')) return { pattern: e, and: true };
  const f = e.split(/\s+/);
  const [dom, dow] = f.length === 6 ? [3, 5] : [2, 4];
  for (const [i, field] of f.entries()) {
    if (field.includes('?') && ((i !== dom && i !== dow) || field !== '?')) throw new Error(`'?' stands alone and only in the day-of-month or day-of-week field, not '${field}'`);
    if (/(^|,)\//.test(field)) throw new Error(`a step needs a start ('*\/n', 'a/n' or 'a-b/n'), not '${field}'`);
  }
  const days = f.map((field, i) => (i === dom || i === dow ? field.replace('?', '*') : field));
  const and = spec.dom_dow === 'and' || days[dom].startsWith('*') || days[dow].startsWith('*');
  return { pattern: days.join(' '), and };
}

/**
 * Compiled patterns, kept: compiling costs about as much as a list page's SQL, and one page
 * computes the next fire of each of its 50 tasks. A paused Cron's nextRun(date) keeps no
 * state, so one object serves every caller. Bounded; the oldest entry goes first.
 */
const compiled = new Map<string, Cron>();

function compile(spec: CronSpec): Cron {
  const { pattern, and } = normalise(spec);
  const key = `${and ? 'and' : 'or'} ${pattern}`;
  let c = compiled.get(key);
  if (!c) {
    // utcOffset 0, not timezone 'UTC': the same wall-clock arithmetic without an Intl
    // formatter per step (50 times faster), whatever the process's TZ.
    c = new Cron(pattern, { utcOffset: 0, paused: true, mode: '5-or-6-parts', domAndDow: and, sloppyRanges: true });
    if (compiled.size >= LIMITS.cronCompiledCacheMax) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, c);
  }
  return c;
}

/** Why an expression is not a cron expression we run, or undefined. */
export function cronProblem(expression: string): string | undefined {
  const e = expression.trim();
  const fields = e.split(/\s+/);
  if (!e.startsWith('@') && fields.length !== 5 && fields.length !== 6) return `must have 5 fields (minute first) or 6 (seconds first), not ${fields.length}`;
  try {
    const c = compile({ expression: e, dom_dow: 'or' });
    if (!c.nextRun(new Date(0))) return 'never fires';
    return undefined;
  } catch (err) {
    return `is not a valid cron expression: ${(err as Error).message}`;
  }
}

/** The hour field is `*` or a step (`*\/2`, `1/2`, `0-12/3`): such a job follows elapsed time across DST changes. */
function followsElapsedTime(expression: string): boolean {
  const e = expression.trim().toLowerCase();
  if (e.startsWith('@')) return e === '@hourly';
  const f = e.split(/\s+/);
  const hour = f.length === 6 ? f[2] : f[1];
  return hour === '*' || hour.includes('/');
}

/** The instants whose local time in `tz` is `wall`: none in a gap, two in an overlap. */
function instantsOf(wall: number, tz: string): { instants: number[]; gapEnd?: number } {
  const before = zoneOffsetMs(wall - 18 * HOUR, tz);
  const after = zoneOffsetMs(wall + 18 * HOUR, tz);
  const instants = [...new Set([wall - before, wall - after])].filter((t) => wallClock(t, tz) === wall).sort((a, b) => a - b);
  if (instants.length) return { instants };
  // A gap: the transition lies between the two readings; find its first instant.
  let lo = wall - Math.max(before, after);
  let hi = wall - Math.min(before, after);
  const target = zoneOffsetMs(hi, tz);
  while (hi - lo > 1000) {
    const mid = Math.floor((lo + hi) / 2000) * 1000;
    if (zoneOffsetMs(mid, tz) === target) hi = mid;
    else lo = mid;
  }
  return { instants: [], gapEnd: hi };
}

/** Fire instants of a cron trigger after `afterMs` (exclusive), at most `count`, none after `untilMs`. */
export function cronFireTimes(t: Pick<CronTrigger, 'expression' | 'dom_dow' | 'timezone'>, afterMs: number, count: number, untilMs = Infinity): number[] {
  const cron = compile(t);
  const tz = t.timezone;
  const elapsed = followsElapsedTime(t.expression);
  const found = new Set<number>();
  // The earliest wall time that can map to an instant after `afterMs` (in a repeated hour
  // that is earlier than the wall time at `afterMs`).
  let wall = afterMs + Math.min(zoneOffsetMs(afterMs - 18 * HOUR, tz), zoneOffsetMs(afterMs + 18 * HOUR, tz)) - 1000;
  for (let i = 0; i < 1_000_000; i++) {
    const next = cron.nextRun(new Date(wall));
    if (!next) break;
    wall = next.getTime();
    const { instants, gapEnd } = instantsOf(wall, tz);
    // A wall time in a gap: a fixed-time job runs at the gap's end; an elapsed-time job does
    // not make it up (its next wall time after the gap is its next run).
    const chosen = gapEnd !== undefined ? (elapsed ? [] : [gapEnd]) : elapsed ? instants : instants.slice(0, 1);
    for (const at of chosen) if (at > afterMs && at <= untilMs) found.add(at);
    // Every later wall time maps to an instant after wall - (largest offset): stop once that passes what we need.
    const earliestLater = wall - Math.max(zoneOffsetMs(wall - 18 * HOUR, tz), zoneOffsetMs(wall + 18 * HOUR, tz));
    if (earliestLater > untilMs) break;
    if (found.size >= count) {
      const sorted = [...found].sort((a, b) => a - b);
      if (earliestLater > sorted[count - 1]) return sorted.slice(0, count);
    }
  }
  return [...found].sort((a, b) => a - b).slice(0, count);
}

export interface FireContext {
  /** Interval `from_last_start`: the previous fire (or the task's creation) the next one counts from. */
  lastFireMs?: number;
}

/**
 * The trigger's fire times after `afterMs` (exclusive), skipping calendar days off; at most
 * `count`. A staggered cron's times are its own times plus the task's fixed offset
 * (lib/domain/tasks/stagger.ts); the calendar decides on the cron's own time, so a job staggered
 * past midnight keeps the day it belongs to.
 */
export function fireTimes(trigger: Trigger, calendar: Calendar | undefined, afterMs: number, count: number, untilMs = Infinity, ctx: FireContext = {}): number[] {
  const off = staggerMs(trigger);
  if (off === 0) return unstaggeredFireTimes(trigger, calendar, afterMs, count, untilMs, ctx);
  return unstaggeredFireTimes(trigger, calendar, afterMs - off, count, untilMs - off, ctx).map((t) => t + off);
}

function unstaggeredFireTimes(trigger: Trigger, calendar: Calendar | undefined, afterMs: number, count: number, untilMs: number, ctx: FireContext): number[] {
  const tz = trigger.type === 'cron' ? trigger.timezone : 'UTC';
  const out: number[] = [];
  let cursor = afterMs;
  // Calendar days off are filtered after the fact, so ask in rounds.
  for (let round = 0; round < 400 && out.length < count; round++) {
    const batch = rawFireTimes(trigger, cursor, count - out.length, untilMs, round === 0 ? ctx : {});
    if (batch.length === 0) break;
    for (const t of batch) if (isRunDay(calendar, t, tz).run) out.push(t);
    cursor = batch[batch.length - 1];
  }
  return out.slice(0, count);
}

function rawFireTimes(trigger: Trigger, afterMs: number, count: number, untilMs: number, ctx: FireContext): number[] {
  switch (trigger.type) {
    case 'delay':
    case 'condition':
      // Signal triggers have no fire times of their own: signals decide (workflows/tasks/signal-triggers.ts).
      return [];
    case 'cron':
      return cronFireTimes(trigger, afterMs, count, untilMs);
    case 'at': {
      const at = Date.parse(trigger.at);
      return at > afterMs && at <= untilMs ? [at] : [];
    }
    case 'interval': {
      const every = trigger.every_s * 1000;
      let first: number;
      if (trigger.mode === 'aligned') {
        const anchor = trigger.anchor ? Date.parse(trigger.anchor) : 0;
        first = anchor + (Math.floor((afterMs - anchor) / every) + 1) * every;
      } else {
        const base = ctx.lastFireMs ?? afterMs;
        first = base + every;
        if (first <= afterMs) first = base + (Math.floor((afterMs - base) / every) + 1) * every;
      }
      const out: number[] = [];
      for (let t = first; out.length < count && t <= untilMs; t += every) out.push(t);
      return out;
    }
  }
}

/**
 * The fire times a backfill of [fromMs, toMs] runs (both ends included), calendar days off
 * skipped, or a validation error naming the field: `from` not before `to`, a `to` in the
 * future (those fire times run on schedule), more than LIMITS.taskBackfillMax fire times, or
 * a trigger whose fire times depend on when runs really started (interval from_last_start),
 * which has no fixed past fire times to run.
 */
export function backfillFireTimes(trigger: Trigger, calendar: Calendar | undefined, fromMs: number, toMs: number, nowMs: number): number[] {
  if (fromMs >= toMs) throw DomainError.validation('from', 'must be before to');
  if (toMs > nowMs) throw DomainError.validation('to', 'is in the future; fire times still to come run on schedule');
  if (trigger.type === 'interval' && trigger.mode !== 'aligned') {
    throw DomainError.validation('trigger.mode', 'is from_last_start: its fire times follow the real starts of runs, so there are no past fire times to backfill (use mode aligned)');
  }
  const times = fireTimes(trigger, calendar, fromMs - 1, LIMITS.taskBackfillMax + 1, toMs);
  if (times.length > LIMITS.taskBackfillMax) throw DomainError.validation('to', `the range holds more than ${LIMITS.taskBackfillMax} fire times; split it into shorter ranges`);
  return times;
}

export const previewCount = (n: number | undefined): number => Math.min(n ?? LIMITS.schedulePreviewDefault, LIMITS.schedulePreviewMax);
