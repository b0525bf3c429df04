/** A worker in a child process, launched as `npm run worker` launches one, for tests that kill it. */
import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { WORKER_NODE_ARGS } from '../../bin/run';

const ROOT = path.resolve(__dirname, '..', '..');

export interface SpawnWorkerOptions {
  /** The script, from the repository root. Default the test worker, test/support/worker-process.ts (TASK_QUEUE names its queue). */
  script?: string;
  /** Added to this process's environment. */
  env?: NodeJS.ProcessEnv;
  /** What its output says once it runs. Default 'worker ready' (the test worker's line). */
  readyWhen?: string;
  /** Called with the child as soon as it is spawned (before it is ready), e.g. to kill it after the test whatever happens. */
  onSpawn?: (child: ChildProcess) => void;
}

/** Resolves once the worker runs (its output says `readyWhen`); rejects when it exits first, with its output so far. */
export function spawnWorker(taskQueue: string | undefined, opts: SpawnWorkerOptions = {}): Promise<ChildProcess> {
  // node itself, not the tsx CLI: the CLI runs the script in a grandchild process that a
  // SIGKILL of the CLI would leave running. Launched as `npm run worker` launches a worker.
  const child = spawn(process.execPath, [...WORKER_NODE_ARGS, path.join(ROOT, opts.script ?? 'test/support/worker-process.ts')], {
    cwd: ROOT,
    env: { ...process.env, ...(taskQueue === undefined ? {} : { TASK_QUEUE: taskQueue }), ...opts.env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  opts.onSpawn?.(child);
  const readyWhen = opts.readyWhen ?? 'worker ready';
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`worker exited early with ${code}${out ? `: ${out}` : ''}`)));
    const onData = (b: Buffer) => {
      out += b.toString();
      if (!out.includes(readyWhen)) return;
      child.stdout!.off('data', onData);
      child.stdout!.resume(); // the rest of its output is not read, but must not fill the pipe
      resolve(child);
    };
    child.stdout!.on('data', onData);
  });
}
