/** Tasks in words: a trigger and a cron expression as a person reads them, durations, weekday names. Sandbox-safe. */
import type { Trigger } from './index';
import { describeCondition } from './conditions';

export function formatDuration(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} days ${h % 24} h`;
}

export const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
export const WEEKDAYS_ZH = ['星期日', '星期一', '星期二', '星期三', '星期四', '星期五', '星期六'];

/** The trigger in words, e.g. `cron "0 17 * * 1-5" in Asia/Shanghai: at 17:00 on Monday to Friday`. */
export function describeTrigger(t: Trigger): string {
  switch (t.type) {
    case 'cron':
      return `cron "${t.expression}" in ${t.timezone}${describeCron(t.expression, t.dom_dow) ? `: ${describeCron(t.expression, t.dom_dow)}` : ''}${t.stagger_offset_s ? `, staggered by ${formatDuration(t.stagger_offset_s * 1000)}` : ''}`;
    case 'interval':
      return t.mode === 'aligned'
        ? `every ${formatDuration(t.every_s * 1000)}, aligned to the clock from ${t.anchor ?? '1970-01-01T00:00:00Z'}`
        : `every ${formatDuration(t.every_s * 1000)} after the previous start`;
    case 'at':
      return `once, at ${new Date(t.at).toISOString()}`;
    case 'delay':
      return `${formatDuration(t.seconds * 1000)} after each "${t.event}" signal${t.deduplicate ? `, one run per ${t.dedupe_key ? `dedupe key ${t.dedupe_key}` : 'wait'} for events that arrive while it waits` : ''}`;
    case 'condition':
      return describeCondition(t);
  }
}

const NICKNAMES: Record<string, string> = {
  '@yearly': 'once a year, at 00:00 on 1 January',
  '@annually': 'once a year, at 00:00 on 1 January',
  '@monthly': 'at 00:00 on the first day of every month',
  '@weekly': 'at 00:00 every Sunday',
  '@daily': 'every day at 00:00',
  '@midnight': 'every day at 00:00',
  '@hourly': 'at the start of every hour',
};
const DOW_NAMES: Record<string, number> = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };

function dowWords(f: string): string | undefined {
  const day = (s: string) => {
    const n = /^\d$/.test(s) ? Number(s) % 7 : DOW_NAMES[s.toLowerCase()];
    return n === undefined ? undefined : WEEKDAYS[n];
  };
  const parts = f.split(',').map((p) => {
    const r = /^(\w+)-(\w+)$/.exec(p);
    if (r) return day(r[1]) && day(r[2]) ? `${day(r[1])} to ${day(r[2])}` : undefined;
    return day(p);
  });
  return parts.every(Boolean) ? parts.join(', ') : undefined;
}

/** A best-effort reading of common expressions; undefined where words would only repeat the fields. */
export function describeCron(expression: string, domDow: 'or' | 'and' = 'or'): string | undefined {
  const e = expression.trim();
  if (e.startsWith('@')) return NICKNAMES[e.toLowerCase()];
  const f = e.split(/\s+/);
  if (f.length !== 5 && f.length !== 6) return undefined;
  const [sec, min, hour, dom, mon, dow] = f.length === 6 ? f : ['0', ...f];
  const num = (s: string) => /^\d+$/.test(s);
  let time: string | undefined;
  if (num(min) && num(hour) && num(sec)) time = `at ${hour.padStart(2, '0')}:${min.padStart(2, '0')}${sec !== '0' ? `:${sec.padStart(2, '0')}` : ''}`;
  else if (hour === '*' && num(min) && num(sec)) time = `at minute ${min}${sec !== '0' ? `, second ${sec}` : ''} of every hour`;
  else if (hour === '*' && min === '*' && num(sec)) time = `at second ${sec} of every minute`;
  else if (hour === '*' && /^\*\/\d+$/.test(min) && num(sec)) time = `every ${min.slice(2)} minutes`;
  else if (hour === '*' && min === '*' && /^\*\/\d+$/.test(sec)) time = `every ${sec.slice(2)} seconds`;
  else if (hour === '*' && min === '*' && sec === '*') time = 'every second';
  if (!time) return undefined;
  const days: string[] = [];
  if (dom !== '*' && dom !== '?') days.push(dom === 'L' ? 'on the last day of the month' : `on day ${dom} of the month`);
  if (dow !== '*' && dow !== '?') {
    const w = dowWords(dow);
    if (!w) return undefined;
    days.push(`on ${w}`);
  }
  // Vixie cron: the day fields OR only when neither starts with `*` (lib/domain/tasks/schedule.ts normalise).
  const and = domDow === 'and' || dom.startsWith('*') || dow.startsWith('*');
  const day = days.length === 2 ? `${days[0]} ${and ? 'and' : 'or'} ${days[1]}` : days[0] ?? (num(hour) ? 'every day' : '');
  const month = mon === '*' ? '' : ` in month ${mon}`;
  return `${time}${day ? ` ${day}` : ''}${month}`;
}
