/**
 * Stagger (issue 15): a task's fire times move later by one fixed offset below its window,
 * derived from its id; the operator's default covers top-of-hour crons; the calendar decides on
 * the cron's own time; the time context names both times.
 */
import { definitionOf } from '../../lib/task-definition';
import { fireTimes } from '../../lib/domain/tasks/schedule';
import { isTopOfHour, staggerOffsetS, withStagger } from '../../lib/domain/tasks/stagger';
import { buildTimeContext, describeTrigger, type CronTrigger, type TaskDefinition } from '../../lib/domain/tasks';

const cron = (expression: string, extra: Partial<CronTrigger> = {}): CronTrigger => ({ type: 'cron', expression, timezone: 'UTC', dom_dow: 'or', tolerant: true, ...extra });
const iso = (ts: number[]) => ts.map((t) => new Date(t).toISOString());

test('the offset is the same for the same task every time, below the window, and differs between tasks', () => {
  expect(staggerOffsetS('daily-digest', 300)).toBe(staggerOffsetS('daily-digest', 300));
  const offsets = Array.from({ length: 200 }, (_, i) => staggerOffsetS(`user-${i}-digest`, 300));
  for (const o of offsets) expect(o >= 0 && o < 300 && Number.isInteger(o)).toBe(true);
  // 200 tasks over 300 one-second slots: spread, not a crowd.
  expect(new Set(offsets).size).toBeGreaterThan(100);
  expect(Math.max(...offsets.map((o, i, a) => a.filter((x) => x === o).length))).toBeLessThan(6);
  expect(staggerOffsetS('x', 0)).toBe(0);
});

test('top-of-hour crons take the default; others, and an explicit 0, do not; a stored offset is kept', () => {
  expect(['0 * * * *', '0 9 * * *', '0 0 9 * * 1-5', '@daily', '@hourly'].map(isTopOfHour)).toEqual([true, true, true, true, true]);
  expect(['5 9 * * *', '*/15 * * * *', '30 0 9 * * *'].map(isTopOfHour)).toEqual([false, false, false]);
  expect(withStagger(cron('0 9 * * *'), 'a', 300)).toEqual(cron('0 9 * * *', { stagger_s: 300, stagger_offset_s: staggerOffsetS('a', 300) }));
  expect(withStagger(cron('5 9 * * *'), 'a', 300)).toEqual(cron('5 9 * * *'));
  expect(withStagger(cron('0 9 * * *', { stagger_s: 0 }), 'a', 300)).toEqual(cron('0 9 * * *'));
  expect(withStagger(cron('5 9 * * *', { stagger_s: 60 }), 'a', 0)).toMatchObject({ stagger_s: 60, stagger_offset_s: staggerOffsetS('a', 60) });
  expect(withStagger(cron('0 9 * * *', { stagger_s: 60, stagger_offset_s: 7 }), 'a', 300)).toMatchObject({ stagger_s: 60, stagger_offset_s: 7 });
});

test('fire times are the cron times plus the offset; from and until count on the moved times', () => {
  const t = cron('0 9 * * *', { stagger_s: 300, stagger_offset_s: 137 });
  const from = Date.parse('2026-12-01T00:00:00Z');
  expect(iso(fireTimes(t, undefined, from, 2))).toEqual(['2026-12-01T09:02:17.000Z', '2026-12-02T09:02:17.000Z']);
  // 09:01 is after 09:00 but before 09:02:17: the day's staggered fire is still to come.
  expect(iso(fireTimes(t, undefined, Date.parse('2026-12-01T09:01:00Z'), 1))).toEqual(['2026-12-01T09:02:17.000Z']);
  expect(fireTimes(t, undefined, from, 5, Date.parse('2026-12-01T09:02:00Z'))).toEqual([]);
});

test("the calendar decides on the cron's own day: 23:59 staggered past midnight into a holiday still runs", () => {
  const t = cron('59 23 * * *', { stagger_s: 600, stagger_offset_s: 300 });
  const cal = { holidays: ['2026-12-02'], skip_weekends: false };
  // 1 Dec 23:59 + 5 min = 2 Dec 00:04 (a holiday): runs, it is 1 December's fire; 2 December's is skipped.
  expect(iso(fireTimes(t, cal, Date.parse('2026-12-01T12:00:00Z'), 2))).toEqual(['2026-12-02T00:04:00.000Z', '2026-12-04T00:04:00.000Z']);
});

/** The local webhook allowed, as an operator of this test would. */
const policy = { outboundAllowHosts: ['127.0.0.1'], agentSecrets: [] };

test('the API fills the default stagger into the stored trigger and refuses an offset outside the window', () => {
  const body = { task_id: 'digest-1', trigger: { type: 'cron', expression: '0 9 * * *' }, agent: { type: 'webhook', url: 'http://127.0.0.1:9/a', prompt_template: 'x' } };
  const { definition } = definitionOf(body, Date.now(), policy, {}, { staggerTopOfHourS: 300 });
  expect(definition.trigger).toMatchObject({ stagger_s: 300, stagger_offset_s: staggerOffsetS('digest-1', 300) });
  expect(describeTrigger(definition.trigger)).toMatch(/^cron "0 9 \* \* \*" in UTC: at 09:00 every day, staggered by \d+ (s|min \d+ s)$/);
  // Re-validating the stored definition (a PATCH does) keeps it as it is.
  expect(definitionOf(definition, Date.now(), policy, {}, { staggerTopOfHourS: 300 }).definition.trigger).toEqual(definition.trigger);
  expect(() => definitionOf({ ...body, trigger: { ...body.trigger, stagger_s: 60, stagger_offset_s: 60 } }, Date.now(), policy)).toThrow(/trigger\.stagger_offset_s: must be below stagger_s \(60\)/);
  expect(() => definitionOf({ ...body, trigger: { ...body.trigger, stagger_s: 3601 } }, Date.now(), policy)).toThrow(/stagger_s/);
});

test('the time context names the cron time and the stagger (a manual run has neither)', () => {
  const task = { task_id: 'd', name: 'd', trigger: cron('0 9 * * *', { stagger_s: 300, stagger_offset_s: 137 }), retry: { max_attempts: 1, backoff_seconds: [] }, lang: 'en' } as unknown as TaskDefinition;
  const nominal = Date.parse('2026-12-01T09:02:17Z');
  const ctx = { task, runId: 'r', nominalMs: nominal, startedMs: nominal + 1000, nowMs: nominal + 1000, attempt: 1 };
  const text = buildTimeContext({ ...ctx, trigger: 'schedule' }, { run: true, why: 'business_day' });
  expect(text).toContain("scheduled for 2026-12-01T09:02:17.000Z (the cron's time 2026-12-01T09:00:00.000Z, staggered by 2 min 17 s), started 2026-12-01T09:02:18.000Z, 1 s late.");
  expect(buildTimeContext({ ...ctx, task: { ...task, lang: 'zh' }, trigger: 'schedule' }, { run: true, why: 'business_day' })).toContain('（cron 时间 2026-12-01T09:00:00.000Z，错峰 2 min 17 s）');
  expect(buildTimeContext({ ...ctx, trigger: 'manual' }, { run: true, why: 'business_day' })).not.toContain("the cron's time");
});
