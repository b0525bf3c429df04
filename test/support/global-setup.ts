/**
 * Once per `jest` run: a real Temporal dev server (in memory, on free ports; or with
 * TIMEKEEPER_TEST_TEMPORAL=server the Temporal server 1.29.1 on PostgreSQL), a fresh test
 * database on the real PostgreSQL with our migrations, and one workflow bundle for all
 * test workers. Nothing is mocked.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { deriveAppUrl, DEFAULT_DATABASE_URL } from '../../lib/config';
import { quoteIdent, withDatabase } from '../../lib/db';
import { migrate } from '../../lib/migrate';
import { bundleWorkflows } from '../../worker/workflow-bundle';
import { freePort, startDevServer } from '../../lib/temporal-server';
import { startTestTemporal, testTemporal } from './test-temporal';
import { testDatabaseName, TEST_ENV } from './env';

/** The projects that run without Temporal or PostgreSQL. */
const SERVERLESS_PROJECTS = new Set(['unit', 'replay']);

export default async function globalSetup(globalConfig: { selectProjects?: string[] }): Promise<void> {
  // Unit and replay tests need neither server: `npm run test:unit` works without them (replay
  // then replays against ./workflows itself instead of the bundle built below).
  if (globalConfig.selectProjects?.length && globalConfig.selectProjects.every((p) => SERVERLESS_PROJECTS.has(p))) return;
  const server = process.env.TEST_DATABASE_SERVER_URL || process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  const TEST_DATABASE = testDatabaseName();
  const ownerUrl = withDatabase(server, TEST_DATABASE);
  const admin = new Client({ connectionString: withDatabase(server, 'postgres') });
  await admin.connect();
  // The tables are append-only, so a fresh run starts from a fresh database.
  await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(TEST_DATABASE)} WITH (FORCE)`);
  await admin.end();
  await migrate(ownerUrl);

  // TIMEKEEPER_TEST_TEMPORAL=server: the suites run on the production server (1.29.1 on PostgreSQL, databases named after this run's).
  const dev =
    testTemporal() === 'server'
      ? await startTestTemporal(server, TEST_DATABASE, (m) => console.log(m))
      : await startDevServer({ port: await freePort(), uiPort: 0, log: (m) => console.log(m) });
  (globalThis as { __tkDevServer?: unknown }).__tkDevServer = dev;

  const bundleFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tk-bundle-')), 'workflows.js');
  fs.writeFileSync(bundleFile, await bundleWorkflows(quietLogger));

  process.env[TEST_ENV.temporalAddress] = dev.address;
  process.env[TEST_ENV.ownerUrl] = ownerUrl;
  process.env[TEST_ENV.appUrl] = deriveAppUrl(ownerUrl);
  process.env[TEST_ENV.workflowBundle] = bundleFile;
  process.env.TK_TEST_SERVER_URL = server;
}

const noop = () => undefined;
const quietLogger = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: console.error };
