/**
 * What /readyz checks, each dependency on its own: PostgreSQL answers, Temporal answers, and
 * a worker polls the task queue (an API without a worker would accept writes that no one
 * performs). A check is "ok" or the reason it is not.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { Pool } from 'pg';
import { LIMITS } from '../../lib/domain/limits';

export interface ReadinessDeps {
  client: Client;
  pool: Pool;
  namespace: string;
  taskQueue: string;
}

const reason = (e: unknown) => (e as Error)?.message || String(e);

export async function readinessChecks(d: ReadinessDeps): Promise<Record<string, string>> {
  const [postgres, temporalCheck, worker] = await Promise.all([
    d.pool.query('SELECT 1').then(
      () => 'ok',
      (e) => `not reachable: ${reason(e)}`,
    ),
    d.client.connection.workflowService.getSystemInfo({}).then(
      () => 'ok',
      (e) => `not reachable: ${reason(e)}`,
    ),
    workerPolling(d),
  ]);
  return { postgres, temporal: temporalCheck, worker };
}

/** "ok" when some worker polled the task queue for workflow tasks recently. */
async function workerPolling(d: ReadinessDeps): Promise<string> {
  try {
    const r = await d.client.connection.workflowService.describeTaskQueue({
      namespace: d.namespace,
      taskQueue: { name: d.taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
      taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    });
    const now = Date.now();
    const recent = (r.pollers ?? []).some((p) => {
      const t = p.lastAccessTime;
      const ms = t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0;
      return now - ms <= LIMITS.workerPollerFreshMs;
    });
    return recent ? 'ok' : `no worker has polled task queue "${d.taskQueue}" in the last ${LIMITS.workerPollerFreshMs / 1000} s`;
  } catch (e) {
    return `unknown: ${reason(e)}`;
  }
}
