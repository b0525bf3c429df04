/**
 * Brings up what the process needs: PostgreSQL (the configured one, or an embedded one when
 * none answers and none was configured), the schema, and Temporal (the configured address,
 * or the CLI dev server as a child process).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config';
import { deriveAppUrl } from './config';
import { serverAnswers, withDatabase, databaseName } from './db';
import { migrate } from './migrate';
import { DevServer, startDevServer } from './temporal-server';

export type Log = (msg: string) => void;

export interface PreparedPostgres {
  ownerUrl: string;
  appUrl: string;
  embedded: boolean;
  stop(): Promise<void>;
}

/** Port of the embedded fallback PostgreSQL, next to the usual 5432. */
export const EMBEDDED_PG_PORT = 5433;

export async function preparePostgres(config: Config, log: Log, embeddedPort = EMBEDDED_PG_PORT): Promise<PreparedPostgres> {
  if (await serverAnswers(config.databaseUrl)) {
    await migrate(config.databaseUrl, { appPassword: config.appDbPassword, log: (m) => log(`[migrate] ${m}`) });
    return { ownerUrl: config.databaseUrl, appUrl: config.appDatabaseUrl, embedded: false, stop: async () => undefined };
  }
  if (!config.databaseUrlIsDefault) {
    throw new Error(`PostgreSQL does not answer at ${redact(config.databaseUrl)} (DATABASE_URL)`);
  }
  log(`[postgres] nothing answers at ${redact(config.databaseUrl)}; starting an embedded PostgreSQL under ${path.join(config.dataDir, 'postgres')}`);
  const { startEmbeddedPostgres } = await import('./embedded-postgres');
  // Create the data folder ourselves, traversable by others: as root the server runs as its
  // own user, which must reach its folder inside ours (a recursive mkdir of the server's
  // private 0700 folder would make every parent 0700 too).
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o755 });
  const pg = await startEmbeddedPostgres({ dataDir: path.join(config.dataDir, 'postgres'), port: embeddedPort, log: (l) => log(`[postgres] ${l}`) });
  const ownerUrl = withDatabase(pg.url, databaseName(config.databaseUrl));
  // The embedded server asks every role for a password, the runtime role included.
  const appPassword = persistentSecret(path.join(config.dataDir, 'postgres', 'app-password'));
  try {
    await migrate(ownerUrl, { appPassword, log: (m) => log(`[migrate] ${m}`) });
  } catch (err) {
    await pg.stop();
    throw err;
  }
  return { ownerUrl, appUrl: deriveAppUrl(ownerUrl, appPassword), embedded: true, stop: () => pg.stop() };
}

export interface PreparedTemporal {
  address: string;
  uiUrl: string | undefined;
  devServer?: DevServer;
  stop(): Promise<void>;
}

export async function prepareTemporal(config: Config, log: Log): Promise<PreparedTemporal> {
  if (config.temporalAddress) {
    return { address: config.temporalAddress, uiUrl: config.temporalUiUrl, stop: async () => undefined };
  }
  log(`[temporal] starting the Temporal dev server (state in ${path.join(config.dataDir, 'temporal.db')})`);
  const dev = await startDevServer({ dbFile: path.join(config.dataDir, 'temporal.db'), log });
  return { address: dev.address, uiUrl: dev.uiUrl, devServer: dev, stop: () => dev.stop() };
}

/** A random secret kept in a 0600 file, created on first use. */
function persistentSecret(file: string): string {
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const secret = randomBytes(24).toString('base64url');
  fs.writeFileSync(file, secret + '\n', { mode: 0o600 });
  return secret;
}

export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<invalid url>';
  }
}
