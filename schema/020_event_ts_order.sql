-- The OpenTelemetry exporter's cursor (lib/store/telemetry.ts eventsAfter) walks committed
-- events in (ts, session_id, seq) order: without this index each poll scans timeline_events.
-- One more index on the append table; the exporter is off unless OTEL_EXPORTER_OTLP_ENDPOINT is
-- set, but the index is built either way so turning export on needs no migration.
CREATE INDEX timeline_events_ts_order ON timeline_events (ts, session_id, seq);
