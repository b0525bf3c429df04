/**
 * The production topology on one machine: the Temporal server on PostgreSQL, N worker
 * processes, M API processes and, when M > 1, HAProxy in front of the APIs. `npm run cluster`
 * (bin/cluster.ts) runs it; the cluster test rig (test/support/cluster-rig.ts) runs it with
 * private databases and ports and kills its parts one at a time.
 *
 * Each worker and API is its own OS process, started by the caller's `command` (compiled
 * through bin/launch.cjs for `npm run cluster`, tsx in tests), so a SIGKILL takes exactly one
 * down. Nothing restarts them by itself: that is the process manager's job in production
 * (compose's `restart: unless-stopped`), and the fault tests restart them on purpose.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { Connection } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import { freePort } from '../temporal-server';
import { Balancer, startBalancer } from './balancer';
import { ensureServerBinaries, prepareTemporalDatabases, startTemporalServer, TemporalDatabases, temporalDatabases, TemporalServer } from './temporal-server';

export type Role = 'worker' | 'api';

export interface ClusterOptions {
  /** Owner URL of the events database; its server also holds Temporal's two databases. */
  databaseUrl: string;
  temporalDatabases?: TemporalDatabases;
  temporalPort: number;
  /** Where the APIs are reached: the balancer's port (M > 1) or the one API's. */
  apiPort: number;
  workers: number;
  apis: number;
  namespace: string;
  taskQueue: string;
  /** How to run one process of a role: executable and arguments. */
  command(role: Role): { file: string; args: string[] };
  /** Environment of every worker and API (on top of this process's, below the cluster's own addresses). */
  env?: Record<string, string>;
  shards?: number;
  /** Connections per Temporal persistence pool (default the config's 20; a small private PostgreSQL needs fewer). */
  maxConns?: number;
  log: (m: string) => void;
}

interface Slot {
  role: Role;
  index: number;
  port?: number;
  child?: ChildProcess;
}

export interface Cluster {
  temporalAddress: string;
  /** http://127.0.0.1:<apiPort> */
  apiUrl: string;
  /** Each API process's own URL. */
  apiUrls: string[];
  balancer: Balancer | undefined;
  pid(role: Role, index: number): number | undefined;
  start(role: Role, index: number): Promise<void>;
  /** SIGKILL; resolves once the process is gone. */
  kill(role: Role, index: number): Promise<void>;
  killTemporal(): Promise<void>;
  startTemporal(): Promise<void>;
  /** Resolves when any process of the cluster exits without being told to (for `npm run cluster` to report it). */
  onUnexpectedExit(fn: (what: string, code: number | null, signal: string | null) => void): void;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Lines of a child's output, prefixed, to `log` (the tail kept for start-up errors). */
function pipeOutput(child: ChildProcess, prefix: string, log: (m: string) => void, tail: string[]): void {
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream?.on('data', (b: Buffer) => {
      const lines = (rest + b.toString()).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        if (!line) continue;
        tail.push(line);
        if (tail.length > 30) tail.shift();
        log(`${prefix} ${line}`);
      }
    });
  }
}

export async function startCluster(o: ClusterOptions): Promise<Cluster> {
  if (!(o.workers >= 1 && o.apis >= 1)) throw new Error('a cluster needs at least one worker and one API');
  const log = o.log;
  const dbs = o.temporalDatabases ?? temporalDatabases();
  const bins = await ensureServerBinaries(log);
  await prepareTemporalDatabases(bins.sqlTool, o.databaseUrl, dbs, log);
  const serverOpts = { binary: bins.server, databaseUrl: o.databaseUrl, databases: dbs, port: o.temporalPort, namespace: o.namespace, shards: o.shards, maxConns: o.maxConns, log };
  let server: TemporalServer | undefined = await startTemporalServer(serverOpts);
  const address = server.address;
  const connection = await Connection.connect({ address });

  let stopping = false;
  const exitHandlers: ((what: string, code: number | null, signal: string | null) => void)[] = [];
  const expectedExit = new Set<ChildProcess>();
  const watch = (child: ChildProcess, what: string) =>
    child.once('exit', (code, signal) => {
      if (!stopping && !expectedExit.has(child)) for (const fn of exitHandlers) fn(what, code, signal);
    });
  watch(server.process, 'temporal server');

  const slots: Record<Role, Slot[]> = {
    worker: Array.from({ length: o.workers }, (_, index) => ({ role: 'worker' as const, index })),
    api: Array.from({ length: o.apis }, (_, index) => ({ role: 'api' as const, index })),
  };
  // One API listens on the public port itself; several get private ports behind the balancer.
  for (const s of slots.api) s.port = o.apis === 1 ? o.apiPort : await freePort();

  const baseEnv = (): NodeJS.ProcessEnv => ({
    ...process.env,
    ...o.env,
    DATABASE_URL: o.databaseUrl,
    TEMPORAL_ADDRESS: address,
    TEMPORAL_NAMESPACE: o.namespace,
    TEMPORAL_TASK_QUEUE: o.taskQueue,
  });

  /** A worker is up once the server lists its pid among the task queue's pollers (the SDK's identity is pid@host). */
  async function workerPolls(pid: number): Promise<boolean> {
    const r = await connection.workflowService.describeTaskQueue({
      namespace: o.namespace,
      taskQueue: { name: o.taskQueue, kind: proto.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
      taskQueueType: proto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    });
    return (r.pollers ?? []).some((p) => (p.identity ?? '').startsWith(`${pid}@`));
  }

  async function start(role: Role, index: number): Promise<void> {
    const slot = slots[role][index];
    if (!slot) throw new Error(`no ${role} ${index}`);
    if (slot.child && slot.child.exitCode === null && slot.child.signalCode === null) return;
    const { file, args } = o.command(role);
    const env = role === 'api' ? { ...baseEnv(), HOST: '127.0.0.1', PORT: String(slot.port) } : baseEnv();
    const child = spawn(file, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    slot.child = child;
    const what = `${role} ${index + 1}`;
    const tail: string[] = [];
    pipeOutput(child, `[${what}]`, log, tail);
    watch(child, what);
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${what} exited during start-up (${child.signalCode ?? child.exitCode}):\n${tail.join('\n')}`);
      const up =
        role === 'worker'
          ? await workerPolls(child.pid!).catch(() => false)
          : await fetch(`http://127.0.0.1:${slot.port}/readyz`).then((r) => r.ok, () => false);
      if (up) break;
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`${what} was not ready within 120 s:\n${tail.join('\n')}`);
      }
      await sleep(250);
    }
    log(`[cluster] ${what} ready (pid ${child.pid}${slot.port ? `, port ${slot.port}` : ''})`);
  }

  async function halt(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    expectedExit.add(child);
    const gone = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    // A worker drains its in-flight tasks on SIGTERM; 30 s as compose's stop_grace_period.
    const timer = signal === 'SIGTERM' ? setTimeout(() => child.kill('SIGKILL'), 30_000) : undefined;
    await gone;
    if (timer) clearTimeout(timer);
  }

  let balancer: Balancer | undefined;
  const cluster: Cluster = {
    temporalAddress: address,
    apiUrl: `http://127.0.0.1:${o.apiPort}`,
    apiUrls: slots.api.map((s) => `http://127.0.0.1:${s.port}`),
    get balancer() {
      return balancer;
    },
    pid: (role, index) => slots[role][index]?.child?.pid,
    start,
    kill: (role, index) => halt(slots[role][index]?.child, 'SIGKILL'),
    async killTemporal() {
      if (!server) return;
      expectedExit.add(server.process);
      await server.kill();
      server = undefined;
    },
    async startTemporal() {
      if (server) return;
      server = await startTemporalServer(serverOpts);
      watch(server.process, 'temporal server');
    },
    onUnexpectedExit: (fn) => void exitHandlers.push(fn),
    async stop() {
      stopping = true;
      await balancer?.stop();
      await Promise.all(slots.api.map((s) => halt(s.child, 'SIGTERM')));
      await Promise.all(slots.worker.map((s) => halt(s.child, 'SIGTERM')));
      await connection.close().catch(() => undefined);
      await server?.stop();
    },
  };
  try {
    // Workers first (the APIs' /readyz wants a polling worker), in parallel: each start is CPU-bound under tsx.
    await Promise.all(slots.worker.map((s) => start('worker', s.index)));
    await Promise.all(slots.api.map((s) => start('api', s.index)));
    if (o.apis > 1) balancer = await startBalancer(o.apiPort, slots.api.map((s) => s.port!), log);
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}
