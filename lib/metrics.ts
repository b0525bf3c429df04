/**
 * The one Prometheus registry of a Timekeeper process (prom-client) and every series it
 * exports. The API observes HTTP requests and, at scrape time, health and intent gauges;
 * worker activities observe appends, intent transitions and wakes, task runs and
 * deliveries. Never imported by workflow code or lib/domain (the workflow sandbox has no
 * place for it): workflows are observed through the activities they call.
 *
 * In a process that runs the worker and the API (`npm start`) one scrape shows both; with
 * `npm run worker` and `npm run api` apart, the worker-side series stay in the worker
 * process, which serves them on WORKER_METRICS_PORT (worker/metrics-listener.ts). Under
 * `npm start` the worker is a child process: the API's scrape merges its families in
 * (api/system/worker-metrics.ts).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { METRIC_BUCKETS } from './domain/limits';

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

const r = { registers: [registry] };

export const metrics = {
  // ---- HTTP (api/app.ts) ------------------------------------------------------------------
  httpRequests: new Counter({
    name: 'timekeeper_http_requests_total',
    help: 'HTTP requests answered, by method, route (the contract path, not the URL) and status',
    labelNames: ['method', 'route', 'status'] as const,
    ...r,
  }),
  httpDuration: new Histogram({
    name: 'timekeeper_http_request_duration_seconds',
    help: 'HTTP request latency, by method, route (the contract path) and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [...METRIC_BUCKETS.httpSeconds],
    ...r,
  }),

  // ---- appends (activities/sessions/index.ts) ---------------------------------------------------
  appendBatchDuration: new Histogram({
    name: 'timekeeper_append_batch_duration_seconds',
    help: 'Time to write one append batch (lock, dedup, hash, insert, commit) in the writer activity, by outcome',
    labelNames: ['outcome'] as const,
    buckets: [...METRIC_BUCKETS.appendSeconds],
    ...r,
  }),
  appendBatchSize: new Histogram({
    name: 'timekeeper_append_batch_size',
    help: 'Items in one append batch the session workflow handed to the writer',
    buckets: [...METRIC_BUCKETS.batchSize],
    ...r,
  }),
  appendBatches: new Counter({
    name: 'timekeeper_append_batches_total',
    help:
      'Append batches the writer decided, by path: on_head (on the session workflow\'s chain head, no lookup) or lookup, and why it looked up (create, no_head: a workflow from before the head was handed over, refusal: an item the head alone would refuse, conflict: the table refused the head, an event id or a key)',
    labelNames: ['path', 'reason'] as const,
    ...r,
  }),
  eventsAppended: new Counter({
    name: 'timekeeper_events_appended_total',
    help: 'New timeline events stored (retries answered from the store are not counted), by event type',
    labelNames: ['type'] as const,
    ...r,
  }),

  // ---- intents (activities/intents/index.ts; the gauge at scrape time in the API) ---------------
  intents: new Gauge({ name: 'timekeeper_intents', help: 'Intents by current state (at scrape time)', labelNames: ['status'] as const, ...r }),
  intentTransitions: new Counter({
    name: 'timekeeper_intent_transitions_total',
    help: 'Intent transitions stored, by target state and actor (agent, system)',
    labelNames: ['to', 'actor'] as const,
    ...r,
  }),
  intentWrites: new Counter({
    name: 'timekeeper_intent_writes_total',
    help:
      "Transitions the intent writer decided, by path: on_head (on the intent workflow's chain head, no lookup) or lookup, and why it looked up (create, no_head: a workflow from before the head was handed over, refusal: the head alone would refuse it, conflict: the table refused the head or the transition id)",
    labelNames: ['path', 'reason'] as const,
    ...r,
  }),
  intentExpiries: new Counter({ name: 'timekeeper_intent_expiries_total', help: 'Intents moved to blocked by their time-to-live', ...r }),

  // ---- OpenTelemetry export (activities/otel/index.ts) ----------------------------------------
  otelEventsExported: new Counter({ name: 'timekeeper_otel_events_exported_total', help: 'Timeline events the OpenTelemetry exporter has read and the collector has taken', ...r }),
  otelSpansExported: new Counter({ name: 'timekeeper_otel_spans_exported_total', help: 'Session spans the collector has taken', ...r }),
  otelExportFailures: new Counter({ name: 'timekeeper_otel_export_failures_total', help: 'Export batches the collector did not take (retried: the cursor stays)', ...r }),
  otelExportLag: new Gauge({ name: 'timekeeper_otel_export_lag_seconds', help: 'Age (by ts) of the last event exported, when the batch was taken: how far behind the export is', ...r }),
  intentWakes: new Counter({
    name: 'timekeeper_intent_wakes_total',
    help: 'Wake calls for re-opened intents, by outcome (sent, refused, failed, off when no INTENT_WAKE_URL)',
    labelNames: ['outcome'] as const,
    ...r,
  }),

  // ---- tasks (activities/tasks/index.ts) --------------------------------------------------------
  taskRuns: new Counter({
    name: 'timekeeper_task_runs_total',
    help: 'Task run log entries, by status (running, retry, success, failed, skipped) and trigger',
    labelNames: ['status', 'trigger'] as const,
    ...r,
  }),
  taskLateness: new Histogram({
    name: 'timekeeper_task_firing_lateness_seconds',
    help: 'How late a run started after its nominal fire time, by trigger',
    labelNames: ['trigger'] as const,
    buckets: [...METRIC_BUCKETS.latenessSeconds],
    ...r,
  }),
  taskFirstAttemptSteps: new Histogram({
    name: 'timekeeper_task_first_attempt_step_seconds',
    help: "A run's start and first attempt step by step: fire (the scheduler's fireRun: overlap check, start logged, workflow started), then in the runFirstAttempt local activity queued (the start logged to the activity running: workflow start, workflow task, local-activity slot), context (the last start and the run memory read), agent (the agent call), log (success row and the wakes read), deliver, announce (the outcome signal)",
    labelNames: ['step'] as const,
    buckets: [...METRIC_BUCKETS.stepSeconds],
    ...r,
  }),
  taskDeliveries: new Counter({
    name: 'timekeeper_task_deliveries_total',
    help: 'Deliveries of finished runs, by target type (webhook, session) and outcome (ok, failed)',
    labelNames: ['type', 'outcome'] as const,
    ...r,
  }),

  // ---- health (at scrape time in the API) -------------------------------------------------
  up: new Gauge({
    name: 'timekeeper_dependency_up',
    help: '1 when the dependency answers (postgres, temporal, worker: a worker polls the task queue), else 0',
    labelNames: ['dependency'] as const,
    ...r,
  }),
};

/** Seconds since a `performance.now()` reading. */
/** A run's start: how late it began after its nominal fire time (never negative), into taskLateness. */
export const observeTaskLateness = (trigger: string, nominalMs: number, startedMs: number) =>
  metrics.taskLateness.observe({ trigger }, Math.max(0, startedMs - nominalMs) / 1000);

export const secondsSince = (start: number) => (performance.now() - start) / 1000;
