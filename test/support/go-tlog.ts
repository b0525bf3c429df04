/**
 * The independent check: test/support/go-tlog (Go's golang.org/x/mod/sumdb/note and
 * sumdb/tlog, transparency-dev/formats for cosignatures), built with the machine's Go from the
 * module proxy into the cache folder once per source version, then run with a JSON array of
 * requests on stdin. See test/support/go-tlog/main.go for the operations.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { toolSettings } from '../../lib/config';
import { findGo } from '../../lib/temporal-server';

const execFileP = promisify(execFile);
const SRC = path.join(__dirname, 'go-tlog');

/** Builds (if needed) and returns the go-tlog binary's path. */
export async function ensureGoTlog(): Promise<string> {
  const h = createHash('sha256');
  for (const f of ['go.mod', 'go.sum', 'main.go']) h.update(fs.readFileSync(path.join(SRC, f)));
  const dir = path.join(path.dirname(toolSettings().cliCacheDir), 'go-tlog', h.digest('hex').slice(0, 16));
  const bin = path.join(dir, 'go-tlog');
  if (fs.existsSync(bin)) return bin;
  const go = findGo();
  if (!go) throw new Error('Go is needed for the independent tlog check (install Go or put it on PATH)');
  fs.mkdirSync(dir, { recursive: true });
  // Build beside the target and rename, so parallel test files never run a half-written binary.
  const tmp = `${bin}.${process.pid}.tmp`;
  await execFileP(go, ['build', '-o', tmp, '.'], { cwd: SRC, env: { ...process.env, GOFLAGS: '-mod=readonly -buildvcs=false' }, maxBuffer: 16 * 1024 * 1024 });
  fs.renameSync(tmp, bin);
  return bin;
}

export type GoResult = { ok: boolean; error?: string } & Record<string, unknown>;

/** Runs the requests through go-tlog and returns one result per request. */
export async function goTlog(requests: Array<Record<string, unknown>>): Promise<GoResult[]> {
  const bin = await ensureGoTlog();
  return new Promise((resolve, reject) => {
    const child = execFile(bin, [], { maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`go-tlog failed: ${err.message} ${stderr}`));
      else resolve(JSON.parse(stdout) as GoResult[]);
    });
    child.stdin?.end(JSON.stringify(requests));
  });
}
