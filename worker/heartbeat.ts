/**
 * The worker process's heartbeat (schema/013_worker_heartbeats.sql): while its workers run it
 * beats its row every LIMITS.workerHeartbeatMs, so /readyz notices a killed worker within
 * LIMITS.workerHeartbeatFreshMs instead of the task queue pollers' two minutes. A failed beat
 * (the database is down) is only logged: the next one tries again, and /readyz reports the
 * database itself.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Pool } from 'pg';
import { LIMITS } from '../lib/domain/limits';
import { log } from '../lib/log';
import { WorkerHeartbeatStore } from '../lib/store/worker-heartbeats';

export interface Heartbeat {
  readonly workerId: string;
  /** Stops beating and deletes the row (best effort). */
  stop(): Promise<void>;
}

export function startHeartbeat(pool: Pool, taskQueue: string, isRunning: () => boolean): Heartbeat {
  const store = new WorkerHeartbeatStore(pool);
  const me = { workerId: `${os.hostname()}:${process.pid}:${randomUUID()}`, taskQueue, host: os.hostname(), pid: process.pid };
  let stopped = false;
  let failing = false;
  let inFlight: Promise<void> = Promise.resolve();
  const beat = () => {
    if (stopped || !isRunning()) return;
    inFlight = store.beat(me).then(
      () => {
        if (failing) log().info({ component: 'heartbeat' }, 'worker heartbeat written again');
        failing = false;
      },
      (err: Error) => {
        if (!failing) log().warn({ component: 'heartbeat', err: err.message }, 'worker heartbeat not written; retrying');
        failing = true;
      },
    );
  };
  void store.prune(LIMITS.workerHeartbeatKeepMs).catch(() => undefined);
  beat();
  const timer = setInterval(beat, LIMITS.workerHeartbeatMs);
  timer.unref();
  return {
    workerId: me.workerId,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await inFlight;
      await store.remove(me.workerId).catch(() => undefined);
    },
  };
}
