/**
 * The body of a problem answer (RFC 9457 problem details whose `type` ends in the catalogue
 * code, lib/domain/errors.ts, plus the seed envelope's `code` and `msg`), with each code's
 * title. Shared by the API (api/problem.ts: statuses, headers, the error handler) and the
 * worker's /metrics listener (worker/metrics-listener.ts), which answer refusals alike.
 */
import type { DomainError, ErrorCode } from '../domain/errors';

/**
 * The seed-compatible routes answer a few refusals with 400, as the seed's own code did; /v1
 * uses the proper status. The OML-compatible intent routes (/api/*) use the /v1 statuses and
 * add OML's `error` member (the message) to the body.
 */
export type Surface = 'seed' | 'v1' | 'oml';

const TITLES: Record<ErrorCode, string> = {
  validation_error: 'Invalid request',
  not_found: 'Not found',
  session_exists: 'Session already exists',
  session_archived: 'Session archived',
  idempotency_key_reused: 'Idempotency key reused',
  event_id_conflict: 'Event id conflict',
  concurrency_conflict: 'Concurrent write',
  wrong_expected_seq: 'Wrong expected sequence number',
  invalid_transition: 'Invalid status transition',
  intent_exists: 'Intent already exists',
  duplicate_intent: 'Duplicate intent',
  read_only: 'Read-only mode',
  payload_too_large: 'Payload too large',
  unauthorized: 'Unauthorized',
  forbidden: 'Forbidden',
  rate_limited: 'Too many requests',
  unavailable: 'Service unavailable',
  write_failed: 'Nothing was stored',
  internal_error: 'Internal error',
  task_exists: 'Task already exists',
  task_deleted: 'Task deleted',
  run_not_waiting: 'Run is not waiting for a result',
  result_conflict: 'Result conflicts with the run',
};

export function problemBody(err: DomainError, status: number, instance?: string, surface: Surface = 'v1') {
  return {
    // Code-specific members first, so none can overwrite the standard ones.
    ...(err.extra ?? {}),
    ...(surface === 'oml' ? { error: err.message } : {}),
    type: `https://timekeeper.dev/problems/${err.code}`,
    title: TITLES[err.code],
    status,
    detail: err.message,
    ...(instance ? { instance } : {}),
    ...(err.errors.length ? { errors: err.errors } : {}),
    code: status,
    msg: err.message,
  };
}
