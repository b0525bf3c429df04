/**
 * The production topology for tests (lib/cluster/cluster.ts), private end to end: its own
 * PostgreSQL (initdb on a free port, so it can be crashed) holding the events database and
 * Temporal's two, the Temporal server 1.29.1 on it, two worker processes, two API processes
 * and HAProxy in front of them. Workers and APIs run `bin/worker.ts` / `bin/api.ts` under tsx
 * (as `npm run worker` / `npm run api` do in development), each killable on its own.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { TimekeeperClient } from '../../sdk/client';
import { WORKER_NODE_ARGS } from '../../bin/run';
import { Cluster, Role, startCluster } from '../../lib/cluster/cluster';
import { freeTemporalPort } from '../../lib/cluster/temporal-server';
import { createPool, withDatabase } from '../../lib/db';
import { EmbeddedPostgres, startEmbeddedPostgres } from '../../lib/embedded-postgres';
import { migrate } from '../../lib/migrate';
import { freePort } from '../../lib/temporal-server';
import { crashEmbeddedPostgres, type FaultRig } from './fault-rig';
import { TEST_MAX_CONNS } from './test-temporal';

const ROOT = path.resolve(__dirname, '..', '..');

/** How tests run a worker / API process: tsx, in the main thread only for the worker (bin/tsx-main-thread.cjs). */
export const tsxCommand = (role: Role) => ({
  file: process.execPath,
  args: role === 'worker' ? [...WORKER_NODE_ARGS, path.join(ROOT, 'bin', 'worker.ts')] : ['--import', 'tsx', path.join(ROOT, 'bin', 'api.ts')],
});

/** The fault rig's surface for the scenarios (test/support/fault-scenarios.ts), on the cluster; `tk` goes through the balancer. */
export interface ClusterRig extends Pick<FaultRig, 'tk' | 'pool' | 'client' | 'crashPostgres' | 'restartPostgres' | 'stop'> {
  cluster: Cluster;
}

export async function startClusterRig(o: { workers?: number; apis?: number; workflowBundle?: string; env?: Record<string, string>; log?: (m: string) => void } = {}): Promise<ClusterRig> {
  const log = o.log ?? (() => undefined);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-cluster-'));
  fs.chmodSync(root, 0o755); // as root, the PostgreSQL user must reach its folder below ours
  const pgDir = path.join(root, 'postgres');
  const pgPort = await freePort();
  let pg: EmbeddedPostgres | undefined = await startEmbeddedPostgres({ dataDir: pgDir, port: pgPort, log: () => undefined });
  const dbUrl = withDatabase(pg.url, 'timekeeper');
  await migrate(dbUrl);
  const apiPort = await freePort();
  const secretsKey = randomBytes(32).toString('base64');
  let cluster: Cluster;
  try {
    cluster = await startCluster({
      databaseUrl: dbUrl,
      temporalPort: await freeTemporalPort(),
      apiPort,
      workers: o.workers ?? 2,
      apis: o.apis ?? 2,
      namespace: 'default',
      taskQueue: 'timekeeper',
      command: tsxCommand,
      maxConns: TEST_MAX_CONNS,
      env: {
        // The superuser URL: these tests are about processes and connections, not roles.
        APP_DATABASE_URL: dbUrl,
        APP_DB_PASSWORD: '',
        SECRETS_KEY: secretsKey,
        TIMEKEEPER_API_KEYS: '',
        TIMEKEEPER_API_KEYS_FILE: '',
        LOG_LEVEL: 'warn',
        TEMPORAL_LOG_LEVEL: 'ERROR',
        WRITE_TIMEOUT_MS: '15000',
        ...(o.workflowBundle ? { TIMEKEEPER_WORKFLOW_BUNDLE: o.workflowBundle } : {}),
        ...o.env,
      },
      log,
    });
  } catch (err) {
    // Nothing of the cluster is left running (startCluster stops what it started); the PostgreSQL is ours to stop.
    await pg.stop();
    fs.rmSync(root, { recursive: true, force: true });
    throw err;
  }
  const pool = createPool(dbUrl, { connectionTimeoutMillis: 2000 });
  const connection = await Connection.connect({ address: cluster.temporalAddress });
  const client = new Client({ connection, namespace: 'default' });
  return {
    cluster,
    tk: new TimekeeperClient({ baseUrl: cluster.apiUrl }),
    pool,
    client,
    async crashPostgres() {
      await crashEmbeddedPostgres(pgDir, pg!);
      pg = undefined;
    },
    async restartPostgres() {
      pg = await startEmbeddedPostgres({ dataDir: pgDir, port: pgPort, log: () => undefined });
    },
    async stop() {
      await cluster.stop().catch((e: Error) => log(`[rig] stop: ${e.message}`));
      await connection.close().catch(() => undefined);
      await pool.end().catch(() => undefined);
      await pg?.stop();
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
