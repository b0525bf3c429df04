/**
 * Process entry shared by `npm start` (everything on embedded defaults), `npm run worker`
 * and `npm run api` (one role each, for production).
 */
import http from 'node:http';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createApp } from '../api/app';
import { assertSafeBinding, loadKeyStore } from '../api/auth';
import { preparePostgres, prepareTemporal, PreparedPostgres, PreparedTemporal, redact } from '../lib/bootstrap';
import { loadConfig } from '../lib/config';
import { LIMITS } from '../lib/domain/limits';
import { createPool } from '../lib/db';
import { migrate } from '../lib/migrate';
import { ensureSearchAttributes } from '../lib/temporal';
import { supervise } from '../worker/supervise';
import { createTimekeeperWorker } from '../worker/worker';

export interface RunOptions {
  worker: boolean;
  api: boolean;
  /** Start embedded PostgreSQL/Temporal when not configured (development). */
  embedded: boolean;
  /**
   * Restart the worker inside the process when it stops with an error (`npm start`). Without
   * it (`npm run worker`) such a stop shuts the process down with exit status 1, for the
   * process manager to restart.
   */
  superviseWorker?: boolean;
}

const log = (m: string) => console.log(m);

export async function run(opts: RunOptions): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (err) {
    console.error('[timekeeper] start-up failed:', (err as Error).message);
    process.exit(1);
  }
  const cleanups: (() => Promise<unknown>)[] = [];
  let stopping = false;
  const shutdown = async (signal: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    log(`[timekeeper] ${signal}: shutting down`);
    for (const fn of cleanups.reverse()) {
      await fn().catch((e: Error) => console.error('[timekeeper] during shutdown:', e.message));
    }
    process.exit(exitCode);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));

  try {
    Runtime.install({ logger: new DefaultLogger(config.temporalLogLevel) });
    const keys = loadKeyStore(config.apiKeys, config.apiKeysFile);
    if (opts.api) assertSafeBinding(keys, config.host);

    let pg: PreparedPostgres;
    if (opts.embedded) {
      pg = await preparePostgres(config, log);
    } else {
      if (opts.worker) await migrate(config.databaseUrl, { appPassword: config.appDbPassword, log: (m) => log(`[migrate] ${m}`) });
      pg = { ownerUrl: config.databaseUrl, appUrl: config.appDatabaseUrl, embedded: false, stop: async () => undefined };
    }
    cleanups.push(() => pg.stop());

    let temporal: PreparedTemporal;
    if (opts.embedded) temporal = await prepareTemporal(config, log);
    else temporal = { address: config.temporalAddress ?? '127.0.0.1:7233', uiUrl: config.temporalUiUrl, stop: async () => undefined };
    cleanups.push(() => temporal.stop());

    const pool = createPool(pg.appUrl);
    cleanups.push(() => pool.end());

    // One native (Rust core) connection serves the worker and the API's client alike.
    const connection = await NativeConnection.connect({ address: temporal.address });
    cleanups.push(() => connection.close());
    const client = new Client({ connection, namespace: config.temporalNamespace });

    if (opts.worker) {
      const create = () =>
        createTimekeeperWorker({
          connection,
          namespace: config.temporalNamespace,
          taskQueue: config.taskQueue,
          pool,
          sessions: config,
          wake: { url: config.intentWakeUrl, token: config.intentWakeToken },
        });
      let worker: Worker = await create();
      let running: Promise<void> = worker.run();
      if (opts.superviseWorker) {
        // The first run is already going; later ones are created afresh (a stopped worker cannot run again).
        let first = true;
        void supervise(
          async () => {
            if (!first) {
              worker = await create();
              running = worker.run();
              log(`[worker] polling task queue "${config.taskQueue}" again`);
            }
            first = false;
            await running;
          },
          { stopping: () => stopping },
        );
      } else {
        running.catch((e: Error) => {
          console.error('[worker] stopped with an error:', e);
          void shutdown('worker failure', 1);
        });
      }
      // Drain: finish in-flight tasks before the pools and servers go away.
      cleanups.push(async () => {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running.catch(() => undefined);
      });
      log(`[worker] polling task queue "${config.taskQueue}" on ${temporal.address}`);
    }

    if (opts.api) {
      await ensureSearchAttributes(connection, config.temporalNamespace);
      const app = createApp({ client, pool, config: { ...config, temporalUiUrl: temporal.uiUrl ?? config.temporalUiUrl }, keys });
      const server = http.createServer(app);
      // Longer than the usual load-balancer idle timeout (60 s), so the balancer closes first
      // and never sends a request into a socket we are closing.
      server.keepAliveTimeout = LIMITS.httpKeepAliveMs;
      server.headersTimeout = LIMITS.httpHeadersTimeoutMs;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.port, config.host, resolve);
      });
      cleanups.push(
        () =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeIdleConnections();
          }),
      );
      log(`[api] Timekeeper API:  http://${config.host}:${config.port}  (${keys.open ? 'open: no API keys configured' : 'API keys required'})`);
      if (config.omlPort > 0) {
        // The same routes on OML's port (3847 by default there), so an agent set up for OML needs no change.
        const oml = http.createServer(app);
        oml.keepAliveTimeout = LIMITS.httpKeepAliveMs;
        oml.headersTimeout = LIMITS.httpHeadersTimeoutMs;
        await new Promise<void>((resolve, reject) => {
          oml.once('error', reject);
          oml.listen(config.omlPort, config.host, resolve);
        });
        cleanups.push(
          () =>
            new Promise<void>((resolve) => {
              oml.close(() => resolve());
              oml.closeIdleConnections();
            }),
        );
        log(`[api] OML-compatible:  http://${config.host}:${config.omlPort}/api/events`);
      }
    }
    if (temporal.uiUrl && opts.embedded) log(`[temporal] Temporal UI:    ${temporal.uiUrl}`);
    log(`[postgres] events in:       ${redact(pg.ownerUrl)}${pg.embedded ? ' (embedded)' : ''}`);
    log('[timekeeper] ready');
  } catch (err) {
    console.error('[timekeeper] start-up failed:', (err as Error).message);
    stopping = true;
    for (const fn of cleanups.reverse()) await fn().catch(() => undefined);
    process.exit(1);
  }
}
