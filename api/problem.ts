/**
 * One error shape for every endpoint, and the one place where error codes become HTTP
 * statuses. Responses are RFC 9457 problem details whose `type` ends in the catalogue code
 * (lib/domain/errors.ts), plus the seed envelope's `code` and `msg` so a Gateway written
 * against the seed can keep checking `code`.
 */
import type { ErrorRequestHandler, Request, Response } from 'express';
import { logFor } from '../lib/log';
import { ZodError } from 'zod';
import { isConnectionError, isUnstorableValue } from '../lib/db';
import { DomainError, ErrorCode } from '../lib/domain/errors';
import { LIMITS } from '../lib/domain/limits';
import { fromZod } from '../lib/domain/platform/refusals';
import { problemBody, type Surface } from '../lib/platform/problem';

export { problemBody, type Surface } from '../lib/platform/problem';
export { fromZod } from '../lib/domain/platform/refusals';

const V1_STATUS: Record<ErrorCode, number> = {
  validation_error: 400,
  not_found: 404,
  session_exists: 409,
  session_archived: 409,
  idempotency_key_reused: 409,
  event_id_conflict: 409,
  concurrency_conflict: 409,
  wrong_expected_seq: 412,
  invalid_transition: 409,
  intent_exists: 409,
  duplicate_intent: 409,
  read_only: 403,
  payload_too_large: 413,
  unauthorized: 401,
  forbidden: 403,
  rate_limited: 429,
  unavailable: 503,
  write_failed: 503,
  internal_error: 500,
  task_exists: 409,
  task_deleted: 409,
  run_not_waiting: 409,
  result_conflict: 409,
};

const SEED_STATUS: Partial<Record<ErrorCode, number>> = {
  session_exists: 400,
  session_archived: 400,
  idempotency_key_reused: 400,
};

export function httpStatus(code: ErrorCode, surface: Surface): number {
  return (surface === 'seed' ? SEED_STATUS[code] : undefined) ?? V1_STATUS[code];
}

/** Routers mark their surface so the error handler picks the right status table. */
export const surface =
  (s: Surface) =>
  (_req: Request, res: Response, next: () => void): void => {
    res.locals.surface = s;
    next();
  };

/** Refusals a retry can cure get `Retry-After`: the error's own hint, else one second for 429 and 503. */
export function retryAfterOf(err: DomainError, status: number): number | undefined {
  if (err.retryAfterS !== undefined) return err.retryAfterS;
  return status === 429 || status === 503 ? LIMITS.retryAfterS : undefined;
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Every 503 to a write says whether the write may be stored (issue 16), so a client knows to
 * retry it idempotently (or check) rather than assume nothing happened. The thrower knows best
 * (admission refusals and reads that failed before anything was sent say false; a write the
 * database refused is write_failed: nothing was stored); otherwise the honest answer is that
 * it may be.
 */
export function withStorageAnswer(err: DomainError, status: number, method: string): DomainError {
  if (status !== 503 || READS.has(method.toUpperCase()) || (err.extra && 'may_be_stored' in err.extra)) return err;
  return err.withExtra({ may_be_stored: err.code !== ErrorCode.WriteFailed });
}

export function sendProblem(req: Request, res: Response, refusal: DomainError): void {
  const s = (res.locals.surface as Surface | undefined) ?? 'v1';
  const status = httpStatus(refusal.code, s);
  const err = withStorageAnswer(refusal, status, req.method);
  const retryAfter = retryAfterOf(err, status);
  if (retryAfter !== undefined) res.setHeader('Retry-After', String(Math.max(0, Math.ceil(retryAfter))));
  // Written directly, not through res.json: a problem needs no ETag (a hash of the body per
  // answer), and under overload refusals are most of what the API sends (issue 9).
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/problem+json; charset=utf-8');
  res.end(JSON.stringify(problemBody(err, status, req.originalUrl, s)));
}

/** Last handler: domain errors by their code, body-parser failures as 4xx, database outages as 503, anything else a logged 500. */
export const errorHandler: ErrorRequestHandler = (err, req, res, _next) => {
  sendProblem(req, res, toDomainError(err, req));
};

function toDomainError(err: unknown, req: Request): DomainError {
  if (err instanceof DomainError) return err;
  if (err instanceof ZodError) return fromZod(err);
  const e = err as { type?: string; status?: number; limit?: number; message?: string };
  if (e.type === 'entity.too.large') return DomainError.field(ErrorCode.TooLarge, 'body', `is larger than ${e.limit} bytes`);
  if (e.type === 'entity.parse.failed') return DomainError.validation('body', `is not valid JSON: ${e.message}`);
  // The router could not percent-decode a path parameter.
  if (err instanceof URIError) return DomainError.validation('path', 'is not valid percent-encoding').withMessage(e.message ?? 'bad path');
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) return DomainError.validation('body', e.message ?? 'bad request').withMessage(e.message ?? 'bad request');
  // A direct store write (tasks, signals) with a value PostgreSQL cannot hold: the request's fault.
  if (isUnstorableValue(err)) {
    return DomainError.validation('body', `holds a value the database cannot store: ${e.message ?? ''}`.trimEnd());
  }
  if (isConnectionError(err)) return new DomainError(ErrorCode.Unavailable, 'the event database is not reachable; retry shortly');
  logFor(req.res?.locals.requestId as string | undefined).error({ err, method: req.method, path: req.path }, 'unexpected error');
  return new DomainError(ErrorCode.Internal, 'unexpected error; see the server log');
}

