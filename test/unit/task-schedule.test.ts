/** The declared time-zone policy, the trigger in words, time context and run memory texts. */
import { buildRunMemory, buildTimeContext, describeTrigger, taskDefinitionProblems, type TaskDefinition } from '../../lib/domain/tasks';
import { cronFireTimes, cronProblem, fireTimes } from '../../lib/domain/tasks/schedule';

const fires = (expression: string, timezone: string, from: string, n: number) =>
  cronFireTimes({ expression, timezone, dom_dow: 'or' }, Date.parse(from), n).map((t) => new Date(t).toISOString());

describe('time-zone policy', () => {
  test.each([
    // spring forward: a fixed time inside the gap runs once, at the first valid instant after it, the same day
    ['America/New_York 02:30 on the spring-forward day runs at 03:00 EDT', '30 2 * * *', 'America/New_York', '2026-03-07T12:00:00Z', ['2026-03-08T07:00:00.000Z', '2026-03-09T06:30:00.000Z']],
    ['Europe/Berlin 02:30 on the spring-forward day runs at 03:00 CEST', '30 2 * * *', 'Europe/Berlin', '2026-03-28T12:00:00Z', ['2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z']],
    ['Australia/Lord_Howe 02:15 in the 30-minute gap runs at 02:30', '15 2 * * *', 'Australia/Lord_Howe', '2026-10-03T00:00:00Z', ['2026-10-03T15:30:00.000Z', '2026-10-04T15:15:00.000Z']],
    ['America/Santiago midnight that does not exist runs at 01:00', '0 0 * * *', 'America/Santiago', '2026-09-05T12:00:00Z', ['2026-09-06T04:00:00.000Z', '2026-09-07T03:00:00.000Z']],
    // fall back: a repeated local time runs once, at its first occurrence
    ['America/New_York 01:30 on the fall-back day runs once (EDT)', '30 1 * * *', 'America/New_York', '2026-10-31T12:00:00Z', ['2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z']],
    ['Europe/Berlin 02:30 on the fall-back day runs once (CEST)', '30 2 * * *', 'Europe/Berlin', '2026-10-24T12:00:00Z', ['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']],
    ['Australia/Lord_Howe 01:45 in the repeated half hour runs once', '45 1 * * *', 'Australia/Lord_Howe', '2026-04-04T00:00:00Z', ['2026-04-04T14:45:00.000Z', '2026-04-05T15:15:00.000Z']],
    ['America/Santiago 23:30 repeated before midnight runs once', '30 23 * * *', 'America/Santiago', '2026-04-04T12:00:00Z', ['2026-04-05T02:30:00.000Z', '2026-04-06T03:30:00.000Z']],
    // wildcard and step hours follow elapsed time
    ['*/30 across New York fall-back runs in the repeated hour too', '*/30 * * * *', 'America/New_York', '2026-11-01T04:50:00Z', ['2026-11-01T05:00:00.000Z', '2026-11-01T05:30:00.000Z', '2026-11-01T06:00:00.000Z', '2026-11-01T06:30:00.000Z', '2026-11-01T07:00:00.000Z']],
    ['0 * across New York spring-forward: one hour of elapsed time between runs', '0 * * * *', 'America/New_York', '2026-03-08T05:30:00Z', ['2026-03-08T06:00:00.000Z', '2026-03-08T07:00:00.000Z', '2026-03-08T08:00:00.000Z']],
    ['*/15 across Lord Howe spring-forward', '*/15 * * * *', 'Australia/Lord_Howe', '2026-10-03T15:10:00Z', ['2026-10-03T15:15:00.000Z', '2026-10-03T15:30:00.000Z', '2026-10-03T15:45:00.000Z']],
  ])('%s', (_name, expr, tz, from, expected) => {
    expect(fires(expr, tz, from, expected.length)).toEqual(expected);
  });

  test('6 fields with seconds, names, L, W, #, @daily and dom/dow OR vs AND', () => {
    expect(fires('0 30 15 * * 1-5', 'Asia/Shanghai', '2026-03-06T12:00:00Z', 2)).toEqual(['2026-03-09T07:30:00.000Z', '2026-03-10T07:30:00.000Z']);
    expect(fires('*/20 * * * * *', 'UTC', '2026-03-06T12:00:00Z', 3)).toEqual(['2026-03-06T12:00:20.000Z', '2026-03-06T12:00:40.000Z', '2026-03-06T12:01:00.000Z']);
    expect(fires('0 12 L * *', 'UTC', '2026-03-06T12:00:00Z', 1)).toEqual(['2026-03-31T12:00:00.000Z']);
    expect(fires('0 12 15W * *', 'UTC', '2026-03-06T12:00:00Z', 1)).toEqual(['2026-03-16T12:00:00.000Z']);
    expect(fires('0 12 * * FRI#2', 'UTC', '2026-03-06T12:00:00Z', 1)).toEqual(['2026-03-13T12:00:00.000Z']);
    expect(fires('@daily', 'UTC', '2026-03-06T12:00:00Z', 1)).toEqual(['2026-03-07T00:00:00.000Z']);
    expect(fires('0 12 13 * FRI', 'UTC', '2026-03-06T12:00:00Z', 2)).toEqual(['2026-03-13T12:00:00.000Z', '2026-03-20T12:00:00.000Z']);
    const and = cronFireTimes({ expression: '0 12 13 * FRI', timezone: 'UTC', dom_dow: 'and' }, Date.parse('2026-01-01T00:00:00Z'), 1);
    expect(new Date(and[0]).toISOString()).toBe('2026-02-13T12:00:00.000Z'); // Friday the 13th
    expect(cronProblem('61 * * * *')).toMatch(/not a valid cron/);
    expect(cronProblem('0 0 0 * * * 2030')).toMatch(/5 fields/);
    expect(cronProblem('0 0 30 2 *')).toBe('never fires');
  });

  test('interval triggers and calendars', () => {
    const from = Date.parse('2026-03-06T12:00:00.500Z');
    expect(fireTimes({ type: 'interval', every_s: 60, mode: 'aligned' }, undefined, from, 2)).toEqual([Date.parse('2026-03-06T12:01:00Z'), Date.parse('2026-03-06T12:02:00Z')]);
    expect(fireTimes({ type: 'interval', every_s: 60, mode: 'from_last_start' }, undefined, from, 1, Infinity, { lastFireMs: from - 10_000 })).toEqual([from + 50_000]);
    // Friday 6 March is a holiday and weekends are skipped: the next 17:00 Shanghai run is on Monday.
    const cal = { holidays: ['2026-03-06'], skip_weekends: true };
    const t = fireTimes({ type: 'cron', expression: '0 17 * * *', timezone: 'Asia/Shanghai', dom_dow: 'or', tolerant: true }, cal, Date.parse('2026-03-06T00:00:00Z'), 1);
    expect(new Date(t[0]).toISOString()).toBe('2026-03-09T09:00:00.000Z');
  });
});

const task: TaskDefinition = {
  task_id: 'daily-digest',
  name: '每日舆情摘要',
  trigger: { type: 'cron', expression: '0 17 * * 1-5', timezone: 'Asia/Shanghai', dom_dow: 'or', tolerant: true },
  agent: { type: 'openai', base_url: 'http://x/v1', model: 'm', prompt_template: 'hi {{date}}' },
  delivery: [],
  retry: { max_attempts: 3, backoff_seconds: [60, 300] },
  timeout_s: 900,
  overlap: 'skip',
  max_concurrency: 1,
  priority: 'default',
  misfire: 'run_latest',
  misfire_grace_s: 60,
  memory_runs: 3,
  auto_disable_after: 10,
  tags: [],
  lang: 'en',
};

test('the trigger in words', () => {
  expect(describeTrigger(task.trigger)).toBe('cron "0 17 * * 1-5" in Asia/Shanghai: at 17:00 on Monday to Friday');
  expect(describeTrigger({ type: 'interval', every_s: 300, mode: 'from_last_start' })).toBe('every 5 min 0 s after the previous start');
  expect(describeTrigger({ type: 'at', at: '2026-03-09T17:00:00+08:00' })).toBe('once, at 2026-03-09T09:00:00.000Z');
});

test('domain rules name their fields', () => {
  const bad = { ...task, retry: { max_attempts: 2, backoff_seconds: [1, 2] }, agent: { ...task.agent, prompt_template: '{{weather}}' } } as TaskDefinition;
  expect(taskDefinitionProblems(bad).map((p) => p.field)).toEqual(['agent.prompt_template']);
  expect(taskDefinitionProblems(task)).toEqual([]);
});

test('time context: both zones, why it woke, lateness, time since the last run, attempt, business day', () => {
  const nominal = Date.parse('2026-03-09T09:00:00Z');
  const text = buildTimeContext(
    { task, runId: 'run/daily-digest/2026-03-09T09:00:00.000Z', trigger: 'schedule', nominalMs: nominal, startedMs: nominal + 3000, nowMs: nominal + 3000, attempt: 2, lastRunMs: nominal - 3 * 24 * 3600_000 },
    { run: true, why: 'business_day' },
  );
  expect(text).toContain('Current time: 2026-03-09T17:00:03+08:00 (Asia/Shanghai), 2026-03-09T09:00:03.000Z (UTC).');
  expect(text).toContain('Woke because: its schedule fired');
  expect(text).toContain('3 s late');
  expect(text).toContain('Time since the last run: 3 days 0 h');
  expect(text).toContain('Attempt 2 of 3.');
  expect(text).toContain('Today (2026-03-09, Monday) is a business day');
});

test('run memory in natural language, as the article (English and Chinese)', () => {
  const entries = [
    { nominal_ms: Date.parse('2025-01-14T07:30:00Z'), status: 'success' as const, processed: 128, error_count: 2, summary: null, delivered: true },
    { nominal_ms: Date.parse('2025-01-13T07:30:00Z'), status: 'failed' as const, processed: null, error_count: null, summary: 'timeout', delivered: false },
  ];
  expect(buildRunMemory(entries, 'Asia/Shanghai', 'zh').split('\n')[0]).toBe('上次2025-01-14 15:30执行成功，共处理数据128条，其中异常2条，已推送。');
  expect(buildRunMemory(entries, 'Asia/Shanghai', 'en')).toBe(
    '- 2025-01-14 15:30 (Asia/Shanghai): succeeded, processed 128, 2 errors, delivered.\n- 2025-01-13 15:30 (Asia/Shanghai): failed. Summary: timeout',
  );
  expect(buildRunMemory([], 'UTC')).toBe('No earlier runs.');
});
