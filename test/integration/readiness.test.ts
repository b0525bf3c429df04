/**
 * /readyz under faults (issue 16):
 *   - a worker process killed with SIGKILL is noticed within 10 s (its heartbeat row stops;
 *     the task queue's pollers stayed listed for 121 s before), and a new worker makes it ready again;
 *   - with Temporal hung (a private dev server stopped with SIGSTOP) /readyz still answers
 *     within about a second, postgres still "ok", temporal and worker named as timed out;
 *     OML's /api/health too (database "ok", temporal timed out, `timed_out: ["temporal"]`).
 */
import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { createApp } from '../../api/app';
import { loadKeyStore } from '../../api/auth';
import { LIMITS } from '../../lib/domain/limits';
import { freePort, startDevServer, type DevServer } from '../../lib/temporal-server';
import { eventually, startTestSystem, TestSystem, spawnWorker } from '../support';


interface Ready {
  status: number;
  body: { status: string; checks: Record<string, string>; timed_out: string[] };
  ms: number;
}
async function readyz(baseUrl: string): Promise<Ready> {
  const t0 = performance.now();
  const r = await fetch(`${baseUrl}/readyz`);
  return { status: r.status, body: (await r.json()) as Ready['body'], ms: performance.now() - t0 };
}
async function until(what: string, baseUrl: string, ok: (r: Ready) => boolean, withinMs: number): Promise<{ r: Ready; afterMs: number }> {
  const t0 = Date.now();
  let last: Ready | undefined;
  const r = await eventually(
    what,
    async () => {
      last = await readyz(baseUrl);
      return ok(last) && last;
    },
    { timeoutMs: withinMs, errors: 'throw', detail: () => `last /readyz: ${JSON.stringify(last?.body)}` },
  );
  return { r, afterMs: Date.now() - t0 };
}

let sys: TestSystem;
beforeAll(async () => {
  sys = await startTestSystem({ worker: false });
});
const children: ChildProcess[] = [];
let dev: DevServer | undefined;
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  if (dev) {
    dev.process.kill('SIGCONT');
    await dev.stop();
  }
  await sys?.stop();
});

test('a worker killed with SIGKILL makes /readyz 503 within 10 s; a new worker makes it ready again', async () => {
  const base = sys.baseUrl;
  const first = await spawnWorker(sys.config.taskQueue);
  children.push(first);
  await until('ready with the worker', base, (r) => r.status === 200, 20_000);
  first.kill('SIGKILL');
  const { r, afterMs } = await until('not ready after the kill', base, (x) => x.status === 503, 10_000);
  expect(r.body.checks.worker).toMatch(/no worker heartbeat for task queue/);
  expect(r.body.checks.postgres).toBe('ok');
  expect(r.body.checks.temporal).toBe('ok');
  console.log(`/readyz noticed the killed worker after ${afterMs} ms (heartbeat every ${LIMITS.workerHeartbeatMs} ms, fresh for ${LIMITS.workerHeartbeatFreshMs} ms)`);
  children.push(await spawnWorker(sys.config.taskQueue));
  await until('ready again with a new worker', base, (x) => x.status === 200 && x.body.checks.worker === 'ok', 20_000);
});

test('with Temporal hung, /readyz answers within about a second and names the checks that timed out', async () => {
  const running = sys;
  dev = await startDevServer({ port: await freePort(), uiPort: 0, log: () => undefined });
  const connection = await Connection.connect({ address: dev.address });
  const client = new Client({ connection, namespace: 'default' });
  const app = createApp({ client, pool: running.pool, config: running.config, keys: loadKeyStore() });
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const healthy = await readyz(base);
    expect(healthy.body.checks.temporal).toBe('ok');
    dev.process.kill('SIGSTOP');
    // Stopped for sure (state T) before asking.
    await eventually('the dev server stopped (state T)', async () => /\) T /.test(await readFile(`/proc/${dev!.process.pid}/stat`, 'utf8')), { stepMs: 20, errors: 'throw' });
    const answers: Ready[] = [];
    for (let i = 0; i < 3; i++) answers.push(await readyz(base));
    for (const a of answers) {
      expect(a.status).toBe(503);
      expect(a.body.checks.postgres).toBe('ok');
      expect(a.body.checks.temporal).toBe(`timed out after ${LIMITS.readinessCheckMs} ms`);
      expect(a.body.timed_out).toEqual(expect.arrayContaining(['temporal']));
      // The body above already shows the deadline fired. This bound only tells "answered at the deadline,
      // late by a loaded machine's scheduling" (2.4 s seen in CI at load ~20) from "waited for the hung
      // server" (9–10 s without deadlines), so it sits halfway between them.
      expect(a.ms).toBeLessThan(5_000);
    }
    console.log(`/readyz with Temporal hung answered in ${answers.map((a) => Math.round(a.ms)).join(', ')} ms`);
    // OML's /api/health: the same deadline per check (before, it waited for the hung server).
    const t0 = performance.now();
    const h = await fetch(`${base}/api/health`);
    const health = (await h.json()) as { status: string; database: string; temporal: string; timed_out: string[] };
    expect({ http: h.status, ...health }).toMatchObject({
      http: 200,
      status: 'degraded',
      database: 'ok',
      temporal: `timed out after ${LIMITS.readinessCheckMs} ms`,
      timed_out: ['temporal'],
    });
    console.log(`/api/health with Temporal hung answered in ${Math.round(performance.now() - t0)} ms`);
  } finally {
    dev.process.kill('SIGCONT');
    await new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
    await connection.close();
  }
});
