/**
 * Named calendars with real 2026 dates (the chinese-days package's data): cn-workdays runs on
 * a make-up Saturday (调休) and skips Golden Week weekdays; cn-trading skips both. Also the
 * time context's words for those days, years without official data, and the contract.
 */
import { CreateTaskBody } from '../../api/tasks/contract';
import { CALENDAR_COVERAGE, isRunDay } from '../../lib/domain/tasks/calendars';
import { fireTimes } from '../../lib/domain/tasks/schedule';
import { buildTimeContext, type Calendar, type TaskDefinition } from '../../lib/domain/tasks';

const SH = 'Asia/Shanghai';
/** 09:00 in Shanghai on a local date. */
const at9 = (date: string) => Date.parse(`${date}T01:00:00Z`);
const cal = (name: Calendar['name'], more: Partial<Calendar> = {}): Calendar => ({ name, holidays: [], skip_weekends: false, ...more });
const iso = (ts: number[]) => ts.map((t) => new Date(t).toISOString().slice(0, 10));

test('the data covers 2026', () => {
  expect(CALENDAR_COVERAGE['cn-workdays'].last).toBeGreaterThanOrEqual(2026);
});

describe('cn-workdays', () => {
  test.each([
    ['Saturday 2026-10-10, a make-up working day for National Day, runs', '2026-10-10', { run: true, why: 'makeup_workday', holiday: 'National Day' }],
    ['Saturday 2026-02-14, a make-up working day for the Spring Festival, runs', '2026-02-14', { run: true, why: 'makeup_workday', holiday: 'Spring Festival' }],
    ['Monday 2026-10-05 in Golden Week is skipped', '2026-10-05', { run: false, why: 'holiday', holiday: 'National Day' }],
    ['Wednesday 2026-10-07, a day off in lieu, is skipped', '2026-10-07', { run: false, why: 'holiday', holiday: 'National Day' }],
    ['Thursday 2026-10-08 is a working day', '2026-10-08', { run: true, why: 'business_day' }],
    ['Sunday 2026-10-11 is a weekend day', '2026-10-11', { run: false, why: 'weekend' }],
  ])('%s', (_, date, expected) => {
    expect(isRunDay(cal('cn-workdays'), at9(date), SH)).toEqual(expected);
  });

  test('fire times of a daily 09:00 cron skip Golden Week and include the make-up Saturday', () => {
    const t = fireTimes({ type: 'cron', expression: '0 9 * * *', timezone: SH, dom_dow: 'or', tolerant: true }, cal('cn-workdays'), Date.parse('2026-09-29T12:00:00Z'), 5);
    expect(iso(t)).toEqual(['2026-09-30', '2026-10-08', '2026-10-09', '2026-10-10', '2026-10-12']);
  });

  test('the date list and skip_weekends apply on top of it', () => {
    expect(isRunDay(cal('cn-workdays', { holidays: ['2026-10-08'] }), at9('2026-10-08'), SH)).toMatchObject({ run: false, why: 'holiday' });
    expect(isRunDay(cal('cn-workdays', { skip_weekends: true }), at9('2026-10-10'), SH)).toMatchObject({ run: false, why: 'makeup_workday' });
  });

  test('the local date is the trigger zone\'s: 2026-10-09 20:00 UTC is Saturday 10 October in Shanghai', () => {
    const t = Date.parse('2026-10-09T20:00:00Z');
    expect(isRunDay(cal('cn-workdays'), t, SH).why).toBe('makeup_workday');
    expect(isRunDay(cal('cn-workdays'), t, 'UTC').why).toBe('business_day');
  });

  test('a year without official data counts Monday to Friday and says so', () => {
    const year = CALENDAR_COVERAGE['cn-workdays'].last + 1;
    // The first Monday of March of that year.
    let d = Date.UTC(year, 2, 1);
    while (new Date(d).getUTCDay() !== 1) d += 86_400_000;
    expect(isRunDay(cal('cn-workdays'), d + 3_600_000, SH)).toEqual({ run: true, why: 'business_day', noData: true });
    expect(isRunDay(cal('cn-workdays'), d - 86_400_000 + 3_600_000, SH)).toEqual({ run: false, why: 'weekend', noData: true });
  });
});

describe('cn-trading: weekdays minus statutory holidays, no make-up days', () => {
  test.each([
    ['2026-10-10', false, 'weekend'],
    ['2026-02-14', false, 'weekend'],
    ['2026-10-05', false, 'holiday'],
    ['2026-10-08', true, 'business_day'],
  ])('%s runs: %s (%s)', (date, run, why) => {
    expect(isRunDay(cal('cn-trading'), at9(date), SH)).toMatchObject({ run, why });
  });

  test('fire times skip the make-up Saturday', () => {
    const t = fireTimes({ type: 'cron', expression: '0 9 * * *', timezone: SH, dom_dow: 'or', tolerant: true }, cal('cn-trading'), Date.parse('2026-09-29T12:00:00Z'), 4);
    expect(iso(t)).toEqual(['2026-09-30', '2026-10-08', '2026-10-09', '2026-10-12']);
  });
});

describe('time context words', () => {
  const task = {
    task_id: 'digest',
    name: 'Digest',
    trigger: { type: 'cron', expression: '0 9 * * *', timezone: SH, dom_dow: 'or', tolerant: true },
    retry: { max_attempts: 1, backoff_seconds: [] },
    calendar: cal('cn-workdays'),
    lang: 'en',
  } as unknown as TaskDefinition;
  const context = (date: string, lang: 'en' | 'zh') => {
    const t = at9(date);
    return buildTimeContext({ task: { ...task, lang }, runId: 'r', trigger: 'schedule', nominalMs: t, startedMs: t, nowMs: t, attempt: 1 }, isRunDay(task.calendar, t, SH, lang));
  };

  test('a make-up working day', () => {
    expect(context('2026-10-10', 'en')).toContain("Today (2026-10-10, Saturday) is a make-up working day (调休: a weekend day worked in exchange for National Day) in the task's calendar.");
    expect(context('2026-10-10', 'zh')).toContain('今天（2026-10-10，星期六）是调休上班日（国庆节调休）。');
  });

  test('a holiday, with its name', () => {
    // Reached by a manual trigger: the schedule itself does not fire on the holiday.
    expect(context('2026-10-05', 'en')).toContain("Today (2026-10-05, Monday) is a holiday (National Day) in the task's calendar.");
    expect(context('2026-10-05', 'zh')).toContain('是节假日（国庆节）');
  });
});

test('the contract takes the named calendars and refuses others, naming the field', () => {
  const base = { trigger: { type: 'cron', expression: '0 9 * * *', timezone: SH }, agent: { type: 'webhook', url: 'https://agent.example/run', prompt_template: 'go' } };
  expect(CreateTaskBody.parse({ ...base, calendar: { name: 'cn-trading' } }).calendar).toEqual({ name: 'cn-trading', holidays: [], skip_weekends: false });
  const bad = CreateTaskBody.safeParse({ ...base, calendar: { name: 'us-federal' } });
  expect(bad.success).toBe(false);
  expect(bad.error!.issues.map((i) => [i.path.join('.'), i.message])).toEqual([['calendar.name', 'must be one of cn-workdays, cn-trading']]);
});
