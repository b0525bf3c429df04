/**
 * workflows/otel/interceptors.ts keeps its own copy of the package's trace header name, so that
 * an untraced workflow never loads the package's workflow module (a cost paid again for every
 * workflow the reusable V8 context creates). The copy must be the package's name: a trace
 * context the client interceptor writes is found under it. The traced path itself is tested
 * end to end in test/e2e/otel-export.test.ts and by the recorded otel-export history.
 */
import { TRACE_HEADER as PACKAGE_TRACE_HEADER } from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import { TRACE_HEADER } from '../../workflows/otel/interceptors';

test("the interceptor module's trace header is the package's", () => {
  expect(TRACE_HEADER).toBe(PACKAGE_TRACE_HEADER);
});
