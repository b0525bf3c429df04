/**
 * A private Timekeeper for fault tests: its own Temporal dev server (on a SQLite file, so it
 * can be killed with SIGKILL and restarted with its state), its own PostgreSQL (embedded, so
 * it can be crashed), a worker in a child process (killable), and the API in this process
 * with a typed client; on demand also the API as its own process (`bin/api.ts`, as
 * `npm run api` runs it, killable) on a fixed port. Nothing here touches the machine's own
 * services.
 */
import { randomBytes } from 'node:crypto';
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import type { Pool } from 'pg';
import { createApp } from '../../api/app';
import { WORKER_NODE_ARGS } from '../../bin/run';
import { bundleWorkflows } from '../../worker/workflow-bundle';
import { loadKeyStore } from '../../api/auth';
import { TimekeeperClient } from '../../sdk/client';
import { Config, loadConfig } from '../../lib/config';
import { createPool, withDatabase } from '../../lib/db';
import { EmbeddedPostgres, startEmbeddedPostgres } from '../../lib/embedded-postgres';
import { migrate } from '../../lib/migrate';
import { ensureSearchAttributes } from '../../lib/temporal';
import { DevServer, freePort, startDevServer } from '../../lib/temporal-server';
import { TEST_ENV } from './env';

const ROOT = path.resolve(__dirname, '..', '..');

export interface FaultRigOptions {
  config?: Partial<Config>;
  /** Extra environment for the worker child (e.g. limits). */
  workerEnv?: Record<string, string>;
  /** Extra environment for the API child process (`startApiProcess`), e.g. LOG_LEVEL or limits. */
  apiEnv?: Record<string, string>;
  /** A prebuilt workflow bundle file; default: bundle once here. */
  workflowBundle?: string;
  log?: (m: string) => void;
  /** Extra dynamic config of the rig's Temporal dev server (startDevServer's dynamicConfig). */
  temporalDynamicConfig?: Record<string, unknown>;
}

export interface FaultRig {
  tk: TimekeeperClient;
  baseUrl: string;
  config: Config;
  pool: Pool;
  client: Client;
  temporalAddress: string;
  /** Starts a worker child process; resolves once it polls. */
  startWorker(): Promise<ChildProcess>;
  /** SIGKILL of the current worker child; resolves once it is gone. */
  killWorker(): Promise<void>;
  /** SIGKILL of the dev server; `restartTemporal` starts it again on the same file and port. */
  killTemporal(): Promise<void>;
  restartTemporal(): Promise<void>;
  /**
   * Starts `bin/api.ts` as a child process on the rig's services (same port every time);
   * resolves once it answers /healthz, with a typed client for it.
   */
  startApiProcess(): Promise<{ tk: TimekeeperClient; baseUrl: string; child: ChildProcess }>;
  /** SIGKILL of the API child process; resolves once it is gone. */
  killApiProcess(): Promise<void>;
  /** Immediate shutdown of PostgreSQL (SIGQUIT, as pg_ctl -m immediate); `restartPostgres` starts it again. */
  crashPostgres(): Promise<void>;
  restartPostgres(): Promise<void>;
  /** Process ids of the current worker child, Temporal dev server and PostgreSQL postmaster (each undefined while not running), for the benches' /proc readings. */
  pids(): { worker?: number; temporal?: number; postgres?: number };
  /** Workflow tasks waiting (Temporal's approximate backlog) on these task queues of the rig; default its main one. */
  workflowBacklog(queues?: string[]): Promise<number>;
  stop(): Promise<void>;
}

let runtimeInstalled = false;

/** Immediate shutdown of the embedded PostgreSQL under `pgDir` (SIGQUIT to the postmaster, as pg_ctl -m immediate). */
export async function crashEmbeddedPostgres(pgDir: string, pg: EmbeddedPostgres): Promise<void> {
  process.kill(postmasterPid(pgDir), 'SIGQUIT');
  await pg.stop();
}

/** The postmaster's process id, from the first line of its postmaster.pid under `pgDir`. */
function postmasterPid(pgDir: string): number {
  return Number(fs.readFileSync(path.join(pgDir, 'pgdata', 'postmaster.pid'), 'utf8').split('\n')[0]);
}

/** SIGKILL of a child process that may already be gone; resolves once it is. */
async function sigkill(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await gone;
}

export async function startFaultRig(opts: FaultRigOptions = {}): Promise<FaultRig> {
  const log = opts.log ?? (() => undefined);
  if (!runtimeInstalled) {
    try {
      Runtime.install({ logger: new DefaultLogger('ERROR') });
    } catch {
      /* already installed by another helper in this process */
    }
    runtimeInstalled = true;
  }
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-faults-'));
  fs.chmodSync(root, 0o755); // as root, the PostgreSQL user must reach its folder below ours
  const pgDir = path.join(root, 'postgres');
  const temporalFile = path.join(root, 'temporal.sqlite');

  const pgPort = await freePort();
  let pg: EmbeddedPostgres | undefined = await startEmbeddedPostgres({ dataDir: pgDir, port: pgPort, log: () => undefined });
  const dbUrl = withDatabase(pg.url, 'timekeeper');
  await migrate(dbUrl);
  log(`[rig] PostgreSQL on ${pgPort}`);

  const temporalPort = await freePort();
  let dev: DevServer | undefined = await startDevServer({ port: temporalPort, uiPort: 0, dbFile: temporalFile, log, dynamicConfig: opts.temporalDynamicConfig });
  const temporalAddress = dev.address;
  log(`[rig] Temporal on ${temporalAddress}`);

  let bundle = opts.workflowBundle;
  if (!bundle) {
    bundle = path.join(root, 'workflows.js');
    const noop = () => undefined;
    fs.writeFileSync(bundle, await bundleWorkflows({ log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: console.error }));
  }

  const taskQueue = `faults-${process.pid}-${Date.now()}`;
  // The API refuses task URLs its worker may not reach, so it gets the worker's allow list; one sealing key for API and worker (no key file).
  const outboundAllow = opts.workerEnv?.OUTBOUND_ALLOW ?? '';
  const secretsKey = randomBytes(32).toString('base64');
  const config: Config = { ...loadConfig(process.env), temporalAddress, databaseUrl: dbUrl, appDatabaseUrl: dbUrl, taskQueue, outboundAllowHosts: outboundAllow.split(',').filter(Boolean), secretsKey, ...opts.config };
  // The superuser URL: these tests are about connections and processes, not roles.
  const pool = createPool(dbUrl, { connectionTimeoutMillis: 2000 });
  const connection = await NativeConnection.connect({ address: temporalAddress });
  await ensureSearchAttributes(connection, config.temporalNamespace);
  const client = new Client({ connection, namespace: config.temporalNamespace });
  const app = createApp({ client, pool, config, keys: loadKeyStore(undefined) });
  const server = http.createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  let worker: ChildProcess | undefined;
  /** Every worker child started (benches start several), so stop() leaves none behind. */
  const children = new Set<ChildProcess>();
  const workerEnv = {
    ...process.env,
    TASK_QUEUE: taskQueue,
    [TEST_ENV.temporalAddress]: temporalAddress,
    [TEST_ENV.ownerUrl]: dbUrl,
    [TEST_ENV.appUrl]: dbUrl,
    [TEST_ENV.workflowBundle]: bundle,
    SECRETS_KEY: config.secretsKey ?? secretsKey,
    ...opts.workerEnv,
  };

  let apiChild: ChildProcess | undefined;
  const apiPort = await freePort();
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const apiEnv = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: String(apiPort),
    DATABASE_URL: dbUrl,
    APP_DATABASE_URL: dbUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_NAMESPACE: config.temporalNamespace,
    TEMPORAL_TASK_QUEUE: taskQueue,
    WRITE_TIMEOUT_MS: String(config.writeTimeoutMs),
    TIMEKEEPER_API_KEYS: '',
    TIMEKEEPER_API_KEYS_FILE: '',
    LOG_LEVEL: 'warn',
    TEMPORAL_LOG_LEVEL: 'ERROR',
    OUTBOUND_ALLOW_HOSTS: config.outboundAllowHosts.join(','),
    SECRETS_KEY: config.secretsKey ?? secretsKey,
    ...opts.apiEnv,
  };

  const rig: FaultRig = {
    tk: new TimekeeperClient({ baseUrl }),
    baseUrl,
    config,
    pool,
    client,
    temporalAddress,
    startWorker() {
      // node itself, not the tsx CLI: the CLI runs the script in a grandchild process that a
      // SIGKILL of the CLI would leave running. tsx in the main thread only, as `npm run worker`.
      const child = spawn(process.execPath, [...WORKER_NODE_ARGS, path.join(ROOT, 'test', 'support', 'worker-process.ts')], {
        cwd: ROOT,
        env: workerEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stderr!.on('data', (b: Buffer) => log(`[worker ${child.pid}] ${b.toString().trimEnd()}`));
      worker = child;
      children.add(child);
      child.once('exit', () => children.delete(child));
      return new Promise((resolve, reject) => {
        child.once('exit', (code) => reject(new Error(`worker exited early with ${code}`)));
        child.stdout!.on('data', (b: Buffer) => {
          if (b.toString().includes('worker ready')) resolve(child);
        });
      });
    },
    killWorker: () => sigkill(worker),
    async startApiProcess() {
      // node --import tsx for the same reason as the worker: SIGKILL must reach the API itself.
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bin', 'api.ts')], { cwd: ROOT, env: apiEnv, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout!.on('data', (b: Buffer) => log(`[api ${child.pid}] ${b.toString().trimEnd()}`));
      child.stderr!.on('data', (b: Buffer) => log(`[api ${child.pid}] ${b.toString().trimEnd()}`));
      apiChild = child;
      const deadline = Date.now() + 60_000;
      for (;;) {
        if (child.exitCode !== null) throw new Error(`the API process exited early with ${child.exitCode}`);
        const up = await fetch(`${apiUrl}/healthz`).then((r) => r.ok, () => false);
        if (up) return { tk: new TimekeeperClient({ baseUrl: apiUrl }), baseUrl: apiUrl, child };
        if (Date.now() > deadline) throw new Error('the API process did not answer /healthz within 60 s');
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    killApiProcess: () => sigkill(apiChild),
    async killTemporal() {
      const d = dev;
      if (!d) return;
      const gone = new Promise((r) => (d.process.exitCode !== null ? r(null) : d.process.once('exit', r)));
      d.process.kill('SIGKILL');
      await gone;
      dev = undefined;
    },
    async restartTemporal() {
      dev = await startDevServer({ port: temporalPort, uiPort: 0, dbFile: temporalFile, log, dynamicConfig: opts.temporalDynamicConfig });
    },
    async crashPostgres() {
      await crashEmbeddedPostgres(pgDir, pg!);
      pg = undefined;
    },
    async restartPostgres() {
      pg = await startEmbeddedPostgres({ dataDir: pgDir, port: pgPort, log: () => undefined });
    },
    pids() {
      const alive = (c: ChildProcess | undefined) => (c && c.exitCode === null && c.signalCode === null ? c.pid : undefined);
      return { worker: alive(worker), temporal: dev ? alive(dev.process) : undefined, postgres: pg ? postmasterPid(pgDir) : undefined };
    },
    async workflowBacklog(queues = [config.taskQueue]) {
      let n = 0;
      for (const name of queues) {
        const r = await client.workflowService.describeTaskQueue({ namespace: config.temporalNamespace, taskQueue: { name }, taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW, reportStats: true });
        n += Number(r.stats?.approximateBacklogCount ?? 0);
      }
      return n;
    },
    async stop() {
      await rig.killApiProcess();
      await rig.killWorker();
      for (const c of children) c.kill('SIGKILL');
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
      await connection.close().catch(() => undefined);
      await pool.end().catch(() => undefined);
      await dev?.stop();
      await pg?.stop();
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
  return rig;
}
