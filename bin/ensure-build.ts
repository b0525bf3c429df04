/**
 * Builds dist/ once when it is missing or stale (bin/build.mjs), before a launcher starts several
 * compiled processes at once (`npm run cluster`, `bench/rig-serve.ts --launch compiled`): each
 * `node bin/launch.cjs ROLE` checks and builds by itself, and two of them building together write
 * the same files while the other may already be loading them. The processes then start with
 * TIMEKEEPER_BUILD=skip.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = path.resolve(__dirname, '..');

export async function ensureBuild(): Promise<void> {
  const { staleReason } = (await import(pathToFileURL(path.join(ROOT, 'bin', 'build.mjs')).href)) as { staleReason: () => string | undefined };
  const reason = staleReason();
  if (reason === undefined) return;
  console.log(`[build] ${reason}: building dist/`);
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'build.mjs')], { stdio: 'inherit', cwd: ROOT });
  if (r.status !== 0) throw new Error('the build failed (`npm run build` shows why)');
}
