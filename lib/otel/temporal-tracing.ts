/**
 * Temporal's own spans (@temporalio/interceptors-opentelemetry) for one process: a tracer
 * whose spans go through the SDK's batch processor to the collector, and the client
 * interceptor that opens a StartWorkflow / UpdateWithStartWorkflow / StartWorkflowUpdate span
 * per call and sends its context in the headers, so the worker's RunWorkflow span is its child.
 * The worker (worker/otel.ts) and the API's Temporal client (bin/run.ts) each build one; the
 * session exporter (activities/otel/index.ts) has its own exporter and does not pass through here.
 */
import { context, propagation } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import type { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Tracer } from '@opentelemetry/api';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { createSpanExporter, otelResource, type OtelSettings } from './exporter';

export interface TemporalTracing {
  resource: Resource;
  tracer: Tracer;
  /** The batch processor every Temporal span of this process ends in (the workflow sink feeds it too). */
  processor: SpanProcessor;
  clientInterceptor: OpenTelemetryWorkflowClientInterceptor;
  /** Sends what the batch processor holds, then closes its exporter. */
  shutdown(): Promise<void>;
}

export function temporalTracing(o: OtelSettings): TemporalTracing {
  const resource = otelResource(o);
  const processor = new BatchSpanProcessor(createSpanExporter(o));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
  const tracer = provider.getTracer('timekeeper.temporal');
  // The active span follows awaits (AsyncLocalStorage), so a client call made inside an activity or a request is that span's child.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  // The interceptors carry a span's context in Temporal headers through the global propagator
  // (the API's default is a no-op): W3C trace context, as the workflow sandbox's provider registers it.
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return {
    resource,
    tracer,
    processor,
    clientInterceptor: new OpenTelemetryWorkflowClientInterceptor({ tracer }),
    shutdown: () => provider.shutdown().catch(() => undefined),
  };
}
