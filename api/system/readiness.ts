/**
 * What /readyz checks, each dependency on its own: PostgreSQL answers, Temporal answers, and
 * a worker polls the task queue (an API without a worker would accept writes that no one
 * performs). A check is "ok" or the reason it is not.
 */
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { workerPolling } from '../../lib/temporal';

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
    workerPolling(d.client.connection, d.namespace, d.taskQueue),
  ]);
  return { postgres, temporal: temporalCheck, worker };
}
