/** A worker in a child process (test/support/worker-process.ts), launched as `npm run worker` launches one, for tests that kill it. */
import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { WORKER_NODE_ARGS } from '../../bin/run';

const ROOT = path.resolve(__dirname, '..', '..');

/** Resolves once the worker runs ("worker ready"); rejects when it exits first. */
export function spawnWorker(taskQueue: string): Promise<ChildProcess> {
  // node itself, not the tsx CLI: the CLI runs the script in a grandchild process that a
  // SIGKILL of the CLI would leave running. Launched as `npm run worker` launches a worker.
  const child = spawn(process.execPath, [...WORKER_NODE_ARGS, path.join(ROOT, 'test', 'support', 'worker-process.ts')], {
    cwd: ROOT,
    env: { ...process.env, TASK_QUEUE: taskQueue },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`worker exited early with ${code}`)));
    child.stdout!.on('data', (b: Buffer) => {
      if (b.toString().includes('worker ready')) resolve(child);
    });
  });
}
