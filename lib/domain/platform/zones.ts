/**
 * Time-zone arithmetic over Intl (available in the workflow sandbox): a zone's offset at an
 * instant, the wall clock, local ISO times and dates. Shared sandbox-safe mechanics (issue 21):
 * fire times, conditions' windows, calendars and the time context all need it, so it is no
 * capability's room; living here, not in tasks.ts, it also breaks the tasks.ts ↔ conditions.ts circle.
 */
import { LIMITS } from '../limits';

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'short',
    });
    formatters.set(tz, f);
  }
  return f;
}

export function isTimeZone(tz: string): boolean {
  try {
    formatter(tz);
    return true;
  } catch {
    return false;
  }
}

/** The offset at `t` as Intl formats it: exact, and about 5 µs a call. */
function formattedOffsetMs(t: number, tz: string): number {
  const p: Record<string, string> = {};
  for (const part of formatter(tz).formatToParts(new Date(t))) p[part.type] = part.value;
  const ms = ((t % 1000) + 1000) % 1000;
  return Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day), Number(p.hour), Number(p.minute), Number(p.second)) + ms - t;
}

const HOUR_MS = 3_600_000;
/**
 * Offsets by zone and UTC hour: a number when the hour starts and ends on the same offset
 * (then every instant in it has that offset: no zone changes twice within an hour), null
 * when a change falls inside it (then each instant is formatted). A page of 50 tasks asks
 * for their next fire times, each of which probes several instants around the same hours:
 * this turns most of those probes into a map lookup. A pure function's memo, so it is safe
 * in the workflow sandbox too; bounded.
 */
const hourOffsets = new Map<string, number | null>();

/** UTC offset of `tz` at instant `t`, in milliseconds (east positive). */
export function zoneOffsetMs(t: number, tz: string): number {
  const hour = Math.floor(t / HOUR_MS);
  const key = `${hour} ${tz}`;
  let offset = hourOffsets.get(key);
  if (offset === undefined) {
    const start = formattedOffsetMs(hour * HOUR_MS, tz);
    offset = start === formattedOffsetMs((hour + 1) * HOUR_MS, tz) ? start : null;
    if (hourOffsets.size >= LIMITS.zoneOffsetHoursCached) hourOffsets.clear();
    hourOffsets.set(key, offset);
  }
  return offset ?? formattedOffsetMs(t, tz);
}

/** The local wall-clock time at instant `t` in `tz`, as milliseconds of a UTC-encoded date. */
export const wallClock = (t: number, tz: string): number => t + zoneOffsetMs(t, tz);

/** ISO-8601 local time with its offset: 2026-03-09T17:00:00+08:00. */
export function localIso(t: number, tz: string): string {
  const off = Math.round(zoneOffsetMs(t, tz) / 60000);
  const wall = new Date(wallClock(t, tz)).toISOString().slice(0, 19);
  const sign = off < 0 ? '-' : '+';
  const a = Math.abs(off);
  return `${wall}${sign}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
}

/** The local date (YYYY-MM-DD) and weekday (0 = Sunday) at `t` in `tz`. */
export function localDate(t: number, tz: string): { date: string; weekday: number } {
  const wall = new Date(wallClock(t, tz));
  return { date: wall.toISOString().slice(0, 10), weekday: wall.getUTCDay() };
}
