/**
 * OTLP/HTTP (protobuf) export with the official OpenTelemetry JS SDK: the session spans of
 * lib/otel/session-spans.ts become the SDK's ReadableSpans and go out through its
 * OTLPTraceExporter; the Temporal interceptors' spans take the same exporter through a batch
 * processor (worker/otel.ts).
 *
 * Session spans are built as ReadableSpans rather than started on a Tracer on purpose: their
 * ids and times come from the stored events (so a re-export sends the same span ids, and a
 * turn's children find their parent across batches), and the exporter activity must learn
 * whether the collector took a batch, to keep its cursor where it was when it did not; a
 * Tracer's span processor drops failed batches silently.
 */
import { SpanKind, SpanStatusCode, TraceFlags } from '@opentelemetry/api';
import { ExportResultCode, hrTimeDuration, millisToHrTime } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { SpanSpec } from './session-spans';

export interface OtelSettings {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL; traces go to <endpoint>/v1/traces. */
  endpoint: string;
  /** OTEL_SERVICE_NAME (default `timekeeper`). */
  serviceName: string;
}

/** The OTLP/HTTP traces URL of a base endpoint, as the OTLP exporter specification derives it. */
export const tracesUrl = (endpoint: string): string => `${endpoint.replace(/\/+$/, '')}/v1/traces`;

/** The exporter's own deadline per request; a slower collector counts as down and the batch is retried. */
const EXPORT_TIMEOUT_MS = 10_000;

/** The SDK's OTLP/HTTP protobuf exporter; it reads OTEL_EXPORTER_OTLP_HEADERS itself. */
export function createSpanExporter(s: OtelSettings): SpanExporter {
  return new OTLPTraceExporter({ url: tracesUrl(s.endpoint), timeoutMillis: EXPORT_TIMEOUT_MS });
}

export const otelResource = (s: OtelSettings): Resource => new Resource({ 'service.name': s.serviceName });

const SCOPE = { name: 'timekeeper.sessions', version: '1' };

export function toReadableSpan(spec: SpanSpec, resource: Resource): ReadableSpan {
  const startTime = millisToHrTime(spec.startMs);
  const endTime = millisToHrTime(spec.endMs);
  return {
    name: spec.name,
    kind: spec.kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL,
    spanContext: () => ({ traceId: spec.traceId, spanId: spec.spanId, traceFlags: TraceFlags.SAMPLED, isRemote: false }),
    parentSpanId: spec.parentSpanId,
    startTime,
    endTime,
    duration: hrTimeDuration(startTime, endTime),
    status: spec.error === undefined ? { code: SpanStatusCode.UNSET } : { code: SpanStatusCode.ERROR, message: spec.error },
    attributes: spec.attributes,
    links: [],
    events: [],
    ended: true,
    resource,
    instrumentationLibrary: SCOPE,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

/** Sends spans in one export; rejects when the collector did not take them (the caller keeps its cursor). */
export function exportSpans(exporter: SpanExporter, spans: ReadableSpan[]): Promise<void> {
  if (spans.length === 0) return Promise.resolve();
  return new Promise((resolve, reject) =>
    exporter.export(spans, (r) => (r.code === ExportResultCode.SUCCESS ? resolve() : reject(r.error ?? new Error('the OTLP collector did not take the spans')))),
  );
}
