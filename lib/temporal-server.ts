/**
 * The Temporal CLI's dev server as a child process, for development, tests and CI.
 *
 * Production points TEMPORAL_ADDRESS at a real cluster instead (docker-compose.yml).
 */
import { ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { toolSettings } from './config';
import { SEARCH_ATTRIBUTES } from './domain/platform/search-attributes';

const execFileP = promisify(execFile);

/** Later tags carry a `replace` directive and cannot be built with `go install`. */
export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';


/**
 * Server limits the session workflow is designed around. The default of 10 in-flight
 * updates per workflow would turn the 11th concurrent append to one session into an error;
 * the total per run stays at the server default and the workflow continues-as-new first.
 */
export const DEV_DYNAMIC_CONFIG: Record<string, unknown> = {
  'history.maxInFlightUpdates': 500,
  'frontend.enableUpdateWorkflowExecution': true,
  'frontend.enableExecuteMultiOperation': true,
};

/**
 * Settings for the single-process dev server only. One task-queue partition: partitions
 * spread load over matching hosts a dev server does not have, and with four of them the
 * first task of a new session waited seconds for a poller (bench: session creation went
 * from ~30/s to ~50-70/s). Production keeps the default.
 */
export const DEV_ONLY_DYNAMIC_CONFIG: Record<string, unknown> = {
  'matching.numTaskqueueReadPartitions': 1,
  'matching.numTaskqueueWritePartitions': 1,
};

/**
 * SQLite in WAL mode with synchronous=NORMAL: still durable across a crash of the server
 * process, without an fsync per transaction (bench: Temporal CPU per append 10.6 → 5.7 ms).
 */
export const DEV_SQLITE_PRAGMAS = ['journal_mode=wal', 'synchronous=normal'];

/** A user-level folder, so fresh clones and CI runs reuse one build of the CLI. */
export function cliCacheDir(): string {
  return toolSettings().cliCacheDir;
}

function onPath(cmd: string): string | undefined {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    const p = path.join(dir, cmd);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

/** The machine's `go`: on PATH, else /usr/local/go/bin/go. */
export function findGo(): string | undefined {
  return onPath('go') ?? (fs.existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : undefined);
}

/**
 * Finds the `temporal` binary: TEMPORAL_CLI, then PATH, then the cache folder; builds it into
 * the cache folder with `go install` when none is found.
 */
export async function ensureTemporalCli(log: (m: string) => void = console.log): Promise<string> {
  const explicit = toolSettings().temporalCli;
  if (explicit) {
    if (!fs.existsSync(explicit)) throw new Error(`TEMPORAL_CLI=${explicit} does not exist`);
    return explicit;
  }
  return ensureGoTool('temporal', TEMPORAL_CLI_MODULE, log, { searchPath: true, alternative: 'or set TEMPORAL_CLI to a temporal binary, or TEMPORAL_ADDRESS to a running Temporal server.' });
}

/**
 * Finds the binary `name` (on PATH first with `searchPath`, then in the cache folder); builds
 * it into the cache folder with `go install module` when not found: the Temporal CLI, and
 * `npm run cluster`'s Temporal server and SQL tool (named `server` and `sql`, too generic to
 * take from PATH).
 */
export async function ensureGoTool(name: string, module: string, log: (m: string) => void = console.log, opts: { searchPath?: boolean; alternative?: string } = {}): Promise<string> {
  const cached = path.join(cliCacheDir(), name);
  const alternative = opts.alternative ?? '';
  const found = (opts.searchPath ? onPath(name) : undefined) ?? (fs.existsSync(cached) ? cached : undefined);
  if (found) return found;
  const go = findGo();
  if (!go) {
    throw new Error(
      `${name} is not installed and Go is not available to build it. Install Go (1.23 or later) ` +
        `and run: GOBIN=${cliCacheDir()} go install ${module}${alternative ? ` — ${alternative}` : ''}`,
    );
  }
  log(`[temporal] building ${name} (${module}) into ${cliCacheDir()}; this takes a few minutes once`);
  fs.mkdirSync(cliCacheDir(), { recursive: true });
  await execFileP(go, ['install', module], {
    env: { ...process.env, GOBIN: cliCacheDir(), GOFLAGS: '-mod=mod' },
    maxBuffer: 64 * 1024 * 1024,
  });
  if (!fs.existsSync(cached)) throw new Error(`go install finished but ${cached} is missing`);
  return cached;
}

/** The folder `go` keeps a module's source in (downloading it if needed), e.g. for the Temporal server's schema. */
export async function goModuleDir(moduleAtVersion: string): Promise<string> {
  const go = findGo();
  if (!go) throw new Error(`Go is needed to find ${moduleAtVersion}'s files`);
  const { stdout } = await execFileP(go, ['mod', 'download', '-json', moduleAtVersion], { cwd: os.tmpdir(), maxBuffer: 16 * 1024 * 1024 });
  const dir = (JSON.parse(stdout) as { Dir?: string }).Dir;
  if (!dir) throw new Error(`go mod download ${moduleAtVersion} named no folder`);
  return dir;
}

export function portFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export interface DevServerOptions {
  /** SQLite file; omit for an in-memory server (tests). */
  dbFile?: string;
  /** gRPC port. Default 7233. */
  port?: number;
  /** Web UI port. Default 8233; 0 disables the UI. */
  uiPort?: number;
  ip?: string;
  namespace?: string;
  log?: (m: string) => void;
  /** Dynamic config values on top of the production settings (benchmarks: a knob of a design compared). */
  dynamicConfig?: Record<string, unknown>;
}

export interface DevServer {
  address: string;
  uiUrl: string | undefined;
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function startDevServer(opts: DevServerOptions = {}): Promise<DevServer> {
  const log = opts.log ?? console.log;
  const cli = await ensureTemporalCli(log);
  const ip = opts.ip ?? '127.0.0.1';
  const port = opts.port ?? 7233;
  const uiPort = opts.uiPort ?? 8233;
  const namespace = opts.namespace ?? 'default';
  const args = ['server', 'start-dev', '--ip', ip, '--port', String(port), '--namespace', namespace, '--log-level', 'error'];
  if (uiPort === 0) args.push('--headless');
  else args.push('--ui-port', String(uiPort));
  if (opts.dbFile) {
    fs.mkdirSync(path.dirname(opts.dbFile), { recursive: true });
    args.push('--db-filename', opts.dbFile);
    for (const p of DEV_SQLITE_PRAGMAS) args.push('--sqlite-pragma', p);
  }
  for (const name of SEARCH_ATTRIBUTES) args.push('--search-attribute', `${name}=Keyword`);
  for (const [k, v] of Object.entries({ ...DEV_DYNAMIC_CONFIG, ...DEV_ONLY_DYNAMIC_CONFIG, ...opts.dynamicConfig })) {
    args.push('--dynamic-config-value', `${k}=${JSON.stringify(v)}`);
  }

  // A server already on the port would answer our readiness check in place of ours.
  for (const [what, p] of [['gRPC', port], ['Web UI', uiPort]] as const) {
    if (p !== 0 && !(await portFree(ip, p))) {
      throw new Error(`port ${p} on ${ip} (Temporal ${what}) is already in use: stop what listens there, or set TEMPORAL_ADDRESS to use that server`);
    }
  }
  const child = spawn(cli, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (b: Buffer) => {
    output = (output + b.toString()).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited = false;
  child.on('exit', () => (exited = true));

  const address = `${ip}:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`temporal dev server exited during start-up:\n${output}`);
    try {
      const conn = await Connection.connect({ address, connectTimeout: 1000 });
      await conn.workflowService.describeNamespace({ namespace });
      await conn.close();
      break;
    } catch (err) {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`temporal dev server did not become ready at ${address}: ${(err as Error).message}\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  return {
    address,
    uiUrl: uiPort === 0 ? undefined : `http://${ip}:${uiPort}`,
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (exited) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}
