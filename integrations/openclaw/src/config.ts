/**
 * The plugin's settings, as `plugins.entries.timekeeper.config` in openclaw.json gives them
 * (`api.pluginConfig`); openclaw.plugin.json's `configSchema` describes the same fields.
 * Parsed by hand so the plugin needs nothing but the typed client at run time.
 */
import path from 'node:path';
import os from 'node:os';

/** The OpenClaw hooks this plugin can record (names from PluginHookName in openclaw's hook-runner-global-*.d.ts). */
export const RECORDABLE_HOOKS = ['session_start', 'message_received', 'llm_input', 'llm_output', 'before_tool_call', 'after_tool_call', 'session_end'] as const;
export type RecordableHook = (typeof RECORDABLE_HOOKS)[number];

/** What happens to message bodies (user input, model output, tool params and results); tool names are always kept. */
export type Redaction = 'none' | 'hash' | 'drop';

export interface TimekeeperPluginConfig {
  /** Timekeeper's base URL, e.g. http://127.0.0.1:8000. */
  url: string;
  /** A `gateway`-scoped API key (creates, appends, ends); absent in Timekeeper's open mode. */
  apiKey?: string;
  hooks: ReadonlySet<RecordableHook>;
  redaction: Redaction;
  /** Folder of the durable outbox (journal.jsonl, status.json). */
  outboxDir: string;
  /** Most events the outbox holds undelivered; newer ones are dropped (and counted) beyond it. */
  maxPending: number;
  /** Prefix of the Timekeeper session id (the OpenClaw sessionId follows). */
  sessionPrefix: string;
  /** Per-request timeout towards Timekeeper. */
  requestTimeoutMs: number;
  /** Backoff between delivery attempts: first wait and ceiling. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** fsync the journal after every enqueue (survives power loss, costs a disk flush per event). */
  fsync: boolean;
  /** On service stop (Gateway or CLI exit), wait at most this long for the outbox to drain (default 4 s: OpenClaw gives plugin services 5 s to stop). */
  flushOnStopMs: number;
  /** At the end of an agent run (agent_end) and when a CLI process runs dry, wait at most this long for the outbox to drain; 0 turns it off. */
  flushOnAgentEndMs: number;
  /** Log every hook payload the plugin sees (first 300 characters) at info level. */
  debug: boolean;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function defaultOutboxDir(): string {
  const base = process.env.XDG_STATE_HOME || path.join(os.homedir(), '.local', 'state');
  return path.join(base, 'openclaw-timekeeper', 'outbox');
}

/** Reads `api.pluginConfig` (falling back to TIMEKEEPER_URL / TIMEKEEPER_API_KEY); throws ConfigError naming the field. */
export function parseConfig(raw: Record<string, unknown> | undefined, env: NodeJS.ProcessEnv = process.env): TimekeeperPluginConfig {
  const c = raw ?? {};
  const known = new Set(['url', 'apiKey', 'hooks', 'redaction', 'outboxDir', 'maxPending', 'sessionPrefix', 'requestTimeoutMs', 'retryBaseMs', 'retryMaxMs', 'fsync', 'flushOnStopMs', 'flushOnAgentEndMs', 'debug']);
  for (const k of Object.keys(c)) if (!known.has(k)) throw new ConfigError(`timekeeper: unknown config field ${k}`);
  const str = (k: string): string | undefined => {
    const v = c[k];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || v === '') throw new ConfigError(`timekeeper: ${k} must be a non-empty string`);
    return v;
  };
  const int = (k: string, dflt: number, min: number, max: number): number => {
    const v = c[k];
    if (v === undefined) return dflt;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new ConfigError(`timekeeper: ${k} must be an integer ${min}-${max}`);
    return v;
  };
  const url = str('url') ?? env.TIMEKEEPER_URL;
  if (!url) throw new ConfigError('timekeeper: url is required (or set TIMEKEEPER_URL)');
  if (!/^https?:\/\/[^/]+/.test(url)) throw new ConfigError('timekeeper: url must be an http(s) URL');
  let hooks: Set<RecordableHook> = new Set(RECORDABLE_HOOKS);
  if (c.hooks !== undefined) {
    if (!Array.isArray(c.hooks) || c.hooks.some((h) => !(RECORDABLE_HOOKS as readonly unknown[]).includes(h)))
      throw new ConfigError(`timekeeper: hooks must be a list of ${RECORDABLE_HOOKS.join(', ')}`);
    hooks = new Set(c.hooks as RecordableHook[]);
  }
  const redaction = (str('redaction') ?? 'none') as Redaction;
  if (!['none', 'hash', 'drop'].includes(redaction)) throw new ConfigError('timekeeper: redaction must be none, hash or drop');
  const sessionPrefix = c.sessionPrefix === undefined ? '' : c.sessionPrefix;
  if (typeof sessionPrefix !== 'string' || (sessionPrefix !== '' && !/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/.test(sessionPrefix)))
    throw new ConfigError('timekeeper: sessionPrefix must be up to 64 characters of letters, digits and . _ : -, starting with a letter or digit');
  for (const k of ['fsync', 'debug']) if (c[k] !== undefined && typeof c[k] !== 'boolean') throw new ConfigError(`timekeeper: ${k} must be a boolean`);
  return {
    url: url.replace(/\/+$/, ''),
    apiKey: str('apiKey') ?? env.TIMEKEEPER_API_KEY,
    hooks,
    redaction,
    outboxDir: path.resolve(str('outboxDir') ?? defaultOutboxDir()),
    maxPending: int('maxPending', 10000, 1, 10_000_000),
    sessionPrefix,
    requestTimeoutMs: int('requestTimeoutMs', 10000, 100, 600000),
    retryBaseMs: int('retryBaseMs', 500, 1, 600000),
    retryMaxMs: int('retryMaxMs', 30000, 1, 3600000),
    fsync: c.fsync === true,
    flushOnStopMs: int('flushOnStopMs', 4000, 0, 600000),
    flushOnAgentEndMs: int('flushOnAgentEndMs', 3000, 0, 600000),
    debug: c.debug === true,
  };
}
