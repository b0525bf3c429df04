/**
 * `npm run cluster [-- --workers N --apis M]`: the production topology on this machine, as
 * docker-compose.yml lays it out but without Docker: the Temporal server 1.29.1 on the
 * configured PostgreSQL (databases `temporal` and `temporal_visibility`, created and migrated,
 * beside the events database), N worker processes, M API processes, and HAProxy in front of
 * the APIs when M > 1. Ctrl-C / SIGTERM stops everything it started.
 *
 * PORT is where the API (or its balancer) listens, TEMPORAL_PORT the Temporal frontend
 * (default 7233; the other Temporal ports are derived from it), DATABASE_URL the PostgreSQL.
 */
import path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { startCluster } from '../lib/cluster/cluster';
import { temporalDatabases } from '../lib/cluster/temporal-server';
import { clusterSettings, loadConfig } from '../lib/config';
import { migrate } from '../lib/migrate';
import { redact } from '../lib/bootstrap';
import { ensureBuild } from './ensure-build';

const ROOT = path.resolve(__dirname, '..');

const count = (v: string) => {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < 1 || n > 64) throw new InvalidArgumentError('an integer from 1 to 64');
  return n;
};

const program = new Command('cluster')
  .description('Temporal server on PostgreSQL, N workers, M APIs behind HAProxy')
  .option('--workers <n>', 'worker processes', count, 2)
  .option('--apis <n>', 'API processes (HAProxy in front when more than 1)', count, 2)
  .option('--temporal-database <name>', 'Temporal\'s database (visibility: <name>_visibility)', 'temporal')
  .option('--temporal-max-conns <n>', 'connections per Temporal persistence pool (default 20, visibility half; four services)', count)
  .parse();

async function main(): Promise<void> {
  const opts = program.opts<{ workers: number; apis: number; temporalDatabase: string; temporalMaxConns?: number }>();
  const config = loadConfig();
  const { temporalPort } = clusterSettings();
  const log = (m: string) => console.log(m);
  await ensureBuild();
  await migrate(config.databaseUrl, { appPassword: config.appDbPassword, log: (m) => log(`[migrate] ${m}`) });
  const launcher = path.join(ROOT, 'bin', 'launch.cjs');
  const cluster = await startCluster({
    databaseUrl: config.databaseUrl,
    temporalDatabases: temporalDatabases(opts.temporalDatabase),
    temporalPort,
    apiPort: config.port,
    workers: opts.workers,
    apis: opts.apis,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    maxConns: opts.temporalMaxConns,
    command: (role) => ({ file: process.execPath, args: [launcher, role] }),
    env: { TIMEKEEPER_BUILD: 'skip' },
    log,
  });
  let stopping = false;
  const stop = async (why: string, code: number) => {
    if (stopping) return;
    stopping = true;
    log(`[cluster] ${why}: stopping`);
    await cluster.stop();
    process.exit(code);
  };
  process.once('SIGINT', () => void stop('SIGINT', 0));
  process.once('SIGTERM', () => void stop('SIGTERM', 0));
  cluster.onUnexpectedExit((what, code, signal) => log(`[cluster] ${what} exited (${signal ?? `status ${code}`}); the rest keeps running`));
  log(`[cluster] ready: API ${cluster.apiUrl}${opts.apis > 1 ? ` (HAProxy → ${cluster.apiUrls.join(', ')})` : ''}, Temporal ${cluster.temporalAddress}, ${opts.workers} worker(s), events in ${redact(config.databaseUrl)}`);
  log('[cluster] Temporal Web UI: not served here (the CLI carries it only inside its dev server); compose runs temporalio/ui:2.42.1 on 8233 against this same frontend');
}

main().catch((err: Error) => {
  console.error(`[cluster] start-up failed: ${err.message}`);
  process.exit(1);
});
