/**
 * Bearer API keys with scopes and, optionally, agent bounds (lib/domain/agent-bounds.ts): a
 * key whose entry names `agents` acts only for those agent ids or id prefixes. authorise()
 * answers the key's Principal. With no keys configured the API is open, which is only allowed
 * on a loopback address (api/auth.ts assertSafeBinding); the open API's principal is unbound.
 * Shared by the API (api/auth.ts: route guards, owners) and the worker's /metrics listener
 * (worker/metrics-listener.ts), which check the same keys.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import { parseAgentBounds, singleAgentId, type AgentBounds } from '../domain/agent-bounds';
import { DomainError, ErrorCode } from '../domain/errors';
import { Scope, SCOPES } from './scopes';

/** Who a request acts as: its key's scopes and agent bounds. */
export interface Principal {
  readonly scopes: ReadonlySet<string>;
  /** The agent ids and prefixes the key is bound to; undefined: unbound (spans all agents). */
  readonly bounds?: AgentBounds;
  /** The one agent id the key names, when it names exactly one (a create without an agent id gets it). */
  readonly agentId?: string;
}

/** The principal of an open API (no keys configured) and of public routes: unbound. */
export const OPEN_PRINCIPAL: Principal = { scopes: new Set(SCOPES) };

interface ApiKey {
  digest: Buffer;
  principal: Principal;
}

/** A key entry as TIMEKEEPER_API_KEYS and TIMEKEEPER_API_KEYS_FILE give it. */
interface KeyEntry {
  key: string;
  scopes: string[];
  agents?: unknown[];
}

export interface KeyStore {
  readonly open: boolean;
  /** The key's principal, or a 401/403 DomainError. */
  authorise(header: string | undefined, op: readonly Scope[]): Principal;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * `key:scope[|scope][@agent[|agent]]`, comma-separated: the agents after `@` (exact ids or
 * prefixes ending in `*`) bind the key. Scopes never contain `@`; a key may (the last `@`
 * after the last `:` starts the agents).
 */
function parseInline(spec: string): KeyEntry[] {
  return spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const i = entry.lastIndexOf(':');
      if (i <= 0) throw new Error(`TIMEKEEPER_API_KEYS entry "${entry.slice(0, 4)}…" must look like key:scope[|scope][@agent[|agent]]`);
      const rest = entry.slice(i + 1);
      const at = rest.indexOf('@');
      const scopes = (at < 0 ? rest : rest.slice(0, at)).split('|');
      return { key: entry.slice(0, i), scopes, ...(at < 0 ? {} : { agents: rest.slice(at + 1).split('|') }) };
    });
}

function principalOfEntry(e: KeyEntry): Principal {
  if (e.agents === undefined) return { scopes: new Set(e.scopes) };
  if (!Array.isArray(e.agents)) throw new Error(`API key "${e.key.slice(0, 4)}…": "agents" must be an array of agent ids or prefixes ending in *`);
  const bounds = parseAgentBounds(e.agents);
  if (typeof bounds === 'string') throw new Error(`API key "${e.key.slice(0, 4)}…": agents ${bounds}`);
  return { scopes: new Set(e.scopes), bounds, agentId: singleAgentId(bounds) };
}

export function loadKeyStore(inline?: string, file?: string): KeyStore {
  const entries: KeyEntry[] = [];
  if (inline) entries.push(...parseInline(inline));
  if (file) {
    const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as { keys?: KeyEntry[] };
    if (!Array.isArray(parsed.keys)) throw new Error(`${file}: expected {"keys":[{"key":…,"scopes":[…],"agents":[…]}]} ("agents" optional)`);
    entries.push(...parsed.keys);
  }
  const keys: ApiKey[] = entries.map((e) => {
    if (typeof e.key !== 'string' || e.key.length < 8) throw new Error('API keys must be at least 8 characters');
    for (const s of e.scopes) if (!SCOPES.includes(s)) throw new Error(`unknown API key scope "${s}" (known: ${SCOPES.join(', ')})`);
    return { digest: digest(e.key), principal: principalOfEntry(e) };
  });
  return {
    open: keys.length === 0,
    authorise(header, op) {
      if (keys.length === 0 || op.length === 0) return OPEN_PRINCIPAL;
      const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
      if (!m) throw DomainError.field(ErrorCode.Unauthorized, 'authorization', 'missing or not a Bearer token').withMessage('an API key is required: Authorization: Bearer <key>');
      const d = digest(m[1]);
      // Compare digests in constant time so response timing does not leak key prefixes.
      const key = keys.find((k) => timingSafeEqual(k.digest, d));
      if (!key) throw DomainError.field(ErrorCode.Unauthorized, 'authorization', 'unknown API key').withMessage('unknown API key');
      const { scopes } = key.principal;
      if (scopes.has(Scope.Admin) || op.some((s) => scopes.has(s))) return key.principal;
      throw DomainError.field(ErrorCode.Forbidden, 'authorization', 'insufficient scope').withMessage(
        `this key lacks a scope for the operation (needs one of: ${[...op, Scope.Admin].join(', ')})`,
      );
    },
  };
}
