/** Retry settings in both styles: the waits before each attempt, and the contract's refusals of a mix. */
import { RetrySchema } from '../../api/tasks/contract';
import { backoffBeforeAttempt, retryProblems, retryWarnings, type RetryPolicy } from '../../lib/domain/tasks/retry';

const waits = (r: RetryPolicy) => Array.from({ length: r.max_attempts - 1 }, (_, i) => backoffBeforeAttempt(r, i + 2));

test('the explicit list: one wait per attempt, its last entry repeating; an empty list retries at once', () => {
  expect(waits({ max_attempts: 5, backoff_seconds: [60, 300] })).toEqual([60, 300, 300, 300]);
  expect(waits({ max_attempts: 3, backoff_seconds: [] })).toEqual([0, 0]);
});

test('exponential: initial × coefficient^(n-2), capped at maximum_interval_s', () => {
  expect(waits({ max_attempts: 6, initial_interval_s: 1, backoff_coefficient: 2, maximum_interval_s: 10 })).toEqual([1, 2, 4, 8, 10]);
  expect(waits({ max_attempts: 4, initial_interval_s: 0.5, backoff_coefficient: 3, maximum_interval_s: 100 })).toEqual([0.5, 1.5, 4.5]);
  // coefficient 1: a constant wait
  expect(waits({ max_attempts: 3, initial_interval_s: 7, backoff_coefficient: 1, maximum_interval_s: 7 })).toEqual([7, 7]);
});

test('the contract fills the exponential defaults: coefficient 2, cap 100 initial intervals (at most a week)', () => {
  expect(RetrySchema.parse({ max_attempts: 3, initial_interval_s: 5 })).toEqual({ max_attempts: 3, initial_interval_s: 5, backoff_coefficient: 2, maximum_interval_s: 500 });
  expect(RetrySchema.parse({ max_attempts: 3, initial_interval_s: 86_400 })).toMatchObject({ maximum_interval_s: 7 * 24 * 3600 });
  expect(RetrySchema.parse({ max_attempts: 2 })).toEqual({ max_attempts: 2, backoff_seconds: [] });
});

test.each([
  ['a mix of both styles', { max_attempts: 3, backoff_seconds: [1], initial_interval_s: 2 }, 'initial_interval_s', /cannot be combined with backoff_seconds/],
  ['a coefficient without initial_interval_s', { max_attempts: 3, backoff_coefficient: 3 }, 'initial_interval_s', /is required with backoff_coefficient/],
  ['a coefficient below 1', { max_attempts: 3, initial_interval_s: 1, backoff_coefficient: 0.5 }, 'backoff_coefficient', /at least 1/],
  ['a negative initial interval', { max_attempts: 3, initial_interval_s: -1 }, 'initial_interval_s', /negative/],
])('the contract refuses %s, naming the field', (_, body, field, reason) => {
  const r = RetrySchema.safeParse(body);
  expect(r.success).toBe(false);
  const issue = r.error!.issues[0];
  expect(issue.path.join('.')).toBe(field);
  expect(issue.message).toMatch(reason);
});

test('rules across fields: a cap below the initial interval is refused; a list longer than max_attempts - 1 is only a warning', () => {
  expect(retryProblems({ max_attempts: 3, initial_interval_s: 10, backoff_coefficient: 2, maximum_interval_s: 5 })).toEqual([{ field: 'retry.maximum_interval_s', reason: 'must be at least initial_interval_s (10)' }]);
  expect(retryProblems({ max_attempts: 2, backoff_seconds: [1, 2] })).toEqual([]);
  expect(retryWarnings({ max_attempts: 2, backoff_seconds: [1, 2] })).toEqual([{ field: 'retry.backoff_seconds', reason: 'has 2 entries; max_attempts 2 waits 1 time, so only the first is used' }]);
  expect(retryWarnings({ max_attempts: 3, backoff_seconds: [1, 2] })).toEqual([]);
  expect(retryProblems({ max_attempts: 2, initial_interval_s: 1, backoff_coefficient: 2, maximum_interval_s: 100 })).toEqual([]);
});
