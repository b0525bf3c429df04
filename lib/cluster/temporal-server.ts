/**
 * The production Temporal server (1.29.1, the version docker-compose.yml runs) as a child
 * process on PostgreSQL, for `npm run cluster` and the tests that run on that topology.
 *
 * The binaries are built with `go install` into the same cache as the Temporal CLI; the
 * schema comes from the server module's own files (what the admin-tools image runs in
 * compose's temporal-schema job), applied with the server's SQL tool; the configuration is
 * deploy/temporal/server.yaml, the one file compose mounts too, rendered by the server from
 * the environment built here.
 */
import { ChildProcess, execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { Client } from 'pg';
import { quoteIdent, withDatabase } from '../db';
import { ensureSearchAttributes } from '../temporal';
import { ensureGoTool, goModuleDir, portFree } from '../temporal-server';

const execFileP = promisify(execFile);

export const TEMPORAL_SERVER_VERSION = '1.29.1';
export const TEMPORAL_SERVER_MODULE = `go.temporal.io/server/cmd/server@v${TEMPORAL_SERVER_VERSION}`;
export const TEMPORAL_SQL_TOOL_MODULE = `go.temporal.io/server/cmd/tools/sql@v${TEMPORAL_SERVER_VERSION}`;

const ROOT = path.resolve(__dirname, '..', '..');
/** `--root deploy --config temporal --env server`: the server reads deploy/temporal/server.yaml (and nothing else there). */
export const SERVER_CONFIG_FILE = path.join(ROOT, 'deploy', 'temporal', 'server.yaml');
export const DYNAMIC_CONFIG_FILE = path.join(ROOT, 'deploy', 'temporal', 'dynamicconfig.yaml');

/** The two databases Temporal keeps, on the same PostgreSQL server as (but apart from) the events database. */
export interface TemporalDatabases {
  main: string;
  visibility: string;
}

/** `temporal` / `temporal_visibility`, as compose names them; tests pass a private prefix. */
export const temporalDatabases = (base = 'temporal'): TemporalDatabases => ({ main: base, visibility: `${base}_visibility` });

/**
 * Bounds of the frontend port: the membership ports (300 below) must be at least 1024, and at
 * most 32767, because Temporal's SQL schema keeps them in a smallint (cluster_membership.rpc_port;
 * a higher one stops the server at start-up with "out of range for type smallint").
 */
export const MIN_TEMPORAL_PORT = 1324;
export const MAX_TEMPORAL_PORT = 33000;

/**
 * Every port of the four services, derived from the frontend's as the image's defaults are
 * from 7233: history +1, matching +2, worker +6, the frontend's HTTP API +10, and each
 * service's membership port 300 below its gRPC port.
 */
export function temporalPorts(frontend: number) {
  if (!Number.isInteger(frontend) || frontend < MIN_TEMPORAL_PORT || frontend > MAX_TEMPORAL_PORT) {
    throw new Error(`TEMPORAL_PORT must be an integer from ${MIN_TEMPORAL_PORT} to ${MAX_TEMPORAL_PORT}, got ${frontend}`);
  }
  return {
    frontend,
    frontendHttp: frontend + 10,
    history: frontend + 1,
    matching: frontend + 2,
    worker: frontend + 6,
    frontendMembership: frontend - 300,
    historyMembership: frontend + 1 - 300,
    matchingMembership: frontend + 2 - 300,
    workerMembership: frontend + 6 - 300,
  };
}

/** The connection parts the SQL tool and the server config take, from a postgres:// URL. */
function pgParts(url: string) {
  const u = new URL(url);
  return { host: u.hostname || '127.0.0.1', port: u.port || '5432', user: decodeURIComponent(u.username || 'postgres'), password: decodeURIComponent(u.password) };
}

/** The environment deploy/temporal/server.yaml is rendered from (the same names compose sets). */
export function serverEnvironment(o: { databaseUrl: string; databases: TemporalDatabases; port: number; shards?: number; maxConns?: number; logLevel?: string }): Record<string, string> {
  const pg = pgParts(o.databaseUrl);
  const p = temporalPorts(o.port);
  const env: Record<string, string> = {
    DB: 'postgres12',
    POSTGRES_SEEDS: pg.host,
    DB_PORT: pg.port,
    POSTGRES_USER: pg.user,
    POSTGRES_PWD: pg.password,
    DBNAME: o.databases.main,
    VISIBILITY_DBNAME: o.databases.visibility,
    BIND_ON_IP: '127.0.0.1',
    TEMPORAL_BROADCAST_ADDRESS: '127.0.0.1',
    FRONTEND_GRPC_PORT: String(p.frontend),
    FRONTEND_HTTP_PORT: String(p.frontendHttp),
    FRONTEND_MEMBERSHIP_PORT: String(p.frontendMembership),
    HISTORY_GRPC_PORT: String(p.history),
    HISTORY_MEMBERSHIP_PORT: String(p.historyMembership),
    MATCHING_GRPC_PORT: String(p.matching),
    MATCHING_MEMBERSHIP_PORT: String(p.matchingMembership),
    WORKER_GRPC_PORT: String(p.worker),
    WORKER_MEMBERSHIP_PORT: String(p.workerMembership),
    DYNAMIC_CONFIG_FILE_PATH: DYNAMIC_CONFIG_FILE,
    LOG_LEVEL: o.logLevel ?? 'warn',
  };
  if (o.shards !== undefined) env.NUM_HISTORY_SHARDS = String(o.shards);
  if (o.maxConns !== undefined) {
    env.SQL_MAX_CONNS = env.SQL_MAX_IDLE_CONNS = String(o.maxConns);
    env.SQL_VIS_MAX_CONNS = env.SQL_VIS_MAX_IDLE_CONNS = String(Math.max(2, Math.ceil(o.maxConns / 2)));
  }
  return env;
}

/** Both binaries, built once into the CLI's cache folder. */
export async function ensureServerBinaries(log: (m: string) => void): Promise<{ server: string; sqlTool: string }> {
  const server = await ensureGoTool('server', TEMPORAL_SERVER_MODULE, log);
  const sqlTool = await ensureGoTool('sql', TEMPORAL_SQL_TOOL_MODULE, log);
  return { server, sqlTool };
}

/**
 * Creates both databases when missing and brings their schema to the server's version, as
 * compose's temporal-schema job does (setup-schema -v 0.0 then update-schema: both only ever
 * move forward, so this runs on every start).
 */
export async function prepareTemporalDatabases(sqlTool: string, databaseUrl: string, dbs: TemporalDatabases, log: (m: string) => void): Promise<void> {
  const schemaRoot = path.join(await goModuleDir(`go.temporal.io/server@v${TEMPORAL_SERVER_VERSION}`), 'schema', 'postgresql', 'v12');
  const admin = new Client({ connectionString: withDatabase(databaseUrl, 'postgres') });
  await admin.connect();
  try {
    for (const db of [dbs.main, dbs.visibility]) {
      const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [db]);
      if (!rowCount) {
        await admin.query(`CREATE DATABASE ${quoteIdent(db)}`);
        log(`[temporal] created database ${db}`);
      }
    }
  } finally {
    await admin.end();
  }
  const pg = pgParts(databaseUrl);
  const env = { ...process.env, SQL_PASSWORD: pg.password };
  for (const [db, dir] of [[dbs.main, 'temporal'], [dbs.visibility, 'visibility']] as const) {
    const base = ['--plugin', 'postgres12', '--ep', pg.host, '-p', pg.port, '-u', pg.user, '--db', db];
    await execFileP(sqlTool, [...base, 'setup-schema', '-v', '0.0'], { env });
    await execFileP(sqlTool, [...base, 'update-schema', '-d', path.join(schemaRoot, dir, 'versioned')], { env });
  }
  log(`[temporal] schema of ${dbs.main} and ${dbs.visibility} is up to date`);
}

export interface TemporalServerOptions {
  binary: string;
  databaseUrl: string;
  databases: TemporalDatabases;
  port: number;
  namespace: string;
  /** Namespace retention, when the namespace is created here. Default 7 days, compose's. */
  retentionDays?: number;
  shards?: number;
  maxConns?: number;
  log: (m: string) => void;
}

export interface TemporalServer {
  address: string;
  process: ChildProcess;
  /** SIGTERM, SIGKILL after 20 s. */
  stop(): Promise<void>;
  /** SIGKILL; resolves once it is gone. */
  kill(): Promise<void>;
}

/**
 * Starts the server and resolves once its frontend serves `namespace` with Timekeeper's search
 * attributes (registering both when missing, as compose's temporal-create-search-attributes
 * job does).
 */
export async function startTemporalServer(o: TemporalServerOptions): Promise<TemporalServer> {
  const ports = temporalPorts(o.port);
  for (const [name, p] of Object.entries(ports)) {
    if (!(await portFree('127.0.0.1', p))) throw new Error(`port ${p} (Temporal ${name}) is in use: stop what listens there or set TEMPORAL_PORT`);
  }
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...serverEnvironment(o) };
  const args = ['--root', path.dirname(path.dirname(SERVER_CONFIG_FILE)), '--config', path.basename(path.dirname(SERVER_CONFIG_FILE)), '--env', path.basename(SERVER_CONFIG_FILE, '.yaml'), '--allow-no-auth', 'start'];
  const child = spawn(o.binary, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (b: Buffer) => (output = (output + b.toString()).slice(-8000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let exited = false;
  const gone = new Promise<void>((r) => child.once('exit', () => ((exited = true), r())));
  const address = `127.0.0.1:${o.port}`;
  const deadline = Date.now() + 180_000;
  for (let registered = false; ; ) {
    if (exited) throw new Error(`the Temporal server exited during start-up:\n${output}`);
    try {
      const conn = await Connection.connect({ address, connectTimeout: 2000 });
      try {
        if (!registered) {
          await conn.workflowService
            .registerNamespace({ namespace: o.namespace, workflowExecutionRetentionPeriod: msToTs((o.retentionDays ?? 7) * 86_400_000) })
            .catch((e: Error) => {
              if (!/already exists|AlreadyExists/i.test(e.message)) throw e;
            });
          registered = true;
        }
        // Answers only once the frontend's namespace cache knows the namespace (~10 s after it is created).
        await ensureSearchAttributes(conn, o.namespace);
        await conn.workflowService.describeNamespace({ namespace: o.namespace });
      } finally {
        await conn.close();
      }
      break;
    } catch (err) {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`the Temporal server did not serve namespace ${o.namespace} at ${address}: ${(err as Error).message}\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  o.log(`[temporal] Temporal server ${TEMPORAL_SERVER_VERSION} on ${address} (PostgreSQL ${o.databases.main}, ${o.databases.visibility})`);
  return {
    address,
    process: child,
    async stop() {
      if (exited) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.kill('SIGTERM');
      await gone;
      clearTimeout(timer);
    },
    async kill() {
      if (!exited) child.kill('SIGKILL');
      await gone;
    },
  };
}

/** A frontend port whose derived ports (temporalPorts) are all free too, for tests and parallel runs. */
export async function freeTemporalPort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * (MAX_TEMPORAL_PORT - 10_000));
    const all = Object.values(temporalPorts(port));
    const free = await Promise.all(all.map((p) => portFree('127.0.0.1', p)));
    if (free.every(Boolean)) return port;
  }
  throw new Error('found no free range of ports for a Temporal server');
}
