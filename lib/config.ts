/**
 * Runtime configuration, read once from the environment.
 *
 * Every value has a default that works on a fresh development machine; production sets
 * the addresses and credentials explicitly (see docs/operations.md).
 */
import path from 'node:path';

export interface Config {
  /** API port. Default 8000, where the seed's agent loop expects the timeline service. */
  port: number;
  /** API bind address. Default 127.0.0.1; any other address requires API keys. */
  host: string;
  /** Owner/admin connection, used for creating the database and running migrations. */
  databaseUrl: string;
  /** True when DATABASE_URL was not set, so start-up may fall back to an embedded PostgreSQL. */
  databaseUrlIsDefault: boolean;
  /** Runtime connection as the role that may only SELECT and INSERT. */
  appDatabaseUrl: string;
  /** Temporal frontend address; undefined means "start the CLI dev server ourselves". */
  temporalAddress: string | undefined;
  temporalNamespace: string;
  taskQueue: string;
  /** Base URL of the Temporal Web UI, for links in session descriptions. */
  temporalUiUrl: string;
  /** Where the dev server keeps its SQLite file and the embedded PostgreSQL its cluster. Default ./data */
  dataDir: string;
  /** Largest accepted event content, in bytes of canonical JSON. Default 262144 (256 KiB), at most 1 MiB. */
  maxContentBytes: number;
  /** Session workflows continue-as-new after this many appends in one run. Default 1000, at most 1800 (server hard limit 2000). */
  updatesPerRun: number;
  /** How long a write waits for the session workflow before answering 503. Default 30000 ms. */
  writeTimeoutMs: number;
  /** Inline API keys ("key:scope[|scope],..."), or undefined. */
  apiKeys: string | undefined;
  /** Path of a JSON API keys file, or undefined. */
  apiKeysFile: string | undefined;
}

export const APP_ROLE = 'timekeeper_app';
export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/timekeeper';

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return n;
}

/** The runtime URL defaults to the owner URL with the user swapped for the SELECT/INSERT-only role. */
export function deriveAppUrl(ownerUrl: string, password?: string): string {
  const u = new URL(ownerUrl);
  u.username = APP_ROLE;
  u.password = password ?? '';
  return u.toString();
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const databaseUrl = env.DATABASE_URL || DEFAULT_DATABASE_URL;
  return {
    port: int(env, 'PORT', 8000, 0, 65535),
    host: env.HOST || '127.0.0.1',
    databaseUrl,
    databaseUrlIsDefault: !env.DATABASE_URL,
    appDatabaseUrl: env.APP_DATABASE_URL || deriveAppUrl(databaseUrl, env.APP_DB_PASSWORD),
    temporalAddress: env.TEMPORAL_ADDRESS || undefined,
    temporalNamespace: env.TEMPORAL_NAMESPACE || 'default',
    taskQueue: env.TEMPORAL_TASK_QUEUE || 'timekeeper',
    temporalUiUrl: (env.TEMPORAL_UI_URL || 'http://127.0.0.1:8233').replace(/\/+$/, ''),
    dataDir: path.resolve(env.TIMEKEEPER_DATA_DIR || 'data'),
    maxContentBytes: int(env, 'MAX_CONTENT_BYTES', 262144, 1, 1024 * 1024),
    // Below the server's hard limit of 2000 updates per run, with room for in-flight ones.
    updatesPerRun: int(env, 'SESSION_UPDATES_PER_RUN', 1000, 1, 1800),
    writeTimeoutMs: int(env, 'WRITE_TIMEOUT_MS', 30_000, 100),
    apiKeys: env.TIMEKEEPER_API_KEYS || undefined,
    apiKeysFile: env.TIMEKEEPER_API_KEYS_FILE || undefined,
  };
}
