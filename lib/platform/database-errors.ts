/**
 * A database error as the failure a writer activity throws to its workflow. Shared platform
 * mechanics (issue 21): every capability's writer (sessions, intents) maps SQLSTATEs alike,
 * so the rule lives here rather than in one capability's activities for the others to borrow.
 */
import type { ApplicationFailure } from '@temporalio/common';
import { isUnstorableValue } from '../db';
import { DomainError, ErrorCode } from '../domain/errors';

/**
 * Another writer got there first: a primary-key or unique race (23505), or the chain guard
 * trigger refusing a stale head (23514 raised by the trigger, so without a constraint name;
 * a CHECK constraint's 23514 names its constraint and is a plain refusal).
 */
function isConflict(err: { code?: string; constraint?: string }): boolean {
  return err.code === '23505' || (err.code === '23514' && !err.constraint);
}
/** Other SQLSTATE classes no retry can fix: data exceptions, constraint violations, access and schema errors. */
const PERMANENT_SQLSTATE = /^(22|23|42)/;

/** A database error as the failure the workflow should see (shared by every writer activity); undefined: retry it. */
export function failureFromDatabase(err: unknown, what = 'timeline'): ApplicationFailure | undefined {
  const e = err as { code?: string; constraint?: string };
  const code = e.code;
  if (!code) return undefined;
  const msg = `${(err as Error).message} (SQLSTATE ${code})`;
  if (isConflict(e)) {
    return new DomainError(ErrorCode.ConcurrencyConflict, `another writer changed this ${what} at the same time; nothing was stored: ${msg}`).toFailure();
  }
  // A value PostgreSQL cannot hold (U+0000 in jsonb, a byte sequence not in UTF-8): the request's fault, 400, never retried.
  if (isUnstorableValue(err)) return new DomainError(ErrorCode.Validation, `nothing was stored: the database cannot hold a value of the request: ${msg}`).toFailure();
  if (PERMANENT_SQLSTATE.test(code)) return new DomainError(ErrorCode.WriteFailed, `nothing was stored: the database refused the write: ${msg}`).toFailure();
  return undefined;
}
