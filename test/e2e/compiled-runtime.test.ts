/**
 * The compiled production runtime, end to end: `npm start`'s command (`node bin/launch.cjs
 * start`) on the test PostgreSQL and Temporal server finds dist/ stale (one input's recorded
 * hash no longer matches), rebuilds it, and then runs compiled JavaScript: the start process
 * serves /healthz, an init and an append; its worker child is the compiled one (launched through
 * bin/launch.cjs); SIGTERM drains both and exits 0.
 */
import { ChildProcess, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TimekeeperClient } from '../../sdk/client';
import { freePort } from '../../lib/temporal-server';
import { startProcessEnv } from '../support/start-env';
import { uniqueSessionId, eventually, type Check } from '../support';

jest.setTimeout(300_000);

const ROOT = path.resolve(__dirname, '..', '..');
const STAMP = path.join(ROOT, 'dist', 'build-stamp.json');
const sha256 = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

let start: ChildProcess | undefined;
let output = '';
let dataDir: string;

/** Polls every 250 ms for up to `ms`, failing at once when the start process has exited; a failure shows its output. */
const until = <T>(what: string, fn: Check<T>, ms = 180_000): Promise<T> =>
  eventually(
    what,
    async () => {
      const v = await fn();
      if (v !== undefined || start?.exitCode == null) return v;
      throw new Error(`the start process exited with ${start.exitCode} while waiting for ${what}; output:\n${output.slice(-4000)}`);
    },
    { timeoutMs: ms, stepMs: 250, errors: 'throw', detail: () => `output:\n${output.slice(-4000)}` },
  );

beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-compiled-'));
});

afterAll(async () => {
  if (start && start.exitCode === null && start.signalCode === null) {
    const gone = new Promise((r) => start!.once('exit', r));
    start.kill('SIGKILL');
    await gone;
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('npm start rebuilds a stale dist/, then runs it compiled: /healthz, init and append, a compiled worker child, a clean SIGTERM', async () => {
  // A stale build: one recorded input hash that no longer matches (or no build at all).
  let staleInput: string | undefined;
  if (fs.existsSync(STAMP)) {
    const stamp = JSON.parse(fs.readFileSync(STAMP, 'utf8')) as { inputs: Record<string, string> };
    staleInput = 'lib/migrate.ts';
    expect(stamp.inputs[staleInput]).toBeDefined();
    stamp.inputs[staleInput] = '0'.repeat(64);
    fs.writeFileSync(STAMP, JSON.stringify(stamp));
  }

  const port = await freePort();
  const taskQueue = `compiled-${process.pid}-${Date.now()}`;
  // package.json's start script, run by node directly so the test holds the process itself.
  const script = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start;
  expect(script).toBe('node bin/launch.cjs start');
  start = spawn(process.execPath, ['bin/launch.cjs', 'start'], {
    cwd: ROOT,
    env: startProcessEnv({ taskQueue, port, dataDir }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  start.stdout!.on('data', (b: Buffer) => (output += b.toString()));
  start.stderr!.on('data', (b: Buffer) => (output += b.toString()));

  const base = `http://127.0.0.1:${port}`;
  await until('/healthz', async () => ((await fetch(`${base}/healthz`).then((r) => r.ok, () => false)) ? true : undefined));
  // It rebuilt first, and the stamp now records the input as it is.
  expect(output).toMatch(staleInput ? /\[build\] building dist\/ \(lib\/migrate\.ts changed\)/ : /\[build\] building dist\/ \(no build yet\)/);
  const stamp = JSON.parse(fs.readFileSync(STAMP, 'utf8')) as { inputs: Record<string, string> };
  expect(stamp.inputs['lib/migrate.ts']).toBe(sha256(path.join(ROOT, 'lib', 'migrate.ts')));
  expect(stamp.inputs['workflows/sessions/workflow.ts']).toBe(sha256(path.join(ROOT, 'workflows', 'sessions', 'workflow.ts')));

  await until('/readyz worker ok', async () => {
    const r = await fetch(`${base}/readyz`).catch(() => undefined);
    const body = r?.ok ? ((await r.json()) as { checks: { worker: string } }) : undefined;
    return body?.checks.worker === 'ok' ? true : undefined;
  });
  const tk = new TimekeeperClient({ baseUrl: base });
  const id = uniqueSessionId('compiled');
  await tk.createSession({ session_id: id });
  expect((await tk.append(id, { type: 'USER_INPUT', content: { n: 1 } })).seq).toBe(2);

  // The worker child runs compiled: launched through bin/launch.cjs (under tsx it would be
  // `node -r bin/tsx-main-thread.cjs bin/worker.ts`).
  const workerPid = Number(
    output
      .split('\n')
      .map((l) => /"worker_pid":(\d+)/.exec(l)?.[1])
      .find(Boolean),
  );
  expect(workerPid).toBeGreaterThan(0);
  const argv = fs.readFileSync(`/proc/${workerPid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  expect(argv.slice(1)).toEqual([path.join(ROOT, 'bin', 'launch.cjs'), 'worker']);

  // SIGTERM reaches the application (no npm or tsx in between): it drains and exits 0.
  const exited = new Promise<number | null>((r) => start!.once('exit', (code) => r(code)));
  start.kill('SIGTERM');
  expect(await exited).toBe(0);
  await until('the worker child gone', () => (fs.existsSync(`/proc/${workerPid}`) ? undefined : true), 30_000);
});
