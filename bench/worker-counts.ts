/**
 * The in-process worker of bench/cost.ts and bench/calls.ts on a fault rig (as `npm start` runs
 * it), and the counts they take from it and from histories.
 */
import { temporal } from '@temporalio/proto';
import type { NativeConnection, Worker } from '@temporalio/worker';
import type { Pool } from 'pg';
import { SessionClient } from '../clients/sessions';
import { createPool } from '../lib/db';
import { TUNABLE } from '../lib/domain/limits';
import type { FaultRig } from '../test/support/fault-rig';
import { createTimekeeperWorker } from '../worker/worker';

export interface InProcessWorker {
  /** The worker's own pool (its statements can be counted on 'connect'). */
  pool: Pool;
  activations: { readonly n: number };
  /** A SessionClient on the rig, as the API builds it. */
  sessions: SessionClient;
  stop(): Promise<void>;
}

/** Starts the Timekeeper worker in this process on the rig's task queue; `onPool` sees its pool before the first query. */
export async function startInProcessWorker(rig: FaultRig, onPool: (pool: Pool) => void = () => undefined): Promise<InProcessWorker> {
  const pool = createPool(rig.config.databaseUrl);
  onPool(pool);
  const tw = await createTimekeeperWorker({ connection: rig.client.connection as NativeConnection, namespace: rig.config.temporalNamespace, taskQueue: rig.config.taskQueue, pool, workflowStackTraces: rig.config.workflowStackTraces });
  const running = tw.run();
  const activations = countActivations(tw.workers[0]);
  const sessions = new SessionClient({
    client: rig.client,
    pool: rig.pool,
    taskQueue: rig.config.taskQueue,
    maxContentBytes: TUNABLE.maxContentBytes.default,
    updatesPerRun: TUNABLE.updatesPerRun.default,
    writeTimeoutMs: 30_000,
  });
  return {
    pool,
    activations,
    sessions,
    stop: async () => {
      tw.shutdown();
      await running.catch(() => undefined);
      await pool.end();
    },
  };
}

/** Counts workflow activations the worker starts (its in-flight count going up). */
export function countActivations(worker: Worker): { readonly n: number } {
  const c = { n: 0 };
  let prev = 0;
  worker.numInFlightActivations$.subscribe((v) => {
    if (v > prev) c.n += v - prev;
    prev = v;
  });
  return c;
}

/** History events by type name (`MARKER_RECORDED`, …). */
export function eventsByType(events: temporal.api.history.v1.IHistoryEvent[]): Map<string, number> {
  const byType = new Map<string, number>();
  for (const e of events) {
    const name = String(temporal.api.enums.v1.EventType[Number(e.eventType)] ?? e.eventType).replace(/^EVENT_TYPE_/, '');
    byType.set(name, (byType.get(name) ?? 0) + 1);
  }
  return byType;
}
