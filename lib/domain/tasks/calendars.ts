/**
 * Which local days a task runs on: its calendar's own date list and weekend rule, and the
 * named calendars. The Chinese ones come from the maintained `chinese-days` package's data
 * (statutory holidays, make-up working days on weekends (调休), from 2004 to its newest
 * year). Only the package's data file is read: its date functions mix the server's zone into
 * their answers (in America/Los_Angeles, `isWorkday('2026-10-12')` is false), and the server's
 * zone must never matter.
 *
 *  - `cn-workdays`: the official working days. Mon–Fri unless a statutory holiday, plus the
 *    make-up working days on weekends (e.g. Saturday 2026-10-10).
 *  - `cn-trading`: Mon–Fri minus statutory holidays, without make-up days. Exchanges do not
 *    open on make-up days. This is an approximation: extra exchange closures announced
 *    separately are not in the data.
 *
 * Outside the years the data covers, a named calendar treats Mon–Fri as working days and
 * says so (`noData`). Used by lib/domain/tasks/schedule.ts (fire times) and by the activities
 * (time context), never by workflows.
 */
import chineseDays from 'chinese-days/dist/chinese-days.json';
import { localDate } from '../platform/zones';
import type { Calendar, CalendarName, DayInfo } from './index';

interface DayData {
  /** Statutory days off: "English name,中文名,length". */
  holidays: Record<string, string>;
  /** Make-up working days on a weekend. */
  workdays: Record<string, string>;
}
const CN = chineseDays as DayData;

const yearsOf = (d: DayData) => Object.keys(d.holidays).map((k) => Number(k.slice(0, 4)));
const CN_YEARS = { first: Math.min(...yearsOf(CN)), last: Math.max(...yearsOf(CN)) };

/** The years each named calendar has official data for (docs/api.md names them). */
export const CALENDAR_COVERAGE: Record<CalendarName, { first: number; last: number }> = { 'cn-workdays': CN_YEARS, 'cn-trading': CN_YEARS };

/** "National Day,国庆节,3" → the name in the task's language. */
const holidayName = (raw: string, lang: 'en' | 'zh') => raw.split(',')[lang === 'zh' ? 1 : 0] ?? raw;

function namedDay(name: CalendarName, date: string, weekday: number, lang: 'en' | 'zh'): DayInfo {
  const year = Number(date.slice(0, 4));
  const cover = CALENDAR_COVERAGE[name];
  const weekend = weekday === 0 || weekday === 6;
  if (year < cover.first || year > cover.last) return weekend ? { run: false, why: 'weekend', noData: true } : { run: true, why: 'business_day', noData: true };
  const holiday = CN.holidays[date];
  if (holiday !== undefined) return { run: false, why: 'holiday', holiday: holidayName(holiday, lang) };
  if (!weekend) return { run: true, why: 'business_day' };
  const makeUp = CN.workdays[date];
  if (makeUp !== undefined && name === 'cn-workdays') return { run: true, why: 'makeup_workday', holiday: holidayName(makeUp, lang) };
  return { run: false, why: 'weekend' };
}

/** Whether the calendar lets the task run on the local day of `t` in `tz`, and why. */
export function isRunDay(cal: Calendar | undefined, t: number, tz: string, lang: 'en' | 'zh' = 'en'): DayInfo {
  const { date, weekday } = localDate(t, tz);
  if (cal?.holidays.includes(date)) return { run: false, why: 'holiday' };
  const weekend = weekday === 0 || weekday === 6;
  if (cal?.name) {
    const day = namedDay(cal.name, date, weekday, lang);
    // skip_weekends keeps its literal meaning: no Saturday or Sunday, make-up days included.
    return weekend && cal.skip_weekends && day.run ? { ...day, run: false } : day;
  }
  if (weekend) return { run: !cal?.skip_weekends, why: 'weekend' };
  return { run: true, why: 'business_day' };
}
