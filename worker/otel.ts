/**
 * OpenTelemetry in the worker process, when OTEL_EXPORTER_OTLP_ENDPOINT is set (unset: none of
 * this is built, nothing runs):
 *   - the session exporter: activities/otel.ts's exporter and resource, and the `otel-export`
 *     workflow that drives it (started here, one per namespace and task queue);
 *   - Temporal's own spans through @temporalio/interceptors-opentelemetry: every activity's
 *     RunActivity span and the worker client's StartWorkflow/update spans, through a batch
 *     processor to the same collector (the exporter's own polling activity is left out, so an
 *     idle Timekeeper sends no trace every poll). Workflow spans (the package's workflow
 *     interceptor module) are not included: they must be bundled into the workflow code, which
 *     is prebuilt, and would change the histories of every workflow (not done yet).
 */
import type { Client } from '@temporalio/client';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor, OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { OtelActivityDeps } from '../activities/otel';
import { createSpanExporter, otelResource, type OtelSettings } from '../lib/otel/exporter';
import { log } from '../lib/log';
import { TELEMETRY_START } from '../lib/store/telemetry';
import { LIMITS } from '../lib/domain/limits';
import { otelExportWorkflowId, otelExportWorkflow } from '../workflows/otel/workflow';

export interface WorkerOtelOptions extends OtelSettings {
  pollMs: number;
  settleMs: number;
}

export interface WorkerTelemetry {
  /** What the export activity needs (activities/otel.ts). */
  activityExport: NonNullable<OtelActivityDeps['export']>;
  /** Temporal's activity spans. */
  activityInterceptors: ActivityInterceptorsFactory[];
  /** Temporal's client spans, for the worker's own client. */
  clientInterceptor: OpenTelemetryWorkflowClientInterceptor;
  /** Starts the exporter workflow unless it runs already (USE_EXISTING); failures are logged, and the next start tries again. */
  startExporter(client: Client, taskQueue: string): Promise<void>;
  /** Sends what the batch processor holds, then closes both exporters. */
  shutdown(): Promise<void>;
}

const OWN_ACTIVITY = 'exportSessionTelemetry';

export function workerTelemetry(o: WorkerOtelOptions): WorkerTelemetry {
  const resource = otelResource(o);
  const sessions = createSpanExporter(o);
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(createSpanExporter(o))] });
  const tracer = provider.getTracer('timekeeper.temporal');
  // The active span follows awaits (AsyncLocalStorage), so a client call made inside an activity is that activity's child span.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  return {
    activityExport: { exporter: sessions, resource, settleMs: o.settleMs },
    activityInterceptors: [
      (ctx) =>
        ctx.info.activityType === OWN_ACTIVITY
          ? {}
          : { inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer }), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) },
    ],
    clientInterceptor: new OpenTelemetryWorkflowClientInterceptor({ tracer }),
    async startExporter(client, taskQueue) {
      try {
        await client.workflow.start(otelExportWorkflow, {
          workflowId: otelExportWorkflowId(taskQueue),
          taskQueue,
          args: [{ cursor: TELEMETRY_START, pollMs: o.pollMs, batchEvents: LIMITS.otelExportBatchEvents }],
          workflowIdConflictPolicy: 'USE_EXISTING',
        });
      } catch (e) {
        log().warn({ component: 'otel', err: (e as Error).message }, 'could not start the OpenTelemetry exporter workflow; the next worker start tries again');
      }
    },
    async shutdown() {
      await provider.shutdown().catch(() => undefined);
      await sessions.shutdown().catch(() => undefined);
    },
  };
}
