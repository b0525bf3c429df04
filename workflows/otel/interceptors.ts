/**
 * The workflow interceptor module (bundled into the workflow code, worker/workflow-bundle.ts,
 * bin/build.mjs): Temporal's OpenTelemetry workflow interceptors as the package's README for
 * 1.24 wires them, switched on per workflow run by its start. A run whose start carries a trace
 * context in its headers (a client with the OpenTelemetry interceptor started it: the API's or
 * the worker's when OTEL_EXPORTER_OTLP_ENDPOINT is set, lib/otel/temporal-tracing.ts) gets a
 * `RunWorkflow:<type>` span, child of the client's span, with `StartActivity:<type>` children
 * whose context the activity's `RunActivity` span continues; continue-as-new and child
 * workflows carry the context on. A run started without one (export off) goes straight
 * through to the next interceptor, as if none were installed: export off costs a header
 * look-up per run and message and the larger bundle (replaying the recorded histories: +10–20 %
 * CPU against a bundle without the module, where the package's interceptors on every run cost
 * +37–69 %; docs/operations.md). Hand-written on purpose for that
 * switch; the spans themselves are the package's. Spans leave the sandbox through the
 * `exporter` sink (worker/otel.ts). The interceptors only add headers to commands (not part
 * of determinism) and the SDK's flags keep older histories' yields; a recorded history without
 * the header runs exactly as before (test/replay/replay.test.ts).
 */
import { TRACE_HEADER } from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import { OpenTelemetryInboundInterceptor, OpenTelemetryInternalsInterceptor, OpenTelemetryOutboundInterceptor } from '@temporalio/interceptors-opentelemetry/lib/workflow';
import type { Headers } from '@temporalio/common';
import type { WorkflowInboundCallsInterceptor, WorkflowInterceptors, WorkflowOutboundCallsInterceptor } from '@temporalio/workflow';

const carriesTrace = (headers: Headers | undefined): boolean => headers?.[TRACE_HEADER] !== undefined;

export const interceptors = (): WorkflowInterceptors => {
  // Per workflow run (the factory is called once per run): whether its start carried a trace, and the package's interceptors, made only then.
  let traced = false;
  let inbound: OpenTelemetryInboundInterceptor | undefined;
  let outbound: OpenTelemetryOutboundInterceptor | undefined;
  const inb = () => (inbound ??= new OpenTelemetryInboundInterceptor());
  const out = () => (outbound ??= new OpenTelemetryOutboundInterceptor());
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
  return { inbound: [onRun], outbound: [onCalls], internals: [new OpenTelemetryInternalsInterceptor()] };
};
