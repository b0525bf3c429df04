/**
 * A whole Timekeeper for one test file: a worker on its own task queue, the API on a free
 * port, both against the real Temporal server and PostgreSQL started by global-setup.
 */
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { Pool } from 'pg';
import { createApp } from '../../api/app';
import { loadKeyStore } from '../../api/auth';
import { Config, loadConfig, taskRunQueues } from '../../lib/config';
import { createPool } from '../../lib/db';
import { ensureSearchAttributes } from '../../lib/temporal';
import { createTimekeeperWorker, type TimekeeperWorker } from '../../worker/worker';
import { TEST_ENV } from './env';

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
  /** Secrets task agents may read by variable name (stands in for the worker's environment). */
  secrets?: Record<string, string>;
}

export interface TestSystem {
  baseUrl: string;
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

export async function startTestSystem(opts: TestSystemOptions = {}): Promise<TestSystem> {
  const env = testEnv();
  if (!runtimeInstalled) {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
    runtimeInstalled = true;
  }
  const taskQueue = `test-${process.pid}-${Date.now()}-${queueCounter++}`;
  const config: Config = {
    ...loadConfig({}),
    temporalAddress: env.temporalAddress,
    databaseUrl: env.ownerUrl,
    appDatabaseUrl: env.appUrl,
    taskQueue,
    ...opts.config,
  };
  const pool = createPool(env.appUrl);
  const ownerPool = createPool(env.ownerUrl, { max: 4 });
  const connection = await Connection.connect({ address: env.temporalAddress });
  await ensureSearchAttributes(connection, config.temporalNamespace);
  const client = new Client({ connection, namespace: config.temporalNamespace });
  const nativeConnection = await NativeConnection.connect({ address: env.temporalAddress });

  let worker: TimekeeperWorker | undefined;
  let running: Promise<void> | undefined;
  const sys: TestSystem = {
    baseUrl: '',
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
        workflowBundle: { codePath: env.workflowBundle },
        tasks: { queues: taskRunQueues(config), outboundAllowHosts: config.outboundAllowHosts, secret: (name) => opts.secrets?.[name] },
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
      await sys.stopWorker();
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
      await connection.close();
      await nativeConnection.close();
      await pool.end();
      await ownerPool.end();
    },
  };
  if (opts.worker !== false) await sys.startWorker();

  const app = createApp({ client, pool, config, keys: loadKeyStore(opts.apiKeys) });
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  sys.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return sys;
}

/** fetch + JSON, returning status and parsed body. */
export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(base + path, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON: leave as text so the test can see it */
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

let sessionCounter = 0;
/** A session id no other test (or earlier run) uses. */
export function uniqueSessionId(prefix = 's'): string {
  return `${prefix}_${process.pid}_${Date.now().toString(36)}_${sessionCounter++}`;
}
