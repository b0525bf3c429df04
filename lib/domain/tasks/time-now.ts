/**
 * time_now (GET /v1/time): the time context a task run's agent wakes up with, for an agent
 * that asks between runs: the instant, the local time in the user's zone, and whether today
 * is a working day in a named calendar. The same lines as the run's time context
 * (lib/domain/tasks/index.ts nowLine, todayLine) and the same calendar rule (lib/domain/tasks/calendars.ts
 * isRunDay), so the two never disagree.
 */
import { isRunDay } from './calendars';
import { localDate, localIso } from '../platform/zones';
import { WEEKDAYS, nowLine, todayLine, type CalendarName, type DayInfo } from './index';

export interface TimeNow {
  instant: string;
  timezone: string;
  local_time: string;
  date: string;
  weekday: string;
  calendar: CalendarName | null;
  working_day: boolean;
  day: DayInfo['why'];
  holiday?: string;
  no_data?: boolean;
  /** The same two lines a task run's time context opens and ends with. */
  text: string;
}

export function timeNow(nowMs: number, timezone: string, calendar: CalendarName | undefined, lang: 'en' | 'zh' = 'en'): TimeNow {
  // No calendar named: a plain week, Saturday and Sunday off (a task without a calendar runs every day, which is not "working").
  const day = isRunDay({ ...(calendar ? { name: calendar } : {}), holidays: [], skip_weekends: !calendar }, nowMs, timezone, lang);
  const { date, weekday } = localDate(nowMs, timezone);
  const whose = calendar ? `the ${calendar} calendar` : 'a plain Monday-to-Friday week (no calendar named)';
  return {
    instant: new Date(nowMs).toISOString(),
    timezone,
    local_time: localIso(nowMs, timezone),
    date,
    weekday: WEEKDAYS[weekday],
    calendar: calendar ?? null,
    working_day: day.run,
    day: day.why,
    ...(day.holiday ? { holiday: day.holiday } : {}),
    ...(day.noData ? { no_data: true } : {}),
    text: `${nowLine(nowMs, timezone, lang)}\n${todayLine(nowMs, timezone, day, lang, whose)}`,
  };
}
