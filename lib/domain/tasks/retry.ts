/**
 * A task's retry policy in its two styles: an explicit backoff list (the scheduler article's
 * `backoff_seconds`), or exponential settings as Temporal's own retry policies have them
 * (`initial_interval_s`, `backoff_coefficient`, `maximum_interval_s`). A task uses exactly one
 * style; the API contract refuses a mix. The waits are durable timers in the run workflow, so
 * this module is sandbox-safe: plain arithmetic, no I/O.
 */
import type { FieldError } from '../errors';
import { LIMITS } from '../limits';

export interface BackoffListRetry {
  /** Attempts in all, the first included. */
  max_attempts: number;
  /** Waits between attempts, in seconds; the last one repeats, entries beyond max_attempts - 1 are unused (retryWarnings). */
  backoff_seconds: number[];
}

export interface ExponentialRetry {
  max_attempts: number;
  /** The wait before the second attempt, in seconds. */
  initial_interval_s: number;
  /** Each further wait is the previous one times this (default 2). */
  backoff_coefficient: number;
  /** No wait is longer than this (default 100 initial intervals, at most LIMITS.taskBackoffMaxS). */
  maximum_interval_s: number;
}

export type RetryPolicy = BackoffListRetry | ExponentialRetry;

export const RETRY_DEFAULTS = { backoff_coefficient: 2 } as const;

export const isExponentialRetry = (r: RetryPolicy): r is ExponentialRetry => 'initial_interval_s' in r;

/** The cap an exponential policy gets when maximum_interval_s is not given. */
export const defaultMaximumIntervalS = (initialS: number): number => Math.min(initialS * LIMITS.taskBackoffDefaultCapFactor, LIMITS.taskBackoffMaxS);

/** The wait in seconds before attempt `next` (2-based). */
export function backoffBeforeAttempt(retry: RetryPolicy, next: number): number {
  if (isExponentialRetry(retry)) {
    const wait = retry.initial_interval_s * Math.pow(retry.backoff_coefficient, Math.max(0, next - 2));
    return Math.min(wait, retry.maximum_interval_s);
  }
  const list = retry.backoff_seconds;
  if (list.length === 0) return 0;
  return list[Math.min(next - 2, list.length - 1)];
}

/** Rules across fields that the contract's shape does not express; each names its field. */
export function retryProblems(r: RetryPolicy): FieldError[] {
  if (isExponentialRetry(r)) {
    return r.maximum_interval_s < r.initial_interval_s
      ? [{ field: 'retry.maximum_interval_s', reason: `must be at least initial_interval_s (${r.initial_interval_s})` }]
      : [];
  }
  return [];
}

/**
 * What is stored as sent but does nothing: a backoff list longer than the attempts need (the
 * scheduler article's own example, `max_attempts: 3` with three waits) keeps its extra
 * entries unused. The answer says so instead of refusing the task.
 */
export function retryWarnings(r: RetryPolicy): FieldError[] {
  if (isExponentialRetry(r) || r.backoff_seconds.length <= r.max_attempts - 1) return [];
  const used = r.max_attempts - 1;
  const n = r.backoff_seconds.length;
  const has = `has ${n} ${n === 1 ? 'entry' : 'entries'}`;
  return [
    {
      field: 'retry.backoff_seconds',
      reason: used === 0 ? `${has}; max_attempts 1 never waits, so none is used` : `${has}; max_attempts ${r.max_attempts} waits ${used} time${used === 1 ? '' : 's'}, so only the first${used === 1 ? ' is' : ` ${used} are`} used`,
    },
  ];
}
