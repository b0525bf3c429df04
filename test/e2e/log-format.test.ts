/**
 * Log lines as the process's stdout calls for (lib/log.ts, the usual way for pino): the API
 * process (bin/api.ts, on the test PostgreSQL and Temporal server, LOG_FORMAT unset) writes
 * one JSON object per line when stdout is a pipe or a file, and readable, coloured lines
 * through pino-pretty when stdout is a terminal (a real pseudo-terminal from util-linux's
 * `script`, as `npm start` in a terminal has).
 */
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../lib/temporal-server';
import { startProcessEnv } from '../support/start-env';
import { eventually } from '../support';

jest.setTimeout(180_000);

const ROOT = path.resolve(__dirname, '..', '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');
const SCRIPT = '/usr/bin/script';
const ANSI = /\u001b\[[0-9;]*m/;

const PROBE = `log-format-probe-${process.pid}`;

let dataDir: string;
const started: ChildProcess[] = [];

beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-logs-'));
});
afterAll(async () => {
  for (const p of started) {
    if (p.exitCode !== null || p.signalCode !== null) continue;
    const gone = new Promise((r) => p.once('exit', r));
    // Its own process group (detached): the API under `script` is that group too.
    process.kill(-p.pid!, 'SIGKILL');
    await gone;
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Starts the API with LOG_FORMAT unset, collecting its stdout, and waits until it serves /healthz. */
async function startApi(onTerminal: boolean): Promise<{ output: () => string; stop: () => Promise<void> }> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...startProcessEnv({ taskQueue: `logs-${process.pid}-${port}`, port, dataDir }), LOG_LEVEL: 'info' };
  delete env.LOG_FORMAT;
  const cmd = onTerminal ? SCRIPT : TSX;
  const args = onTerminal ? ['-qfec', `exec ${TSX} bin/api.ts`, '/dev/null'] : ['bin/api.ts'];
  const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  started.push(child);
  let out = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
  await eventually(async () => {
    if (child.exitCode !== null) throw new Error(`the API exited with ${child.exitCode}:\n${out.slice(-3000)}`);
    return fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
  }, { timeoutMs: 120_000, stepMs: 250 });
  // A request, so its request log line (carrying this id) is among the output too.
  await fetch(`http://127.0.0.1:${port}/healthz`, { headers: { 'x-request-id': PROBE } });
  return {
    output: () => out,
    stop: async () => {
      const gone = new Promise((r) => child.once('exit', r));
      process.kill(-child.pid!, 'SIGTERM');
      await gone;
    },
  };
}

test('stdout a pipe: one JSON object per line, nothing else', async () => {
  const api = await startApi(false);
  await eventually(async () => api.output().includes(PROBE), 30_000);
  await api.stop();
  const lines = api.output().split('\n').filter((l) => l.trim());
  expect(lines.length).toBeGreaterThan(2);
  for (const line of lines) {
    expect(ANSI.test(line)).toBe(false);
    const o = JSON.parse(line) as { level: number; time: string; msg: string; service: string };
    expect(o).toEqual(expect.objectContaining({ level: expect.any(Number), time: expect.any(String), msg: expect.any(String), service: 'timekeeper' }));
  }
});

test('stdout a terminal: readable coloured lines (time, level, message), no JSON', async () => {
  expect(fs.existsSync(SCRIPT)).toBe(true);
  const api = await startApi(true);
  await eventually(async () => api.output().includes(PROBE), 30_000);
  await api.stop();
  const lines = api
    .output()
    .split(/\r?\n/)
    .filter((l) => l.trim());
  expect(ANSI.test(api.output())).toBe(true);
  const plain = lines.map((l) => l.replace(new RegExp(ANSI.source, 'g'), ''));
  expect(plain.some((l) => /^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: /.test(l))).toBe(true);
  for (const l of plain) expect(l.trimStart().startsWith('{"level"')).toBe(false);
});
