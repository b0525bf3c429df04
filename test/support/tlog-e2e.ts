/** Helpers the transparency-log e2e tests share: how long to wait on the log, and the CLI against a test system. */
import { execFile } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { parseCheckpoint } from '../../lib/tlog/checkpoint';
import { parseNote } from '../../lib/tlog/note';
import type { TestSystem } from './system';
import type { WaitOptions } from './wait';

const BIN = path.join(__dirname, '../../bin/timekeeper');

/** How `eventually` waits on the transparency log, which runs on its own clock. */
export const LOG_WAIT: WaitOptions = { timeoutMs: 90_000 };

/** Runs bin/timekeeper against `baseUrl` (no API key) and resolves with its exit code and output. */
export const cliAgainst =
  (baseUrl: () => string) =>
  (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      execFile(BIN, ['--url', baseUrl(), ...args], { env: { ...process.env, TIMEKEEPER_API_KEY: '' } }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });

/** A free loopback port, so LOG_WITNESSES can name a witness before it runs (it needs the log's key). */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const p = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return p;
}

/**
 * The latest checkpoint's size once it covers every event of the session (each has a
 * log_index below it), else undefined: for `eventually`. Not verify's `pending`, which with
 * LOG_WITNESSES counts against the newest witnessed checkpoint.
 */
export async function sessionLogged(sys: TestSystem, sid: string): Promise<number | undefined> {
  const { events } = await sys.tk.events(sid, { limit: 1000 });
  if (events.length === 0 || events.some((e) => e.log_index === null)) return undefined;
  const size = parseCheckpoint(parseNote(await sys.tk.log.checkpoint()).text).size;
  return events.every((e) => (e.log_index ?? size) < size) ? size : undefined;
}
