/**
 * A whole Timekeeper for one test file: a worker on its own task queue, the API on a free
 * port, both against the real Temporal server and PostgreSQL started by global-setup.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { Pool } from 'pg';
import { createApp } from '../../api/app';
import { Problem, TimekeeperApiError, TimekeeperClient } from '../../sdk/client';
import { loadKeyStore } from '../../api/auth';
import { Config, loadConfig, readSecret, taskRunQueues } from '../../lib/config';
import { createPool } from '../../lib/db';
import { readOrCreateKeyFile, taskSecretsOf } from '../../lib/secrets-key';
import os from 'node:os';
import path from 'node:path';
import { configureLogger } from '../../lib/log';
import type { DestinationStream } from 'pino';
import { ensureSearchAttributes } from '../../lib/temporal';
import { createTimekeeperWorker, type TimekeeperWorker } from '../../worker/worker';
import { stopFireShards } from '../../clients/task-fires';
import { TEST_ENV } from './env';
import { temporalTracing } from '../../lib/otel/temporal-tracing';

let runtimeInstalled = false;

export function testEnv() {
  const get = (k: string) => {
    const v = process.env[k];
    if (!v) throw new Error(`${k} is not set: run the tests through jest (test/support/global-setup.ts)`);
    return v;
  };
  return {
    temporalAddress: get(TEST_ENV.temporalAddress),
    ownerUrl: get(TEST_ENV.ownerUrl),
    appUrl: get(TEST_ENV.appUrl),
    workflowBundle: get(TEST_ENV.workflowBundle),
  };
}

export interface TestSystemOptions {
  /** Start an in-process worker. Default true. */
  worker?: boolean;
  apiKeys?: string;
  config?: Partial<Config>;
  /** Secrets task agents may read by variable name (stands in for the worker's environment; registered as AGENT_SECRETS unless config.agentSecrets says otherwise). */
  secrets?: Record<string, string>;
  /** Capture this process's logs (API and in-process worker) instead of writing them to stdout. */
  logDestination?: DestinationStream;
  /** Run the transparency log's builder from this system's worker (signing key shared by every system on the test database). Default false. */
  tlog?: boolean;
}

export interface TestSystem {
  baseUrl: string;
  /** The typed client for this system's API, checking every answer against the route contracts. */
  tk: TimekeeperClient;
  config: Config;
  client: Client;
  /** Runtime pool: the SELECT/INSERT-only role, as the application uses. */
  pool: Pool;
  /** Owner/superuser pool, for tests that play the attacker. */
  ownerPool: Pool;
  worker?: TimekeeperWorker;
  startWorker(): Promise<TimekeeperWorker>;
  stopWorker(): Promise<void>;
  stop(): Promise<void>;
}

let queueCounter = 0;

/** One log signing key per test database (a seed file in the temp folder), so every test system's builder signs alike. */
export function testLogKeyFile(ownerUrl: string): string {
  const file = path.join(os.tmpdir(), `timekeeper-test-log-${new URL(ownerUrl).pathname.slice(1)}.key`);
  readOrCreateKeyFile(file);
  return file;
}

/** The test system of a test file, for use inside its tests. */
export interface FileTestSystem {
  readonly sys: TestSystem;
  readonly tk: TimekeeperClient;
}

/** Starts one test system for the file (beforeAll) and stops it after the file (afterAll). Call at the top of a test file. */
export function useTestSystem(opts: TestSystemOptions = {}): FileTestSystem {
  let sys: TestSystem | undefined;
  beforeAll(async () => {
    sys = await startTestSystem(opts);
  });
  afterAll(async () => {
    await sys?.stop();
  });
  return {
    get sys() {
      if (!sys) throw new Error('the test system is not started yet (use it inside tests)');
      return sys;
    },
    get tk() {
      return this.sys.tk;
    },
  };
}

export async function startTestSystem(opts: TestSystemOptions = {}): Promise<TestSystem> {
  const env = testEnv();
  if (!runtimeInstalled) {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
    runtimeInstalled = true;
  }
  // Tests that read the logs capture them; the others keep only warnings, so the run's output stays readable.
  configureLogger(opts.logDestination ? { level: 'info', destination: opts.logDestination } : { level: 'warn' });
  const taskQueue = `test-${process.pid}-${Date.now()}-${queueCounter++}`;
  const config: Config = {
    ...loadConfig({}),
    temporalAddress: env.temporalAddress,
    databaseUrl: env.ownerUrl,
    appDatabaseUrl: env.appUrl,
    taskQueue,
    agentSecrets: Object.keys(opts.secrets ?? {}),
    // One key for this system's API and worker, kept in memory (no key file under ./data).
    secretsKey: randomBytes(32).toString('base64'),
    ...opts.config,
  };
  const pool = createPool(env.appUrl);
  const ownerPool = createPool(env.ownerUrl, { max: 4 });
  // One native connection for the API's client and the worker, as bin/run.ts has it.
  const nativeConnection = await NativeConnection.connect({ address: env.temporalAddress });
  await ensureSearchAttributes(nativeConnection, config.temporalNamespace);
  // As bin/run.ts: with export on, the API's Temporal client opens the client spans.
  const tracing = config.otelEndpoint ? temporalTracing({ endpoint: config.otelEndpoint, serviceName: config.otelServiceName }) : undefined;
  const client = new Client({ connection: nativeConnection, namespace: config.temporalNamespace, ...(tracing ? { interceptors: { workflow: [tracing.clientInterceptor] } } : {}) });

  const app = createApp({ client, pool, config, keys: loadKeyStore(opts.apiKeys) });
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Agents that report results later reach this API, on its test port.
  if (!opts.config?.publicUrl) config.publicUrl = baseUrl;

  let worker: TimekeeperWorker | undefined;
  let running: Promise<void> | undefined;
  const sys: TestSystem = {
    baseUrl,
    tk: new TimekeeperClient({ baseUrl, validateResponses: true }),
    config,
    client,
    pool,
    ownerPool,
    async startWorker() {
      worker = await createTimekeeperWorker({
        connection: nativeConnection,
        namespace: config.temporalNamespace,
        taskQueue,
        pool,
        sessions: config,
        workflowBundle: { codePath: env.workflowBundle },
        wake: { url: config.intentWakeUrl, token: config.intentWakeToken },
        otel: config.otelEndpoint ? { endpoint: config.otelEndpoint, serviceName: config.otelServiceName, pollMs: config.otelPollMs, settleMs: config.otelSettleMs } : undefined,
        tasks: { queues: taskRunQueues(config), outboundAllowHosts: config.outboundAllowHosts, outboundEchoBodies: config.outboundEchoBodies, secret: (name) => readSecret(name, config.agentSecrets, opts.secrets ?? {}), agentSecrets: config.agentSecrets, agentBounds: config.agentTaskBounds, secrets: taskSecretsOf(config), publicUrl: config.publicUrl, artifactsDir: config.artifactsDir },
        workflowStackTraces: config.workflowStackTraces,
        tlog: opts.tlog ? { ...config, logSigningKeyFile: config.logSigningKeyFile ?? testLogKeyFile(env.ownerUrl) } : undefined,
      });
      running = worker.run();
      sys.worker = worker;
      return worker;
    },
    async stopWorker() {
      if (worker && worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      worker = undefined;
      sys.worker = undefined;
    },
    async stop() {
      // Its queue's fire shards end with it: no other test system's workers poll that queue.
      await stopFireShards(client, pool, taskQueue);
      await sys.stopWorker();
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
      await tracing?.shutdown();
      await nativeConnection.close();
      await pool.end();
      await ownerPool.end();
    },
  };
  if (opts.worker !== false) await sys.startWorker();
  return sys;
}

/** A refusal as tests look at it: the status, the problem details and the headers. */
export interface ProblemReply {
  status: number;
  body: Problem;
  headers: Headers;
  error: TimekeeperApiError;
}

const asReply = (e: TimekeeperApiError): ProblemReply => ({ status: e.status, body: e.problem, headers: e.headers, error: e });

/** The refusal a call must end in; fails the test when the call succeeds or fails otherwise. */
export async function refusal(call: Promise<unknown>): Promise<ProblemReply> {
  let ok: unknown;
  try {
    ok = await call;
  } catch (err) {
    if (err instanceof TimekeeperApiError) return asReply(err);
    throw err;
  }
  throw new Error(`expected a problem response, got ${JSON.stringify(ok).slice(0, 300)}`);
}

/** Success or refusal alike, for calls whose outcome is the point (races, retries). */
export async function settle<T extends { status: number }>(call: Promise<T>): Promise<T | ProblemReply> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof TimekeeperApiError) return asReply(err);
    throw err;
  }
}

/** Whether a settled call was refused (and so carries problem details). */
export function isRefusal<T extends { status: number }>(r: T | ProblemReply): r is ProblemReply {
  return 'error' in r && r.error instanceof TimekeeperApiError;
}

/** The successful calls among settled ones. */
export function successes<T extends { status: number }>(rs: (T | ProblemReply)[]): T[] {
  return rs.filter((r): r is T => !isRefusal(r));
}
