/**
 * Keeps a worker running (`npm start`, where bin/run.ts runs it as a child process): when it
 * stops with an error (or stops at all while the process is not shutting down), it is started again after a
 * backoff that doubles up to a cap and starts over once a run has stayed up for a while.
 * `npm run worker` does not supervise: it exits non-zero and leaves the restart to the
 * process manager.
 */
import { LIMITS } from '../lib/domain/limits';

export interface SuperviseOptions {
  /** True once the process is shutting down: no more restarts. */
  stopping: () => boolean;
  log?: (m: string) => void;
  initialMs?: number;
  maxMs?: number;
  /** A run that lasted this long resets the backoff. */
  healthyMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Runs `runOnce` (create a worker and run it to its end) again and again until `stopping()`.
 * Resolves when the process is stopping; never rejects.
 */
export async function supervise(runOnce: () => Promise<void>, opts: SuperviseOptions): Promise<{ restarts: number }> {
  const initial = opts.initialMs ?? LIMITS.workerRestartInitialMs;
  const max = opts.maxMs ?? LIMITS.workerRestartMaxMs;
  const healthy = opts.healthyMs ?? LIMITS.workerHealthyRunMs;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const log = opts.log ?? ((m: string) => console.error(m));
  let delay = initial;
  let restarts = 0;
  for (;;) {
    const started = Date.now();
    try {
      await runOnce();
      if (opts.stopping()) return { restarts };
      log('[worker] stopped without being asked to');
    } catch (err) {
      if (opts.stopping()) return { restarts };
      log(`[worker] stopped with an error: ${(err as Error)?.stack ?? String(err)}`);
    }
    if (Date.now() - started >= healthy) delay = initial;
    log(`[worker] restarting in ${delay} ms`);
    await sleep(delay);
    if (opts.stopping()) return { restarts };
    delay = Math.min(delay * 2, max);
    restarts++;
  }
}
