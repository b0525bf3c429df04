/**
 * Request ids and the request log line. `X-Request-Id` is taken from the caller when it is
 * acceptable (lib/log.ts REQUEST_ID_RE), otherwise generated, and returned on every answer.
 * The request then runs in its log context, so every line logged while serving it carries
 * `request_id`, and the clients hand the id into the workflow inputs of its writes.
 */
import type { RequestHandler } from 'express';
import { logFor, requestIdFrom, withRequest } from '../lib/log';

/** First middleware: picks the id and logs one line per finished request. */
export function requestId(): RequestHandler {
  return (req, res, next) => {
    const id = requestIdFrom(req.headers['x-request-id']);
    res.locals.requestId = id;
    res.setHeader('x-request-id', id);
    const start = performance.now();
    res.once('finish', () => {
      const route = (res.locals.route as string | undefined) ?? (req.route as { path?: string } | undefined)?.path ?? 'unmatched';
      const line = { method: req.method, route, status: res.statusCode, duration_ms: Math.round((performance.now() - start) * 10) / 10 };
      const l = logFor(id);
      if (res.statusCode >= 500) l.error(line, 'request');
      else l.info(line, 'request');
    });
    next();
  };
}

/**
 * After the body parsers (their stream callbacks run outside any async context): runs the
 * rest of the request inside its log context.
 */
export function requestContext(): RequestHandler {
  return (_req, res, next) => withRequest(res.locals.requestId as string, () => next());
}
