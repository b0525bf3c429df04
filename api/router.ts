/** Registers a route from its contract: method, path and the scopes it requires, in one place. */
import type { Request, Response, Router } from 'express';
import { DomainError } from '../lib/domain/errors';
import { hostileTextProblem } from '../lib/domain/input-gate';
import type { KeyStore } from './auth';
import { requireScope } from './auth';
import type { Method, RouteContract } from './contract';

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
