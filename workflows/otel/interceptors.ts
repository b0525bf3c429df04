/**
 * The workflow interceptor module (bundled into the workflow code, worker/workflow-bundle.ts,
 * bin/build.mjs): Temporal's OpenTelemetry workflow interceptors as the package's README for
 * 1.24 wires them. Every workflow gets a `RunWorkflow:<type>` span, child of the client's
 * `StartWorkflow:<type>` when the starter sent a trace context in the headers, with
 * `StartActivity:<type>` children whose context the activity's `RunActivity` span continues;
 * continue-as-new and child workflows carry the context on. Spans leave the sandbox through
 * the `exporter` sink (worker/otel.ts), which is a no-op when export is off, so one bundle
 * serves both. The interceptors only add headers to commands (not part of determinism) and
 * the SDK flags keep old histories' yields, so recorded histories still replay
 * (test/integration/replay.test.ts).
 */
import { OpenTelemetryInboundInterceptor, OpenTelemetryInternalsInterceptor, OpenTelemetryOutboundInterceptor } from '@temporalio/interceptors-opentelemetry/lib/workflow';
import type { WorkflowInterceptors } from '@temporalio/workflow';

export const interceptors = (): WorkflowInterceptors => ({
  inbound: [new OpenTelemetryInboundInterceptor()],
  outbound: [new OpenTelemetryOutboundInterceptor()],
  internals: [new OpenTelemetryInternalsInterceptor()],
});
