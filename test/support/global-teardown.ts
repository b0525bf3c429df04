import { Client } from 'pg';
import { quoteIdent, withDatabase } from '../../lib/db';
import { dropTestTemporal, testTemporal } from './test-temporal';
import { testDatabaseName } from './env';

export default async function globalTeardown(): Promise<void> {
  const dev = (globalThis as { __tkDevServer?: { stop(): Promise<void> } }).__tkDevServer;
  await dev?.stop();
  const server = process.env.TK_TEST_SERVER_URL;
  if (!server) return;
  const admin = new Client({ connectionString: withDatabase(server, 'postgres') });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(testDatabaseName())} WITH (FORCE)`);
  await admin.end();
  if (testTemporal() === 'server') await dropTestTemporal(server, testDatabaseName());
}
