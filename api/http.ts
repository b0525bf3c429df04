/**
 * Request helpers for the routers: parse with a contract schema (every failure names the
 * field), and take query strings and form bodies only as they were sent: a parameter given
 * twice, or bytes that are not UTF-8, are refused rather than guessed at or replaced.
 */
import type { IncomingMessage } from 'node:http';
import type { Request } from 'express';
import { DomainError } from '../lib/domain/errors';
import { hostileTextProblem } from '../lib/domain/input-gate';

/** Parses with a schema; a failure becomes a 400 naming `prefix + path` (lib/domain/platform/refusals.ts). */
export { parse } from '../lib/domain/platform/refusals';

/** A parsed query or form object with every value given once (the parsers make repeats arrays), and no NUL or lone surrogate. */
function once(o: unknown): Record<string, unknown> {
  const entries = Object.entries((o ?? {}) as Record<string, unknown>);
  for (const [k, v] of entries) if (Array.isArray(v)) throw DomainError.validation(k, `is given ${v.length} times; send it once`);
  const hostile = hostileTextProblem(o ?? {});
  if (hostile) throw DomainError.validation(hostile.field, hostile.reason);
  // fromEntries defines own properties: a parameter named __proto__ stays a parameter (and is refused as unknown).
  return Object.fromEntries(entries);
}

/** The query parameters, each given once, after checking the raw query string is UTF-8 (routes call it after auth). */
export function queryObject(req: Request): Record<string, unknown> {
  const i = req.originalUrl.indexOf('?');
  if (i >= 0) assertUtf8Pairs(req.originalUrl.slice(i + 1).split('#')[0], 'query');
  return once(req.query);
}

/** The fields of a form body (each given once) or of a JSON object body; {} for anything else. */
export function formObject(req: Request): Record<string, unknown> {
  if (!req.body || typeof req.body !== 'object' || Array.isArray(req.body)) return {};
  return req.is('application/x-www-form-urlencoded') ? once(req.body) : { ...(req.body as Record<string, unknown>) };
}

/** A JSON body, or {} when there is none. */
export function jsonBody(req: Request): unknown {
  return req.body === undefined ? {} : req.body;
}

const FATAL_UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Checks `k=v&…` text (a query string or a form body): every name and value must decode as
 * UTF-8 percent-encoding. The standard parsers replace invalid sequences with U+FFFD, which
 * would store something other than what was sent.
 */
export function assertUtf8Pairs(text: string, where: string): void {
  for (const pair of text.split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    const name = decodeOr(rawName, undefined);
    if (name === undefined) throw DomainError.validation(where, 'has a parameter name that is not valid UTF-8 percent-encoding');
    if (eq >= 0 && decodeOr(pair.slice(eq + 1), undefined) === undefined) throw DomainError.validation(name, 'is not valid UTF-8 percent-encoding');
  }
}

function decodeOr<T>(s: string, fallback: T): string | T {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return fallback;
  }
}

/** body-parser `verify` for form bodies: raw bytes and percent-escapes must both be UTF-8. */
export function verifyFormBody(_req: IncomingMessage, _res: unknown, buf: Buffer): void {
  let text: string;
  try {
    text = FATAL_UTF8.decode(buf);
  } catch {
    throw DomainError.validation('body', 'is not valid UTF-8');
  }
  assertUtf8Pairs(text, 'body');
}
