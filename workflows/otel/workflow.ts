/**
 * The OpenTelemetry exporter (`otel-export/<task queue>`): holds the
 * export cursor, the last exported event in commit-clock order, and asks the activity for the
 * next batch, again at once while batches come full, after `pollMs` once caught up. The cursor
 * lives only here (no table): restart-safe through the workflow's history, carried across
 * continue-as-new. An activity that fails (collector down, database down) is retried with
 * backoff without limit, so export stalls and then resumes at the same cursor. A worker
 * without an endpoint answers `disabled`; the workflow then waits and asks again, keeping its
 * cursor, so switching export off and on again resumes instead of starting over.
 */
import { continueAsNew, proxyActivities, sleep } from '@temporalio/workflow';
import type { OtelActivities } from '../../activities/otel';
import type { TelemetryCursor } from '../../lib/store/telemetry';

/** One exporter per task queue (a namespace may hold several Timekeepers, as the tests do). */
export const otelExportWorkflowId = (taskQueue: string): string => `otel-export/${taskQueue}`;

export interface OtelExportInput {
  cursor: TelemetryCursor;
  /** Wait between polls once caught up (TIMEKEEPER_OTEL_POLL_MS). */
  pollMs: number;
  /** A batch of this many events means more may be waiting: ask again at once. */
  batchEvents: number;
}

/** Batches per run before continue-as-new (about 7 history events each). */
const BATCHES_PER_RUN = 250;
/** How often a worker without an endpoint is asked again. */
const DISABLED_RECHECK_MS = 10 * 60_000;

const { exportSessionTelemetry } = proxyActivities<OtelActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

export async function otelExportWorkflow(input: OtelExportInput): Promise<void> {
  let cursor = input.cursor;
  for (let i = 0; i < BATCHES_PER_RUN; i++) {
    const r = await exportSessionTelemetry(cursor);
    cursor = r.cursor;
    if (r.disabled) await sleep(DISABLED_RECHECK_MS);
    else if (r.events < input.batchEvents) await sleep(input.pollMs);
  }
  await continueAsNew<typeof otelExportWorkflow>({ ...input, cursor });
}
