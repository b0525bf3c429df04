/**
 * Cron readings users know from Quartz, Spring, Vixie cron/cronie, croniter and cron-parser:
 * `?` in a day field, day fields that AND when one starts with `*`, `a/n` steps, and the
 * declared DST policy for step hours (docs/api.md#time-zone-policy). Each of these failed on
 * main before lib/domain/tasks/schedule.ts normalised expressions.
 */
import { cronFireTimes, cronProblem } from '../../lib/domain/tasks/schedule';
import { describeCron } from '../../lib/domain/tasks';

const fires = (expression: string, timezone: string, from: string, n: number, dom_dow: 'or' | 'and' = 'or') =>
  cronFireTimes({ expression, timezone, dom_dow }, Date.parse(from), n).map((t) => new Date(t).toISOString().slice(0, 19) + 'Z');

describe('? in a day field means no restriction', () => {
  test.each([
    ['0 0 ? * MON', ['2026-12-07T00:00:00Z', '2026-12-14T00:00:00Z', '2026-12-21T00:00:00Z']],
    ['0 0 1 * ?', ['2027-01-01T00:00:00Z', '2027-02-01T00:00:00Z', '2027-03-01T00:00:00Z']],
    ['0 0 L * ?', ['2026-12-31T00:00:00Z', '2027-01-31T00:00:00Z', '2027-02-28T00:00:00Z']],
    ['0 0 ? * 5#2', ['2026-12-11T00:00:00Z', '2027-01-08T00:00:00Z', '2027-02-12T00:00:00Z']],
    // 6 fields: Monday to Friday only, never the weekend of 5-6 December
    ['0 0 9 ? * MON-FRI', ['2026-12-02T09:00:00Z', '2026-12-03T09:00:00Z', '2026-12-04T09:00:00Z', '2026-12-07T09:00:00Z']],
    // 6L: the last Saturday of the month
    ['0 0 12 ? * 6L', ['2026-12-26T12:00:00Z', '2027-01-30T12:00:00Z']],
  ])('%s', (expr, expected) => {
    expect(fires(expr, 'UTC', '2026-12-01T12:00:00Z', expected.length)).toEqual(expected);
  });

  test('? elsewhere, or with other characters, is refused with the rule', () => {
    expect(cronProblem('? 0 * * *')).toMatch(/'\?' stands alone and only in the day-of-month or day-of-week field/);
    expect(cronProblem('0 0 1? * *')).toMatch(/'\?' stands alone/);
    expect(cronProblem('0 0 ? * MON')).toBeUndefined();
  });

  test('the words say the same', () => {
    expect(describeCron('0 0 ? * MON')).toBe('at 00:00 on Monday');
    expect(describeCron('0 0 9 ? * MON-FRI')).toBe('at 09:00 on Monday to Friday');
  });
});

describe('day-of-month and day-of-week combine as Vixie cron does', () => {
  test('a day field that starts with * makes the two AND: odd-numbered days that are Mondays', () => {
    // December 2026: Mondays 7, 14, 21, 28 (all but 7 and 21 even); January 2027: Mondays 4, 11, 18, 25
    expect(fires('0 0 */2 * 1', 'UTC', '2026-12-01T00:00:00Z', 4)).toEqual(['2026-12-07T00:00:00Z', '2026-12-21T00:00:00Z', '2027-01-11T00:00:00Z', '2027-01-25T00:00:00Z']);
    // */3 in day-of-week is Sunday, Wednesday, Saturday: with 1-31 they AND, so only those days
    expect(fires('0 0 1-31 * */3', 'UTC', '2026-12-01T00:00:00Z', 3)).toEqual(['2026-12-02T00:00:00Z', '2026-12-05T00:00:00Z', '2026-12-06T00:00:00Z']);
  });

  test('both restricted without *: OR (the 13th or a Friday)', () => {
    expect(fires('0 12 13 * FRI', 'UTC', '2026-03-06T12:00:00Z', 3)).toEqual(['2026-03-13T12:00:00Z', '2026-03-20T12:00:00Z', '2026-03-27T12:00:00Z']);
    expect(fires('0 0 1,15 * 3', 'UTC', '2026-12-01T12:00:00Z', 3)).toEqual(['2026-12-02T00:00:00Z', '2026-12-09T00:00:00Z', '2026-12-15T00:00:00Z']);
  });

  test('dom_dow and ANDs always; the words say and', () => {
    expect(fires('0 12 13 * FRI', 'UTC', '2026-01-01T00:00:00Z', 1, 'and')).toEqual(['2026-02-13T12:00:00Z']);
    expect(describeCron('0 0 */2 * 1')).toBe('at 00:00 on day */2 of the month and on Monday');
    expect(describeCron('0 12 13 * FRI')).toBe('at 12:00 on day 13 of the month or on Friday');
  });
});

describe('a/n steps start at a', () => {
  test('3/20 in the seconds and minutes fields', () => {
    expect(cronProblem('3/20 * * * * *')).toBeUndefined();
    expect(fires('3/20 * * * * *', 'UTC', '2026-12-01T00:00:00Z', 4)).toEqual(['2026-12-01T00:00:03Z', '2026-12-01T00:00:23Z', '2026-12-01T00:00:43Z', '2026-12-01T00:01:03Z']);
    expect(fires('3/20 * * * *', 'UTC', '2026-12-01T00:00:00Z', 3)).toEqual(['2026-12-01T00:03:00Z', '2026-12-01T00:23:00Z', '2026-12-01T00:43:00Z']);
  });

  test('a step without a start is refused', () => {
    expect(cronProblem('/10 * * * * *')).toMatch(/a step needs a start/);
  });
});

describe('step hours follow elapsed time across DST: a skipped hour is not made up', () => {
  test('0 */2 in New York on the spring-forward day: no fire at 03:00 EDT', () => {
    expect(fires('0 */2 * * *', 'America/New_York', '2026-03-08T04:30:00Z', 3)).toEqual(['2026-03-08T05:00:00Z', '2026-03-08T08:00:00Z', '2026-03-08T10:00:00Z']);
  });

  test('0 */2 in Sydney on the spring-forward day: no extra fire at 16:00Z', () => {
    // 2026-10-04 02:00 AEST becomes 03:00 AEDT: 00:00 AEST (14:00Z), then 04:00 AEDT (17:00Z)
    expect(fires('0 */2 * * *', 'Australia/Sydney', '2026-10-03T13:30:00Z', 3)).toEqual(['2026-10-03T14:00:00Z', '2026-10-03T17:00:00Z', '2026-10-03T19:00:00Z']);
  });

  test('1/2 (a step with a start) is a step hour too', () => {
    // 01:00 EST (06Z), 03:00 EDT (07Z) exists, 05:00 EDT (09Z)
    expect(fires('0 1/2 * * *', 'America/New_York', '2026-03-08T05:30:00Z', 3)).toEqual(['2026-03-08T06:00:00Z', '2026-03-08T07:00:00Z', '2026-03-08T09:00:00Z']);
  });

  test('fall back: a step hour that repeats runs again; one that does not is not doubled', () => {
    // Berlin 2026-10-25: 02:00 CEST (00Z) and 02:00 CET (01Z) are both 02:00
    expect(fires('0 */2 * * *', 'Europe/Berlin', '2026-10-24T21:30:00Z', 4)).toEqual(['2026-10-24T22:00:00Z', '2026-10-25T00:00:00Z', '2026-10-25T01:00:00Z', '2026-10-25T03:00:00Z']);
    // New York 2026-11-01: the repeated hour is 01:00, which */2 does not match
    expect(fires('0 */2 * * *', 'America/New_York', '2026-11-01T03:30:00Z', 3)).toEqual(['2026-11-01T04:00:00Z', '2026-11-01T07:00:00Z', '2026-11-01T09:00:00Z']);
  });

  test('a fixed hour still runs at the end of the gap', () => {
    expect(fires('0 2 * * *', 'America/New_York', '2026-03-07T12:00:00Z', 1)).toEqual(['2026-03-08T07:00:00Z']);
  });
});
