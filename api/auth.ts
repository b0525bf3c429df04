/**
 * The API's use of the bearer API keys (lib/platform/api-keys.ts: the key store, its
 * principals): the route guard requireScope leaves the key's Principal on the response for
 * the handlers (principalOf); owners and agent bounds of what a request creates or sees; and
 * the rule that an open API (no keys configured) listens only on a loopback address
 * (assertSafeBinding).
 */
import { isIPv4 } from 'node:net';
import type { RequestHandler, Response } from 'express';
import { describeBounds, withinBounds, type AgentBounds } from '../lib/domain/agent-bounds';
import { DomainError, ErrorCode } from '../lib/domain/errors';
import { OPEN_PRINCIPAL, type KeyStore, type Principal } from '../lib/platform/api-keys';
import { Operation, Scope } from '../lib/platform/scopes';

export { Operation, Scope };
export { loadKeyStore, OPEN_PRINCIPAL, type KeyStore, type Principal } from '../lib/platform/api-keys';

export function requireScope(store: KeyStore, op: readonly Scope[]): RequestHandler {
  return (req, res, next) => {
    res.locals.principal = store.authorise(req.headers.authorization, op);
    next();
  };
}

/** The principal requireScope left on the response (unbound where no route set one). */
export const principalOf = (res: Response): Principal => (res.locals.principal as Principal | undefined) ?? OPEN_PRINCIPAL;

/**
 * The owner a create stores, for this principal: the body's agent id if within the key's bounds
 * (403 naming `field` if not), else the key's single agent id; a key bound to several agents
 * must name one (400). An unbound key stores what the body says (possibly none).
 */
export function ownerForCreate(p: Principal, requested: string | undefined, field = 'agent_id'): string | undefined {
  if (!p.bounds) return requested;
  if (requested === undefined) {
    if (p.agentId !== undefined) return p.agentId;
    throw DomainError.validation(field, `is required: this key is bound to several agents (${describeBounds(p.bounds)}); name the one the object belongs to`);
  }
  if (!withinBounds(p.bounds, requested)) throw outOfBounds(p.bounds, field, requested);
  return requested;
}

/** 403 naming the field: a value outside the key's agent bounds. */
export function outOfBounds(bounds: AgentBounds, field: string, value: string): DomainError {
  return DomainError.field(ErrorCode.Forbidden, field, 'outside the agents this key is bound to').withMessage(
    `${field} ${JSON.stringify(value)} is outside the agents this API key is bound to (${describeBounds(bounds)})`,
  );
}

/** Whether the principal may see an object owned by `agentId` (objects outside answer 404, as if absent). */
export const mayAccess = (p: Principal, agentId: string | null | undefined): boolean => withinBounds(p.bounds, agentId);

/** 403 for a route that spans all agents (instance-wide data) asked with a bound key. */
export function requireUnbound(p: Principal, what: string): void {
  if (p.bounds) {
    throw DomainError.field(ErrorCode.Forbidden, 'authorization', 'bound to agents').withMessage(
      `${what} is instance-wide: it needs a key not bound to agents (this one is bound to ${describeBounds(p.bounds)})`,
    );
  }
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** An open API must not be reachable from other machines. */
export function assertSafeBinding(store: KeyStore, host: string): void {
  // 127.0.0.0/8 only as an IPv4 literal: a name such as "127.example.com" may resolve anywhere.
  if (store.open && !LOOPBACK.has(host) && !(isIPv4(host) && host.startsWith('127.'))) {
    throw new Error(`refusing to listen on ${host} without API keys: set TIMEKEEPER_API_KEYS or TIMEKEEPER_API_KEYS_FILE, or HOST=127.0.0.1`);
  }
}
