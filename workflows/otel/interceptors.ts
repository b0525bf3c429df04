/**
 * The workflow interceptor module (bundled into the workflow code, worker/workflow-bundle.ts,
 * bin/build.mjs): Temporal's OpenTelemetry workflow interceptors as the package's README for
 * 1.24 wires them, switched on per workflow run by its start. A run whose start carries a trace
 * context in its headers (a client with the OpenTelemetry interceptor started it: the API's or
 * the worker's when OTEL_EXPORTER_OTLP_ENDPOINT is set, lib/otel/temporal-tracing.ts) gets a
 * `RunWorkflow:<type>` span, child of the client's span, with `StartActivity:<type>` children
 * whose context the activity's `RunActivity` span continues; continue-as-new and child
 * workflows carry the context on. A run started without one (export off) goes straight
 * through to the next interceptor, as if none were installed, and the package's workflow
 * module is not even loaded (see `otel` below): export off costs a header look-up per run and
 * message (docs/operations.md has the replay figures). Hand-written on purpose for that
 * switch; the spans themselves are the package's. Spans leave the sandbox through the
 * `exporter` sink (worker/otel.ts). The interceptors only add headers to commands (not part
 * of determinism) and the SDK's flags keep older histories' yields; a recorded history without
 * the header runs exactly as before (test/replay/replay.test.ts).
 */
import type * as OtelWorkflow from '@temporalio/interceptors-opentelemetry/lib/workflow';
import type { Headers } from '@temporalio/common';
import type { WorkflowInboundCallsInterceptor, WorkflowInterceptors, WorkflowInternalsInterceptor, WorkflowOutboundCallsInterceptor } from '@temporalio/workflow';

/** The package's header (lib/instrumentation.ts TRACE_HEADER; test/unit/otel-interceptors.test.ts holds them equal). */
export const TRACE_HEADER = '_tracer-data';

const carriesTrace = (headers: Headers | undefined): boolean => headers?.[TRACE_HEADER] !== undefined;

/**
 * The package's workflow module, loaded at the first traced call only. The reusable V8 context
 * evaluates a workflow's modules again for every workflow it creates (per-workflow isolation),
 * and this module with @opentelemetry/sdk-trace-base and the semantic conventions was about
 * 2.6 ms of CPU per workflow created with export off (a profile of 1,000 task creates: 1.0 of
 * the workflow thread's 3.6 s). Deterministic: the same headers load it at the same point on
 * replay; loading issues no command. A plain require so the bundler keeps it in the bundle and
 * runs it only when called (an import() would ask for a chunk the sandbox cannot load).
 */
let lib: typeof OtelWorkflow | undefined;
const otel = (): typeof OtelWorkflow => (lib ??= require('@temporalio/interceptors-opentelemetry/lib/workflow') as typeof OtelWorkflow);

export const interceptors = (): WorkflowInterceptors => {
  // Per workflow run (the factory is called once per run): whether its start carried a trace, and the package's interceptors, made only then.
  let traced = false;
  let inbound: OtelWorkflow.OpenTelemetryInboundInterceptor | undefined;
  let outbound: OtelWorkflow.OpenTelemetryOutboundInterceptor | undefined;
  const inb = () => (inbound ??= new (otel().OpenTelemetryInboundInterceptor)());
  const out = () => (outbound ??= new (otel().OpenTelemetryOutboundInterceptor)());
  const onRun: WorkflowInboundCallsInterceptor = {
    execute: (input, next) => {
      if (!carriesTrace(input.headers)) return next(input);
      traced = true;
      return inb().execute(input, next);
    },
    handleSignal: (input, next) => (carriesTrace(input.headers) ? inb().handleSignal(input, next) : next(input)),
    handleUpdate: (input, next) => (carriesTrace(input.headers) ? inb().handleUpdate(input, next) : next(input)),
    validateUpdate: (input, next) => (carriesTrace(input.headers) ? inb().validateUpdate(input, next) : next(input)),
    handleQuery: (input, next) => (carriesTrace(input.headers) ? inb().handleQuery(input, next) : next(input)),
  };
  const onCalls: WorkflowOutboundCallsInterceptor = {
    scheduleActivity: (input, next) => (traced ? out().scheduleActivity(input, next) : next(input)),
    scheduleLocalActivity: (input, next) => (traced ? out().scheduleLocalActivity(input, next) : next(input)),
    startChildWorkflowExecution: (input, next) => (traced ? out().startChildWorkflowExecution(input, next) : next(input)),
    continueAsNew: (input, next) => (traced ? out().continueAsNew(input, next) : next(input)),
    signalWorkflow: (input, next) => (traced ? out().signalWorkflow(input, next) : next(input)),
    startNexusOperation: (input, next) => (traced ? out().startNexusOperation(input, next) : next(input)),
    getLogAttributes: (input, next) => (traced ? out().getLogAttributes(input, next) : next(input)),
    getMetricTags: (input, next) => (traced ? out().getMetricTags(input, next) : next(input)),
  };
  // The package's internals interceptor only disables its context manager at dispose, which exists once a traced call made it.
  const internals: WorkflowInternalsInterceptor = {
    dispose: (input, next) => (lib ? new lib.OpenTelemetryInternalsInterceptor().dispose(input, next) : next(input)),
  };
  return { inbound: [onRun], outbound: [onCalls], internals: [internals] };
};
