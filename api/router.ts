/** Registers a route from its contract: method, path and the scopes it requires, in one place. */
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { DomainError } from '../lib/domain/errors';
import { hostileTextProblem } from '../lib/domain/input-gate';
import type { KeyStore } from './auth';
import { requireScope } from './auth';
import type { Method, RouteContract } from './contract';
import { SCOPES, type Scope } from '../lib/platform/scopes';

export function route(r: Pick<Router, Method>, keys: KeyStore, c: RouteContract, handler: (req: Request, res: Response) => Promise<void> | void): void {
  r[c.method](
    c.path,
    (_req, res, next) => {
      // The contract's path names the route in metrics and logs (never the raw URL).
      res.locals.route = c.path;
      next();
    },
    requireScope(keys, c.scopes),
    // Path parameters through the input gate too (a decoded %00 is a NUL like any other).
    (req, _res, next) => {
      const hostile = hostileTextProblem(req.params);
      next(hostile ? DomainError.validation(hostile.field, hostile.reason) : undefined);
    },
    handler,
  );
}

/** Whether the request says it carries a body (a length above 0, or chunked). */
const hasBody = (req: Request) => (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0') || req.headers['transfer-encoding'] !== undefined;

/**
 * The key check of every route, before any body is read (issue 16: a request without a key got
 * 400 or 413, after up to 576 KiB were parsed; the docs say 401 first). Mounted ahead of the
 * body parsers, it finds the route's contract by method and path as the routers will, checks
 * its scopes and leaves the router (the route checks again, cheaply). A request for no route
 * that carries a body needs a valid key of any scope: only an authenticated client gets a
 * body read, even to hear 404.
 */
export function authenticateFirst(keys: KeyStore, contracts: readonly RouteContract[]): RequestHandler {
  const gate = Router();
  if (keys.open) return gate;
  for (const c of contracts) {
    gate[c.method](c.path, (req, res, next) => {
      res.locals.route = c.path;
      keys.authorise(req.headers.authorization, c.scopes);
      next('router');
    });
  }
  gate.use((req, _res, next) => {
    if (hasBody(req)) keys.authorise(req.headers.authorization, SCOPES as Scope[]);
    next();
  });
  return gate;
}
