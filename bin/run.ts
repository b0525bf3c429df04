/**
 * Process entry shared by `npm start` (everything on embedded defaults, the worker as a
 * supervised child process), `npm run worker` and `npm run api` (one role each, for production).
 */
import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { createApp } from '../api/app';
import { IntentClient } from '../clients/intents';
import { LIMITS } from '../lib/domain/limits';
import { listenApi } from '../api/listen';
import { assertSafeBinding, loadKeyStore } from '../api/auth';
import { preparePostgres, prepareTemporal, PreparedPostgres, PreparedTemporal, redact } from '../lib/bootstrap';
import { loadConfig, readSecret, taskRunQueues } from '../lib/config';
import { taskSecretsOf } from '../lib/secrets-key';
import { createPool } from '../lib/db';
import { migrate } from '../lib/migrate';
import { ensureSearchAttributes } from '../lib/temporal';
import { freePort } from '../lib/temporal-server';
import { configureLogger, log as logger } from '../lib/log';
import { listenWorkerMetrics } from '../worker/metrics-listener';
import { supervise } from '../worker/supervise';
import { bundleWorkflows, createTimekeeperWorker } from '../worker/worker';
import { temporalTracing } from '../lib/otel/temporal-tracing';

export interface RunOptions {
  worker: boolean;
  api: boolean;
  /** Start embedded PostgreSQL/Temporal when not configured (development). */
  embedded: boolean;
  /**
   * Run the worker as a child process (`bin/worker.ts`) and restart it with backoff whenever
   * it exits (`npm start`). Without it (`npm run worker`) the worker runs in this process and
   * a stop with an error shuts the process down with exit status 1, for the process manager
   * to restart.
   */
  superviseWorker?: boolean;
}

/**
 * True when this is the compiled runtime (dist/bin/*.js, bin/launch.cjs), false under tsx
 * (development, tests). The compiled one loads the workflow bundle its build wrote and starts
 * its worker child compiled too.
 */
const COMPILED = __filename.endsWith('.js');
const ROOT = path.resolve(__dirname, '..');
/** The workflow bundle `npm run build` writes (bin/build.mjs). */
export const BUILT_WORKFLOW_BUNDLE = path.join(ROOT, 'dist', 'workflow-bundle.js');

/**
 * The worker (`npm run worker`'s entry) in a child process with an IPC channel, so it stops when
 * we are gone: compiled through bin/launch.cjs when we are compiled (the build was just checked),
 * else `bin/worker.ts` with tsx registered in its main thread only (bin/tsx-main-thread.cjs says why).
 */
function spawnWorker(env: NodeJS.ProcessEnv): ChildProcess {
  const args = COMPILED ? [path.join(ROOT, 'bin', 'launch.cjs'), 'worker'] : [...WORKER_NODE_ARGS, path.join(ROOT, 'bin', 'worker.ts')];
  return spawn(process.execPath, args, { env: COMPILED ? { ...env, TIMEKEEPER_BUILD: 'skip' } : env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

/** How a worker process loads TypeScript: tsx in its main thread, nothing in the workflow threads. */
export const WORKER_NODE_ARGS = ['-r', path.join(ROOT, 'bin', 'tsx-main-thread.cjs')];

/** Start-up messages ("[postgres] …") as log lines, the bracketed part as the component. */
const log = (m: string) => {
  const match = /^\[([a-z]+)\]\s*(.*)$/s.exec(m);
  if (match) logger().info({ component: match[1] }, match[2]);
  else logger().info(m);
};

/** The Temporal SDK's own log (runtime, worker, workflow and activity loggers) into ours. */
const TEMPORAL_TO_PINO = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;

export async function run(opts: RunOptions): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (err) {
    logger().fatal({ component: 'timekeeper', err: (err as Error).message }, 'start-up failed');
    process.exit(1);
  }
  configureLogger({ level: config.logLevel, pretty: config.logFormat === undefined ? undefined : config.logFormat === 'pretty' });
  const cleanups: (() => Promise<unknown>)[] = [];
  let stopping = false;
  const shutdown = async (signal: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    log(`[timekeeper] ${signal}: shutting down`);
    for (const fn of cleanups.reverse()) {
      await fn().catch((e: Error) => logger().error({ component: 'timekeeper', err: e.message }, 'error during shutdown'));
    }
    process.exit(exitCode);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));

  try {
    Runtime.install({
      logger: new DefaultLogger(config.temporalLogLevel, (entry) => logger()[TEMPORAL_TO_PINO[entry.level]]({ component: 'temporal', ...entry.meta }, entry.message)),
    });
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
    // With export on, the API's workflow starts and updates open Temporal client spans whose context the worker's RunWorkflow spans continue.
    const tracing = config.otelEndpoint && opts.api ? temporalTracing({ endpoint: config.otelEndpoint, serviceName: config.otelServiceName }) : undefined;
    if (tracing) cleanups.push(() => tracing.shutdown());
    const client = new Client({ connection, namespace: config.temporalNamespace, ...(tracing ? { interceptors: { workflow: [tracing.clientInterceptor] } } : {}) });

    let workerMetricsUrl: string | undefined;
    if (opts.worker && opts.superviseWorker) {
      // npm start: the worker runs in a child process (`bin/worker.ts` on the services
      // prepared here), restarted with backoff whenever it exits, even by SIGKILL or a crash
      // that would take an in-process worker down with the API.
      let child: ChildProcess | undefined;
      // Compiled: the build's bundle. Under tsx: bundled once here, so a restart does not spend
      // its first seconds bundling again.
      let bundle = COMPILED ? BUILT_WORKFLOW_BUNDLE : path.join(config.dataDir, `workflow-bundle-${process.pid}.js`);
      if (config.workflowBundlePath) bundle = config.workflowBundlePath;
      else if (!COMPILED) {
        const written = bundle;
        fs.mkdirSync(config.dataDir, { recursive: true });
        fs.writeFileSync(written, await bundleWorkflows());
        cleanups.push(async () => fs.rmSync(written, { force: true }));
      }
      // The child's series (appends, intents, task runs) on a private port, merged into the API's /metrics.
      const metricsPort = config.workerMetricsPort || (await freePort());
      workerMetricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
      const env = { ...process.env, DATABASE_URL: pg.ownerUrl, APP_DATABASE_URL: pg.appUrl, APP_DB_PASSWORD: '', TEMPORAL_ADDRESS: temporal.address, TIMEKEEPER_WORKFLOW_BUNDLE: bundle, WORKER_METRICS_PORT: String(metricsPort), HOST: '127.0.0.1' };
      const supervised = supervise(
        async () => {
          child = spawnWorker(env);
          logger().info({ component: 'worker', worker_pid: child.pid, task_queue: config.taskQueue }, 'worker process started');
          const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
          if (code !== 0) throw new Error(`worker process ${child.pid} exited with ${signal ?? `status ${code}`}`);
        },
        { stopping: () => stopping, log: (m) => logger().warn({ component: 'worker' }, m.replace(/^\[worker\] /, '')) },
      );
      // Drain: SIGTERM lets the child finish its in-flight tasks before the pools and servers go away.
      cleanups.push(async () => {
        if (child && child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM');
          await once(child, 'exit');
        }
        await supervised;
      });
      log(`[worker] supervised worker process polling task queue "${config.taskQueue}" on ${temporal.address}`);
    } else if (opts.worker) {
      const worker = await createTimekeeperWorker({
        connection,
        namespace: config.temporalNamespace,
        taskQueue: config.taskQueue,
        pool,
        sessions: config,
        workflowBundle: prebuiltBundle(config.workflowBundlePath),
        wake: { url: config.intentWakeUrl, token: config.intentWakeToken },
        otel: config.otelEndpoint ? { endpoint: config.otelEndpoint, serviceName: config.otelServiceName, pollMs: config.otelPollMs, settleMs: config.otelSettleMs } : undefined,
        tasks: { queues: taskRunQueues(config), outboundAllowHosts: config.outboundAllowHosts, outboundEchoBodies: config.outboundEchoBodies, secret: (name) => readSecret(name, config.agentSecrets), agentSecrets: config.agentSecrets, agentBounds: config.agentTaskBounds, secrets: taskSecretsOf(config), publicUrl: config.publicUrl, slotsDefault: config.taskSlotsDefault, slotsCore: config.taskSlotsCore, artifactsDir: config.artifactsDir },
        tlog: config,
        workflowStackTraces: config.workflowStackTraces,
      });
      const running = worker.run();
      running.catch((e: Error) => {
        logger().error({ component: 'worker', err: e }, 'worker stopped with an error');
        void shutdown('worker failure', 1);
      });
      // Drain: finish in-flight tasks before the pools and servers go away.
      cleanups.push(async () => {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running.catch(() => undefined);
      });
      // Under npm start's supervisor (an IPC channel to it): stop when the supervisor is gone, never run orphaned.
      if (process.send) process.once('disconnect', () => void shutdown('supervisor gone'));
      log(`[worker] polling task queue "${config.taskQueue}" on ${temporal.address}`);
      // Without the API in this process its GET /metrics is elsewhere: the worker's series need their own port.
      if (!opts.api && config.workerMetricsPort > 0) {
        const m = await listenWorkerMetrics(config.host, config.workerMetricsPort, keys);
        cleanups.push(() => m.close());
        log(`[worker] metrics:          http://${config.host}:${m.port}/metrics`);
      }
      // Open intents, and blocked ones waiting for retry_after, whose workflow was terminated or lost
      // get their timers back (IntentClient.reconcileOpen). One sweep at a time: a long one is not doubled.
      const intents = IntentClient.fromConfig(client, pool, config);
      let sweeping: Promise<unknown> | undefined;
      const reconcile = () =>
        (sweeping ??= intents
          .reconcileOpen()
          .then(
            (ids) => ids.length > 0 && logger().warn({ component: 'intents', restarted: ids.length, event_ids: ids.slice(0, 20) }, 'restarted the workflows of intents whose run was not running'),
            (e: Error) => logger().warn({ component: 'intents', err: e.message }, 'intent reconcile sweep failed; trying again later'),
          )
          .finally(() => (sweeping = undefined)));
      void reconcile();
      const sweep = setInterval(() => void reconcile(), LIMITS.intentReconcileIntervalMs);
      sweep.unref();
      cleanups.push(async () => clearInterval(sweep));
    }

    if (opts.api) {
      await ensureSearchAttributes(connection, config.temporalNamespace);
      const app = createApp({ client, pool, config: { ...config, temporalUiUrl: temporal.uiUrl ?? config.temporalUiUrl }, keys, workerMetricsUrl });
      const listeners = await listenApi(app, { host: config.host, port: config.port, omlPort: config.omlPort, connectionsPerClient: config.connectionsPerClientMax });
      cleanups.push(() => listeners.close());
      log(`[api] Timekeeper API:  http://${config.host}:${listeners.port}  (${keys.open ? 'open: no API keys configured' : 'API keys required'})`);
      // The same routes on OML's port (3847 by default there), so an agent set up for OML needs no change.
      if (listeners.omlPort !== undefined) log(`[api] OML-compatible:  http://${config.host}:${listeners.omlPort}/api/events`);
    }
    if (temporal.uiUrl && opts.embedded) log(`[temporal] Temporal UI:    ${temporal.uiUrl}`);
    log(`[postgres] events in:       ${redact(pg.ownerUrl)}${pg.embedded ? ' (embedded)' : ''}`);
    log('[timekeeper] ready');
  } catch (err) {
    logger().fatal({ component: 'timekeeper', err: (err as Error).message }, 'start-up failed');
    stopping = true;
    for (const fn of cleanups.reverse()) await fn().catch(() => undefined);
    process.exit(1);
  }
}

/** TIMEKEEPER_WORKFLOW_BUNDLE, else the build's bundle when compiled; undefined: bundle ./workflows at start (tsx). */
function prebuiltBundle(configured: string | undefined): { codePath: string } | undefined {
  if (configured) return { codePath: configured };
  return COMPILED ? { codePath: BUILT_WORKFLOW_BUNDLE } : undefined;
}
