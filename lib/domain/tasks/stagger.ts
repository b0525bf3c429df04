/**
 * Stagger: a crowd of tasks on one instant (every user's "daily digest at 09:00") spread over
 * a window, as OpenClaw does for top-of-hour jobs and Temporal Schedules do with jitter. Each
 * task gets one fixed offset in [0, stagger_s), derived from its id, so its fire times move by
 * the same amount every time: the run ids stay one per fire time, a restart or another API
 * process computes the same times, and two tasks with the same cron land apart. The offset is
 * written into the stored trigger (`stagger_offset_s`) when the definition is made, so every
 * fire-time computation (API, scheduler activity) reads it from the trigger alone.
 *
 * The hash is FNV-1a over the id's UTF-16 code units, written here on purpose: 32 bits spread
 * well enough for a window of at most an hour, and this module stays sandbox-safe (no crypto).
 */
import type { CronTrigger } from './index';

/** FNV-1a, 32 bits. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** The task's offset within a window of `staggerS` seconds: whole seconds in [0, staggerS). */
export const staggerOffsetS = (taskId: string, staggerS: number): number => (staggerS >= 1 ? fnv1a(taskId) % Math.floor(staggerS) : 0);

/** A cron that fires on the hour (minute 0, second 0, or @hourly/@daily/…): the crowd the global default staggers. */
export function isTopOfHour(expression: string): boolean {
  const e = expression.trim().toLowerCase();
  if (e.startsWith('@')) return true;
  const f = e.split(/\s+/);
  return f.length === 6 ? f[0] === '0' && f[1] === '0' : f[0] === '0';
}

/**
 * The cron trigger as stored: `stagger_s` as given, else the operator's default for top-of-hour
 * expressions; the offset as given (a PATCH re-validates the stored one), else from the task id.
 */
export function withStagger(t: CronTrigger, taskId: string, defaultTopOfHourS: number): CronTrigger {
  const { stagger_s, stagger_offset_s, ...rest } = t;
  const window = stagger_s ?? (defaultTopOfHourS > 0 && isTopOfHour(t.expression) ? defaultTopOfHourS : 0);
  if (!window) return rest;
  return { ...rest, stagger_s: window, stagger_offset_s: stagger_offset_s ?? staggerOffsetS(taskId, window) };
}

/** Milliseconds a trigger's fire times are moved by. */
export const staggerMs = (t: { type: string; stagger_offset_s?: number }): number => (t.type === 'cron' ? (t.stagger_offset_s ?? 0) * 1000 : 0);
