/**
 * `npm start`'s supervision, end to end: bin/start.ts as a child process (on the test
 * PostgreSQL and Temporal server, its own task queue and port) runs the worker as its own
 * child process; a SIGKILL of that worker is followed by the supervisor's restart (its log
 * line), a new worker process polling the task queue (Temporal's DescribeTaskQueue names its
 * pid), /readyz with the worker ok, and appends that work; a SIGKILL of the start process
 * leaves no worker running orphaned.
 */
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { TimekeeperClient } from '../../sdk/client';
import { freePort } from '../../lib/temporal-server';
import { startProcessEnv } from '../support/start-env';
import { eventually, testEnv, uniqueSessionId, type Check } from '../support';

jest.setTimeout(300_000);

const ROOT = path.resolve(__dirname, '..', '..');

let start: ChildProcess;
let output = '';
let connection: Connection;
let dataDir: string;
const taskQueue = `supervision-${process.pid}-${Date.now()}`;

/** Polls every 250 ms for up to `ms`; a timeout shows the start process's output. */
const until = <T>(what: string, fn: Check<T>, ms = 120_000): Promise<T> =>
  eventually(what, fn, { timeoutMs: ms, stepMs: 250, errors: 'throw', detail: () => `output:\n${output.slice(-4000)}` });

/** Log lines of the start process (its own and its worker's: they share stdout), parsed. */
function logLines(): Record<string, unknown>[] {
  return output.split('\n').flatMap((l) => {
    try {
      return [JSON.parse(l) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

/** Pids of the processes polling the task queue's workflow tasks now (the SDK's identity is pid@host). */
async function pollerPids(): Promise<number[]> {
  const r = await connection.workflowService.describeTaskQueue({
    namespace: 'default',
    taskQueue: { name: taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  return (r.pollers ?? []).map((p) => Number(String(p.identity ?? '').split('@')[0]));
}

const workerStarts = () => logLines().filter((l) => l.msg === 'worker process started').map((l) => Number(l.worker_pid));

beforeAll(async () => {
  const env = testEnv();
  connection = await Connection.connect({ address: env.temporalAddress });
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-supervision-'));
});

afterAll(async () => {
  if (start && start.exitCode === null && start.signalCode === null) {
    const gone = new Promise((r) => start.once('exit', r));
    start.kill('SIGTERM');
    await gone;
  }
  await connection?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('SIGKILL of the worker child: the supervisor restarts it, /readyz and appends work again', async () => {
  const port = await freePort();
  start = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bin', 'start.ts')], {
    cwd: ROOT,
    env: startProcessEnv({ taskQueue, port, dataDir }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  start.stdout!.on('data', (b: Buffer) => (output += b.toString()));
  start.stderr!.on('data', (b: Buffer) => (output += b.toString()));
  const tk = new TimekeeperClient({ baseUrl: `http://127.0.0.1:${port}` });
  const readyWorker = async () => {
    const r = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
    const body = r?.ok ? ((await r.json()) as { checks: { worker: string } }) : undefined;
    return body?.checks.worker === 'ok' ? true : undefined;
  };

  // The first worker: a child of the start process, polling, serving appends.
  const [first] = await until('the first worker process', () => (workerStarts().length ? workerStarts() : undefined));
  expect(first).not.toBe(start.pid);
  await until('the first worker polling', async () => ((await pollerPids()).includes(first) ? true : undefined));
  await until('/readyz worker ok', readyWorker);
  const before = uniqueSessionId('sup');
  await tk.createSession({ session_id: before });
  expect((await tk.append(before, { type: 'USER_INPUT', content: { n: 1 } })).seq).toBe(2);

  // One scrape of the API shows the worker child's series too (its writer stored those events),
  // and each per-process family once.
  const scrape = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const appended = [...scrape.matchAll(/^timekeeper_events_appended_total\{[^}]*\} (\S+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
  expect(appended).toBeGreaterThanOrEqual(2);
  expect(scrape.match(/^# TYPE process_resident_memory_bytes /gm)).toHaveLength(1);

  process.kill(first, 'SIGKILL');
  const killedAt = Date.now();

  // The supervisor says so and starts another worker process, which polls the task queue.
  const second = await until('a restarted worker process', () => workerStarts().find((p) => p !== first));
  expect(logLines().some((l) => l.component === 'worker' && /worker process \d+ exited with SIGKILL/.test(String(l.msg)))).toBe(true);
  expect(logLines().some((l) => l.component === 'worker' && /restarting in \d+ ms/.test(String(l.msg)))).toBe(true);
  expect(start.exitCode).toBeNull();
  await until('the restarted worker polling', async () => ((await pollerPids()).includes(second) ? true : undefined));
  await until('/readyz worker ok after the restart', readyWorker);
  const pollingMs = Date.now() - killedAt;

  // Writes work again: a new session, and the one from before the kill.
  const after = uniqueSessionId('sup');
  await tk.createSession({ session_id: after });
  expect((await tk.append(after, { type: 'USER_INPUT', content: { n: 1 } })).seq).toBe(2);
  expect((await tk.append(before, { type: 'USER_INPUT', content: { n: 2 } })).seq).toBe(3);
  expect((await tk.verify(before)).ok).toBe(true);
  console.log(`worker SIGKILL → restarted worker polling: ${pollingMs} ms; → appends stored again: ${Date.now() - killedAt} ms`);

  // SIGKILL of the start process itself: its worker child must not run on orphaned (it sees the IPC channel close).
  const gone = new Promise((r) => start.once('exit', r));
  start.kill('SIGKILL');
  await gone;
  await until('the orphaned worker to exit', () => (isAlive(second) ? undefined : true), 60_000);
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
