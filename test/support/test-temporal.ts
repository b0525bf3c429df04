/**
 * Which Temporal a jest run uses: the CLI's dev server (default), or with
 * TIMEKEEPER_TEST_TEMPORAL=server the production server (1.29.1 on PostgreSQL, as `npm run
 * cluster` and docker-compose run it) on the machine's PostgreSQL, its two databases named
 * after the run's test database. Read by global-setup and global-teardown.
 */
import { Client as PgClient } from 'pg';
import { ensureServerBinaries, freeTemporalPort, prepareTemporalDatabases, startTemporalServer, temporalDatabases, TemporalServer } from '../../lib/cluster/temporal-server';
import { quoteIdent, withDatabase } from '../../lib/db';

/** `dev` (the CLI's dev server, default) or `server` (1.29.1 on PostgreSQL). */
export const testTemporal = (): 'dev' | 'server' => (process.env.TIMEKEEPER_TEST_TEMPORAL === 'server' ? 'server' : 'dev');

/** Few connections per persistence pool: the PostgreSQL is shared (the machine's) or small (a private one, 100 connections). */
export const TEST_MAX_CONNS = 5;

/** The Temporal server alone for a jest run, its two databases named after the run's test database (dropped by `dropTestTemporal`). */
export async function startTestTemporal(serverUrl: string, testDatabase: string, log: (m: string) => void): Promise<TemporalServer> {
  const bins = await ensureServerBinaries(log);
  const dbs = temporalDatabases(`${testDatabase}_temporal`);
  await dropTestTemporal(serverUrl, testDatabase);
  await prepareTemporalDatabases(bins.sqlTool, serverUrl, dbs, log);
  return startTemporalServer({ binary: bins.server, databaseUrl: serverUrl, databases: dbs, port: await freeTemporalPort(), namespace: 'default', maxConns: TEST_MAX_CONNS, log });
}

export async function dropTestTemporal(serverUrl: string, testDatabase: string): Promise<void> {
  const dbs = temporalDatabases(`${testDatabase}_temporal`);
  const admin = new PgClient({ connectionString: withDatabase(serverUrl, 'postgres') });
  await admin.connect();
  try {
    for (const db of [dbs.main, dbs.visibility]) await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(db)} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
