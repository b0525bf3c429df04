/**
 * One error shape for every endpoint: RFC 9457 problem details, plus the seed envelope's
 * `code` and `msg` so a Gateway written against the seed can keep checking `code`.
 */
import type { ErrorRequestHandler, Response } from 'express';
import { ZodError } from 'zod';

export interface FieldError {
  field: string;
  reason: string;
}

export const ProblemType = {
  Validation: 'validation_error',
  NotFound: 'not_found',
  SessionExists: 'session_exists',
  SessionArchived: 'session_archived',
  Conflict: 'conflict',
  TooLarge: 'payload_too_large',
  Unauthorized: 'unauthorized',
  Forbidden: 'forbidden',
  Unavailable: 'unavailable',
  Internal: 'internal_error',
} as const;
export type ProblemType = (typeof ProblemType)[keyof typeof ProblemType];

const TITLES: Record<ProblemType, string> = {
  validation_error: 'Invalid request',
  not_found: 'Not found',
  session_exists: 'Session already exists',
  session_archived: 'Session archived',
  conflict: 'Conflict',
  payload_too_large: 'Payload too large',
  unauthorized: 'Unauthorized',
  forbidden: 'Forbidden',
  unavailable: 'Service unavailable',
  internal_error: 'Internal error',
};

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: ProblemType,
    readonly detail: string,
    readonly errors: FieldError[] = [],
  ) {
    super(detail);
  }

  static validation(field: string, reason: string): HttpError {
    return new HttpError(400, ProblemType.Validation, `${field} ${reason}`, [{ field, reason }]);
  }
}

export function sendProblem(res: Response, err: HttpError, instance?: string): void {
  res
    .status(err.status)
    .type('application/problem+json')
    .json({
      type: `https://timekeeper.dev/problems/${err.type}`,
      title: TITLES[err.type],
      status: err.status,
      detail: err.detail,
      ...(instance ? { instance } : {}),
      ...(err.errors.length ? { errors: err.errors } : {}),
      code: err.status,
      msg: err.detail,
    });
}

export function fromZod(err: ZodError, prefix = ''): HttpError {
  // With no path the failure is the value itself: the prefix names it (e.g. a path parameter).
  const at = (path: PropertyKey[]) => (path.length ? prefix + path.join('.') : prefix || 'body');
  // A strict object reports unknown keys on the object itself: name each key instead.
  const errors = err.issues.flatMap((i) =>
    i.code === 'unrecognized_keys'
      ? i.keys.map((k) => ({ field: at([...i.path, k]), reason: 'is not a known field' }))
      : [{ field: at(i.path), reason: i.message }],
  );
  return new HttpError(400, ProblemType.Validation, errors.map((e) => `${e.field}: ${e.reason}`).join('; '), errors);
}

/** Last handler: body-parser failures become 4xx problems; anything unexpected a logged 500. */
export const errorHandler: ErrorRequestHandler = (err, req, res, _next) => {
  if (err instanceof HttpError) return sendProblem(res, err, req.originalUrl);
  if (err instanceof ZodError) return sendProblem(res, fromZod(err), req.originalUrl);
  const e = err as { type?: string; status?: number; limit?: number; message?: string };
  if (e.type === 'entity.too.large') {
    return sendProblem(res, new HttpError(413, ProblemType.TooLarge, `body is larger than ${e.limit} bytes`, [{ field: 'body', reason: `larger than ${e.limit} bytes` }]), req.originalUrl);
  }
  if (e.type === 'entity.parse.failed') {
    return sendProblem(res, HttpError.validation('body', `is not valid JSON: ${e.message}`), req.originalUrl);
  }
  if (err instanceof URIError) {
    // The router could not percent-decode a path parameter.
    return sendProblem(res, new HttpError(400, ProblemType.Validation, e.message ?? 'bad path', [{ field: 'path', reason: 'is not valid percent-encoding' }]), req.originalUrl);
  }
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    return sendProblem(res, new HttpError(e.status, ProblemType.Validation, e.message ?? 'bad request', [{ field: 'body', reason: e.message ?? 'bad request' }]), req.originalUrl);
  }
  if (isDatabaseUnavailable(err)) {
    return sendProblem(res, new HttpError(503, ProblemType.Unavailable, 'the event database is not reachable; retry shortly'), req.originalUrl);
  }
  console.error('[api] unexpected error', req.method, req.originalUrl, err);
  sendProblem(res, new HttpError(500, ProblemType.Internal, 'unexpected error; see the server log'), req.originalUrl);
};

/** Connection-level PostgreSQL failures: the request was fine, the database was not there. */
function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  if (typeof e?.code === 'string' && (/^(08|57P0|53)/.test(e.code) || ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE'].includes(e.code))) return true;
  return /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED/i.test(e?.message ?? '');
}
