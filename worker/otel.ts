/**
 * OpenTelemetry in the worker process, when OTEL_EXPORTER_OTLP_ENDPOINT is set (unset: none of
 * this is built, nothing runs):
 *   - the session exporter: activities/otel/index.ts's exporter and resource, and the `otel-export`
 *     workflow that drives it (started here, one per namespace and task queue);
 *   - Temporal's own spans through @temporalio/interceptors-opentelemetry: every activity's
 *     RunActivity span, the worker client's StartWorkflow/update spans, and the workflows'
 *     RunWorkflow/StartActivity spans (the interceptor module workflows/otel/interceptors.ts is
 *     in every bundle; its spans leave the sandbox through the `exporter` sink made here),
 *     through one batch processor to the same collector. The exporter's own polling activity
 *     is left out, on both sides (RunActivity here, StartActivity in the sink), so an idle
 *     Timekeeper sends no trace every poll.
 * Without an endpoint only the sink is built, as a no-op (workflowSinks): the bundle's
 * interceptors still make their spans in the sandbox and hand them to it (bench:otel measures
 * what that costs).
 */
import type { Client } from '@temporalio/client';
import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor, type OpenTelemetryWorkflowClientInterceptor, makeWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import type { OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry/lib/workflow';
import type { OtelActivityDeps } from '../activities/otel';
import { createSpanExporter, type OtelSettings } from '../lib/otel/exporter';
import { temporalTracing } from '../lib/otel/temporal-tracing';
import { log } from '../lib/log';
import { TELEMETRY_START } from '../lib/store/telemetry';
import { LIMITS } from '../lib/domain/limits';
import { otelExportWorkflowId, otelExportWorkflow } from '../workflows/otel/workflow';

export interface WorkerOtelOptions extends OtelSettings {
  pollMs: number;
  settleMs: number;
}

export interface WorkerTelemetry {
  /** What the export activity needs (activities/otel/index.ts). */
  activityExport: NonNullable<OtelActivityDeps['export']>;
  /** Temporal's activity spans. */
  activityInterceptors: ActivityInterceptorsFactory[];
  /** The workflows' spans, out of the sandbox (the workflow interceptor module's `exporter` sink). */
  sinks: InjectedSinks<OpenTelemetrySinks>;
  /** Temporal's client spans, for the worker's own client. */
  clientInterceptor: OpenTelemetryWorkflowClientInterceptor;
  /** Starts the exporter workflow unless it runs already (USE_EXISTING); failures are logged, and the next start tries again. */
  startExporter(client: Client, taskQueue: string): Promise<void>;
  /** Sends what the batch processor holds, then closes both exporters. */
  shutdown(): Promise<void>;
}

const OWN_ACTIVITY = 'exportSessionTelemetry';
/** The exporter workflow's span for each poll (workflows/otel/workflow.ts), dropped like its RunActivity span. */
const OWN_START = `StartActivity:${OWN_ACTIVITY}`;

/** Passes every ended span on to `next` except the exporter's own polls. */
function withoutOwnPolls(next: SpanProcessor): SpanProcessor {
  return {
    onStart: (span: Span, ctx: Context) => next.onStart(span, ctx),
    onEnd: (span: ReadableSpan) => (span.name === OWN_START ? undefined : next.onEnd(span)),
    forceFlush: () => next.forceFlush(),
    shutdown: () => next.shutdown(),
  };
}

/** The workflow interceptors' sink when export is off: their spans are dropped on arrival. */
export const workflowSinksOff = (): InjectedSinks<OpenTelemetrySinks> => ({ exporter: { export: { fn: () => undefined } } });

export function workerTelemetry(o: WorkerOtelOptions): WorkerTelemetry {
  const temporal = temporalTracing(o);
  const { resource, tracer } = temporal;
  const sessions = createSpanExporter(o);
  return {
    activityExport: { exporter: sessions, resource, settleMs: o.settleMs },
    activityInterceptors: [
      (ctx) =>
        ctx.info.activityType === OWN_ACTIVITY
          ? {}
          : { inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer }), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) },
    ],
    sinks: { exporter: makeWorkflowExporter(withoutOwnPolls(temporal.processor), resource) },
    clientInterceptor: temporal.clientInterceptor,
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
      await temporal.shutdown();
      await sessions.shutdown().catch(() => undefined);
    },
  };
}
