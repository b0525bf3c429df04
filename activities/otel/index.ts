/**
 * The OpenTelemetry export activity: the next committed timeline events after the exporter
 * workflow's cursor, as GenAI spans, sent to the collector. It reads only committed rows and
 * runs apart from every write, so export never slows or fails an append; a batch the collector
 * refuses or cannot take throws, the workflow retries it with backoff and its cursor stays, so
 * an outage stalls the export and it resumes where it stopped. A crash after the collector took
 * a batch and before the workflow recorded the new cursor sends that batch again, with the same
 * span ids (at least once; the ids let a backend tell a resend).
 */
import { Context } from '@temporalio/activity';
import type { Pool } from 'pg';
import type { Resource } from '@opentelemetry/resources';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { exportSpans, toReadableSpan } from '../../lib/otel/exporter';
import { sessionSpans, type SpanSpec } from '../../lib/otel/session-spans';
import { LIMITS } from '../../lib/domain/limits';
import { metrics } from '../../lib/metrics';
import { TelemetryStore, type TelemetryCursor, type TelemetryRow } from '../../lib/store/telemetry';

export interface OtelActivityDeps {
  pool: Pool;
  /** None when OTEL_EXPORTER_OTLP_ENDPOINT is unset in this worker: the activity reports `disabled`. */
  export?: { exporter: SpanExporter; resource: Resource; settleMs: number };
}

export interface ExportBatchResult {
  cursor: TelemetryCursor;
  events: number;
  spans: number;
  /** True when this worker exports nothing (no endpoint): the workflow waits and asks again, keeping its cursor. */
  disabled?: boolean;
}

export function createOtelActivities(deps: OtelActivityDeps) {
  const store = new TelemetryStore(deps.pool);

  async function exportSessionTelemetry(cursor: TelemetryCursor): Promise<ExportBatchResult> {
    const ex = deps.export;
    if (!ex) return { cursor, events: 0, spans: 0, disabled: true };
    const rows = await store.eventsAfter(cursor, LIMITS.otelExportBatchEvents, ex.settleMs);
    if (rows.length === 0) return { cursor, events: 0, spans: 0 };
    const bySession = new Map<string, TelemetryRow[]>();
    for (const r of rows) {
      const list = bySession.get(r.session_id);
      if (list) list.push(r);
      else bySession.set(r.session_id, [r]);
    }
    const specs: SpanSpec[] = [];
    for (const [sessionId, events] of bySession) {
      // What the batch's spans open with (the turn's USER_INPUT, a TOOL_CALL) may be in an earlier batch.
      const before = await store.contextBefore(sessionId, events[0].seq, LIMITS.otelExportContextEvents);
      specs.push(...sessionSpans(events[0].session, [...before, ...events], events[0].seq));
    }
    try {
      await exportSpans(ex.exporter, specs.map((s) => toReadableSpan(s, ex.resource)));
    } catch (err) {
      metrics.otelExportFailures.inc();
      throw err;
    }
    const last = rows[rows.length - 1];
    metrics.otelEventsExported.inc(rows.length);
    metrics.otelSpansExported.inc(specs.length);
    metrics.otelExportLag.set(Math.max(0, (Date.now() - last.ts) / 1000));
    Context.current().log.debug('exported session spans', { events: rows.length, spans: specs.length });
    return { cursor: { ts: last.ts, session_id: last.session_id, seq: last.seq }, events: rows.length, spans: specs.length };
  }

  return { exportSessionTelemetry };
}

export type OtelActivities = ReturnType<typeof createOtelActivities>;
