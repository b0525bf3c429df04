/**
 * HAProxy (Debian's package, `apt-get install haproxy`) in front of several API processes.
 *
 * Why HAProxy and not Node's cluster module: the API processes must stay separate programs
 * (killable and restartable one at a time, each with its own Temporal connection and pool, as
 * the compose/Kubernetes replicas are), and a balancer must notice a dead one by itself. The
 * cluster module shares one listening socket among forks of one parent, so a SIGKILLed fork
 * is noticed only by that parent, and the parent is a single point of failure written by us.
 * HAProxy health-checks each API (`GET /healthz`), re-dispatches a request whose connection
 * was refused to another API (a refused connection never reached an API, so that retry is
 * safe for POSTs), and never retries a request an API had received: a cut-off request
 * answers 502 and the client retries it with its idempotency key.
 */
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const CANDIDATES = ['/usr/sbin/haproxy', '/usr/local/sbin/haproxy', '/usr/bin/haproxy'];

export function findHaproxy(): string {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    const p = path.join(dir, 'haproxy');
    if (fs.existsSync(p)) return p;
  }
  const found = CANDIDATES.find((p) => fs.existsSync(p));
  if (!found) throw new Error('haproxy is not installed (Debian: apt-get install -y haproxy); it balances the API processes when --apis is more than 1');
  return found;
}

/** The configuration: least connections, health checks each second, refused connections re-dispatched. */
export function haproxyConfig(port: number, backends: number[]): string {
  return [
    'global',
    // Two descriptors a connection: 4,000 fit the usual 20,000-descriptor limit with room to spare.
    '  maxconn 4000',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    // Longer than any write's WRITE_TIMEOUT_MS, so the API, not the balancer, answers a slow write.
    '  timeout client 120s',
    '  timeout server 120s',
    '  timeout http-keep-alive 65s',
    '  option http-keep-alive',
    '  retries 3',
    '  option redispatch 1',
    '  retry-on conn-failure',
    'frontend api',
    `  bind 127.0.0.1:${port}`,
    '  default_backend apis',
    'backend apis',
    '  balance leastconn',
    '  option httpchk GET /healthz',
    '  http-check expect status 200',
    '  default-server inter 1s fall 2 rise 1',
    ...backends.map((p, i) => `  server api${i + 1} 127.0.0.1:${p} check`),
    '',
  ].join('\n');
}

export interface Balancer {
  port: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Starts HAProxy in the foreground (`-db`); resolves once it listens. */
export async function startBalancer(port: number, backends: number[], log: (m: string) => void): Promise<Balancer> {
  const bin = findHaproxy();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-haproxy-'));
  const cfg = path.join(dir, 'haproxy.cfg');
  fs.writeFileSync(cfg, haproxyConfig(port, backends));
  const child = spawn(bin, ['-db', '-f', cfg], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (b: Buffer) => (output = (output + b.toString()).slice(-4000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let exited = false;
  const gone = new Promise<void>((r) => child.once('exit', () => ((exited = true), r())));
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (exited) throw new Error(`haproxy exited during start-up:\n${output}`);
    const up = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status < 500, () => false);
    if (up) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`haproxy did not answer on ${port}:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  log(`[balancer] haproxy on 127.0.0.1:${port} → APIs on ${backends.join(', ')}`);
  return {
    port,
    process: child,
    async stop() {
      if (!exited) child.kill('SIGTERM');
      await gone;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
