/**
 * Bearer API keys with scopes. With no keys configured the API is open, which is only
 * allowed on a loopback address (see assertSafeBinding).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import { isIPv4 } from 'node:net';
import type { RequestHandler } from 'express';
import { DomainError, ErrorCode } from '../lib/domain/errors';
import { Operation, Scope, SCOPES } from './scopes';

export { Operation, Scope };

interface ApiKey {
  digest: Buffer;
  scopes: Set<string>;
}

export interface KeyStore {
  readonly open: boolean;
  authorise(header: string | undefined, op: readonly Scope[]): void;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

function parseInline(spec: string): { key: string; scopes: string[] }[] {
  return spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const i = entry.lastIndexOf(':');
      if (i <= 0) throw new Error(`TIMEKEEPER_API_KEYS entry "${entry.slice(0, 4)}…" must look like key:scope[|scope]`);
      return { key: entry.slice(0, i), scopes: entry.slice(i + 1).split('|') };
    });
}

export function loadKeyStore(inline?: string, file?: string): KeyStore {
  const entries: { key: string; scopes: string[] }[] = [];
  if (inline) entries.push(...parseInline(inline));
  if (file) {
    const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as { keys?: { key: string; scopes: string[] }[] };
    if (!Array.isArray(parsed.keys)) throw new Error(`${file}: expected {"keys":[{"key":…,"scopes":[…]}]}`);
    entries.push(...parsed.keys);
  }
  const keys: ApiKey[] = entries.map((e) => {
    if (typeof e.key !== 'string' || e.key.length < 8) throw new Error('API keys must be at least 8 characters');
    for (const s of e.scopes) if (!SCOPES.includes(s)) throw new Error(`unknown API key scope "${s}" (known: ${SCOPES.join(', ')})`);
    return { digest: digest(e.key), scopes: new Set(e.scopes) };
  });
  return {
    open: keys.length === 0,
    authorise(header, op) {
      if (keys.length === 0 || op.length === 0) return;
      const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
      if (!m) throw DomainError.field(ErrorCode.Unauthorized, 'authorization', 'missing or not a Bearer token').withMessage('an API key is required: Authorization: Bearer <key>');
      const d = digest(m[1]);
      // Compare digests in constant time so response timing does not leak key prefixes.
      const key = keys.find((k) => timingSafeEqual(k.digest, d));
      if (!key) throw DomainError.field(ErrorCode.Unauthorized, 'authorization', 'unknown API key').withMessage('unknown API key');
      if (key.scopes.has(Scope.Admin) || op.some((s) => key.scopes.has(s))) return;
      throw DomainError.field(ErrorCode.Forbidden, 'authorization', 'insufficient scope').withMessage(
        `this key lacks a scope for the operation (needs one of: ${[...op, Scope.Admin].join(', ')})`,
      );
    },
  };
}

export function requireScope(store: KeyStore, op: readonly Scope[]): RequestHandler {
  return (req, _res, next) => {
    store.authorise(req.headers.authorization, op);
    next();
  };
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** An open API must not be reachable from other machines. */
export function assertSafeBinding(store: KeyStore, host: string): void {
  // 127.0.0.0/8 only as an IPv4 literal: a name such as "127.example.com" may resolve anywhere.
  if (store.open && !LOOPBACK.has(host) && !(isIPv4(host) && host.startsWith('127.'))) {
    throw new Error(`refusing to listen on ${host} without API keys: set TIMEKEEPER_API_KEYS or TIMEKEEPER_API_KEYS_FILE, or HOST=127.0.0.1`);
  }
}
