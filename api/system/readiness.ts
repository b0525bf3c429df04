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

const reason = (e: unknown) => (e as Error)?.message || String(e);
const TIMED_OUT = Symbol('timed out');
/** gRPC DEADLINE_EXCEEDED (status 4): the call's own deadline, the same as ours. */
const isDeadline = (e: unknown) => (e as { code?: unknown })?.code === 4;

/** `p`, or TIMED_OUT once `ms` have passed (the work itself goes on, bounded by its own timeouts). */
function within<T>(p: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}

export async function readiness(d: ReadinessDeps): Promise<Readiness> {
  const ms = d.checkMs ?? LIMITS.readinessCheckMs;
  const heartbeats = new WorkerHeartbeatStore(d.pool);
  const checks: Record<string, () => Promise<string | typeof TIMED_OUT>> = {
    postgres: () =>
      d.pool.query('SELECT 1').then(
        () => 'ok',
        (e) => `not reachable: ${reason(e)}`,
      ),
    // The gRPC call gets the deadline too, so a hung server does not keep calls open behind the answer.
    temporal: () =>
      d.client.connection.withDeadline(Date.now() + ms, () => d.client.connection.workflowService.getSystemInfo({})).then(
        () => 'ok',
        (e) => (isDeadline(e) ? TIMED_OUT : `not reachable: ${reason(e)}`),
      ),
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
  const names = Object.keys(checks);
  const results = await Promise.all(names.map((n) => within(checks[n](), ms)));
  const out: Record<string, string> = {};
  const timedOut: string[] = [];
  names.forEach((n, i) => {
    const r = results[i];
    if (r === TIMED_OUT) timedOut.push(n);
    out[n] = r === TIMED_OUT ? `timed out after ${ms} ms` : r;
  });
  return { ready: Object.values(out).every((v) => v === 'ok'), checks: out, timedOut };
}
