/**
 * Security headers on every response (issue 16: JSON went out without `nosniff`, /docs without
 * a CSP): `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`, and a default
 * Content-Security-Policy that lets a response load nothing and be framed by no one. The routers
 * that serve pages replace the CSP with their own (the dashboard's strict one, /docs' in
 * api/system/docs.ts; a downloaded artifact gets a sandbox).
 *
 * Hand-written rather than helmet: three fixed headers, no options to get wrong, and nothing
 * else of helmet's set applies to a JSON API behind TLS termination.
 */
import type { RequestHandler } from 'express';

/** For responses that are data, not pages: nothing to load, no frame. */
export const DATA_CSP = "default-src 'none'; frame-ancestors 'none'";

export function securityHeaders(): RequestHandler {
  return (_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('Content-Security-Policy', DATA_CSP);
    next();
  };
}
