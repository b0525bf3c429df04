/**
 * A private Timekeeper for benchmarks that must not touch the machine's services: the fault
 * rig (own Temporal dev server, own embedded PostgreSQL, API in this process) kept up until
 * SIGINT/SIGTERM. The worker runs in a child process, or with --in-process in this process on
 * the API's native connection. --workers N starts N worker children.
 *
 * --launch tsx|compiled runs the API and one worker as their own processes, launched as
 * production launches them, so a bench compares the two runtimes on the same rig:
 *   compiled  `node bin/launch.cjs api` / `node bin/launch.cjs worker` (npm run api / worker)
 *   tsx       `node --import tsx bin/api.ts` / `node -r bin/tsx-main-thread.cjs bin/worker.ts`
 *             (what npm run api / worker ran before the compiled runtime)
 * and prints the API process's URL. Prints `url <base url>` and `temporal <address>` when ready.
 * With TK_PROF_DIR=DIR the launched processes run with `--cpu-prof` (written to DIR/api and
 * DIR/worker when they exit, one file per thread; node refuses the flag in NODE_OPTIONS).
 *
 *   npx tsx bench/rig-serve.ts --in-process &
 *   npx tsx bench/rig-serve.ts --launch compiled &
 *   npm run bench:timeline -- --url <base url> --temporal <address> --no-raw
 */
import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import type { NativeConnection } from '@temporalio/worker';
import { freePort } from '../lib/temporal-server';
import { FaultRig, startFaultRig } from '../test/support/fault-rig';
import { WORKER_NODE_ARGS } from '../bin/run';
import { ensureBuild } from '../bin/ensure-build';
import { createTimekeeperWorker } from '../worker/worker';

const ROOT = path.resolve(__dirname, '..');
type Launch = 'tsx' | 'compiled';

/** node's arguments for `role` as production launches it under `launch`. */
function launchArgs(launch: Launch, role: 'api' | 'worker'): string[] {
  if (launch === 'compiled') return [path.join(ROOT, 'bin', 'launch.cjs'), role];
  return role === 'api' ? ['--import', 'tsx', path.join(ROOT, 'bin', 'api.ts')] : [...WORKER_NODE_ARGS, path.join(ROOT, 'bin', 'worker.ts')];
}

/** The API and one worker as their own processes on the rig's services; resolves with the API's URL once /readyz has the worker ok. */
async function launchProcesses(rig: FaultRig, launch: Launch, children: ChildProcess[]): Promise<string> {
  const port = await freePort();
  const env = {
    ...process.env,
    DATABASE_URL: rig.config.databaseUrl,
    APP_DATABASE_URL: rig.config.databaseUrl,
    TEMPORAL_ADDRESS: rig.temporalAddress,
    TEMPORAL_NAMESPACE: rig.config.temporalNamespace,
    TEMPORAL_TASK_QUEUE: rig.config.taskQueue,
    HOST: '127.0.0.1',
    PORT: String(port),
    TIMEKEEPER_API_KEYS: '',
    TIMEKEEPER_API_KEYS_FILE: '',
    WORKER_METRICS_PORT: '0',
    LOG_LEVEL: 'warn',
    TEMPORAL_LOG_LEVEL: 'ERROR',
    // Built once here: the two processes building together could load each other's half-written output.
    ...(launch === 'compiled' ? { TIMEKEEPER_BUILD: 'skip' } : {}),
  };
  if (launch === 'compiled') await ensureBuild();
  for (const role of ['worker', 'api'] as const) {
    const child = spawn(process.execPath, [...(process.env.TK_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.TK_PROF_DIR}/${role}`] : []), ...launchArgs(launch, role)], { cwd: ROOT, env, stdio: ['ignore', 'inherit', 'inherit'] });
    children.push(child);
    child.once('exit', (code, signal) => console.error(`[rig] ${launch} ${role} process ${child.pid} exited with ${signal ?? code}`));
  }
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    const body = await fetch(`${url}/readyz`).then(
      (r) => (r.ok ? (r.json() as Promise<{ checks: { worker: string } }>) : undefined),
      () => undefined,
    );
    if (body?.checks.worker === 'ok') return url;
    if (Date.now() > deadline) throw new Error(`the ${launch} API and worker were not ready within 180 s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function main() {
  const args = process.argv.slice(2);
  const inProcess = args.includes('--in-process');
  const l = args.indexOf('--launch');
  const launch = l >= 0 ? (args[l + 1] as Launch) : undefined;
  if (launch !== undefined && launch !== 'tsx' && launch !== 'compiled') throw new Error(`--launch takes tsx or compiled, got ${launch}`);
  const i = args.indexOf('--workers');
  const workerChildren = i >= 0 ? Number(args[i + 1]) : inProcess || launch ? 0 : 1;
  const rig = await startFaultRig({});
  let stopWorker = async () => undefined as void;
  if (inProcess) {
    const worker = await createTimekeeperWorker({
      connection: rig.client.connection as NativeConnection,
      namespace: rig.config.temporalNamespace,
      taskQueue: rig.config.taskQueue,
      pool: rig.pool,
    });
    const running = worker.run();
    stopWorker = async () => {
      worker.shutdown();
      await running.catch(() => undefined);
    };
  }
  for (let n = 0; n < workerChildren; n++) await rig.startWorker();
  const launched: ChildProcess[] = [];
  const url = launch ? await launchProcesses(rig, launch, launched) : rig.baseUrl;
  console.log(`url ${url}`);
  console.log(`temporal ${rig.temporalAddress}`);
  console.log(`database ${rig.config.databaseUrl}`);
  console.log(`pid ${process.pid}`);
  if (launch) console.log(`processes ${launched.map((c) => c.pid).join(' ')}`);
  const stop = async () => {
    for (const c of launched) c.kill('SIGTERM');
    await Promise.all(launched.map((c) => (c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once('exit', r)) : undefined)));
    await stopWorker();
    await rig.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}
void main().catch((e) => {
  console.error(e);
  process.exit(1);
});
