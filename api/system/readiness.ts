/**
 * What /readyz checks, each dependency on its own and each within its own deadline
 * (LIMITS.readinessCheckMs), so the answer comes in about that time whatever is down and
 * names what timed out (issue 16: with Temporal down each /readyz took 9–10 s):
 *   - postgres: SELECT 1 answers;
 *   - temporal: GetSystemInfo answers;
 *   - worker: a worker process of this task queue beat its heartbeat row within
 *     LIMITS.workerHeartbeatFreshMs (schema/013; a killed worker is noticed within seconds,
 *     where the task queue's pollers stay listed for two minutes), and a worker polled the
 *     task queue (DescribeTaskQueue: it is connected to Temporal, not only alive).
 * A check is "ok", or the reason it is not ("timed out after N ms" when its deadline passed).
 */
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { LIMITS } from '../../lib/domain/limits';
import { WorkerHeartbeatStore } from '../../lib/store/worker-heartbeats';
import { workerPolling } from '../../lib/temporal';
import { postgresCheck, reasonOf as reason, runChecks, temporalCheck, TIMED_OUT, type Check } from '../../lib/platform/dependency-checks';

export interface ReadinessDeps {
  client: Client;
  pool: Pool;
  namespace: string;
  taskQueue: string;
  /** Each check's deadline; default LIMITS.readinessCheckMs. */
  checkMs?: number;
}

export interface Readiness {
  ready: boolean;
  checks: Record<string, string>;
  /** The checks whose deadline passed. */
  timedOut: string[];
}

export async function readiness(d: ReadinessDeps): Promise<Readiness> {
  const ms = d.checkMs ?? LIMITS.readinessCheckMs;
  const heartbeats = new WorkerHeartbeatStore(d.pool);
  const checks: Record<string, Check> = {
    postgres: postgresCheck(d.pool),
    temporal: temporalCheck(d.client, ms),
    worker: async () => {
      const [beat, polling] = await Promise.all([
        heartbeats.freshness(d.taskQueue, LIMITS.workerHeartbeatFreshMs).then(
          (f) =>
            f.alive > 0
              ? 'ok'
              : f.ageMs === undefined
                ? `no worker process of task queue "${d.taskQueue}" has written a heartbeat`
                : `no worker heartbeat for task queue "${d.taskQueue}" in ${Math.round(f.ageMs / 100) / 10} s (a worker beats every ${LIMITS.workerHeartbeatMs / 1000} s)`,
          (e) => `unknown: the heartbeats could not be read: ${reason(e)}`,
        ),
        d.client.connection.withDeadline(Date.now() + ms, () => workerPolling(d.client.connection, d.namespace, d.taskQueue)),
      ]);
      if (beat !== 'ok') return beat;
      return /DEADLINE_EXCEEDED/.test(polling) ? TIMED_OUT : polling;
    },
  };
  const { checks: out, timedOut } = await runChecks(checks, ms);
  return { ready: Object.values(out).every((v) => v === 'ok'), checks: out, timedOut };
}
