/**
 * Workflow threads without the SDK's per-promise stack capture (issue 17; WORKFLOW_STACK_TRACES).
 *
 * The Temporal TypeScript SDK (1.24) installs a V8 promise hook in each workflow thread that,
 * for every promise workflow code creates, builds an Error and formats its stack (with source-map
 * lookups) so that the `__stack_trace` query (the Temporal UI's "Stack Trace" tab) can show where
 * each workflow waits. It is always on and has no option (sdk-typescript#1587); profiles put half
 * of a session append's workflow-thread CPU in it (docs/operations.md).
 *
 * Hand-written on purpose, as the smallest change that keeps the SDK unmodified: the SDK starts its
 * workflow threads with `new Worker(<its workflow-worker-thread.js>)` from `node:worker_threads`.
 * Before the first Temporal worker is created, this replaces that constructor with one that starts
 * those threads (and only those) with a short preamble: `v8.promiseHooks.createHook` throws when
 * the SDK's stack-trace hook calls it, which is the SDK's own "not available" path (it logs one
 * warning per thread and answers the stack trace query with "Workflow stack traces are not
 * enabled on this worker"); then it loads the SDK's thread module as before. Nothing else changes: errors in workflow code keep their stacks,
 * replay and determinism are untouched, and every other thread starts exactly as asked.
 */
import workerThreads from 'node:worker_threads';

const SDK_WORKFLOW_THREAD = require.resolve('@temporalio/worker/lib/workflow/workflow-worker-thread');

// Node's own AsyncLocalStorage (which the SDK's workflow code uses) also calls
// `promiseHooks.createHook`, on the same object: only the call from the SDK's vm-shared.js (its
// stack-trace hook) is refused.
const PREAMBLE = [
  "const hooks = require('node:v8').promiseHooks;",
  'const createHook = hooks.createHook;',
  'hooks.createHook = function (callbacks) {',
  "  if (/[\\\\/]vm-shared\\.js:/.test(new Error().stack)) throw new Error('workflow stack traces are off (WORKFLOW_STACK_TRACES)');",
  '  return createHook.call(this, callbacks);',
  '};',
  `require(${JSON.stringify(SDK_WORKFLOW_THREAD)});`,
].join('\n');

// Kept on the installed constructor under a registry symbol, not in a module variable: the
// constructor is process-wide, and this module may be loaded more than once in one process
// (jest gives each test file its own module registry), each instance setting the same switch.
const STACK_TRACES = Symbol.for('timekeeper.workflowStackTraces');
type ThreadWorker = typeof workerThreads.Worker & { [STACK_TRACES]?: boolean };

/**
 * Whether workflow threads started from now on keep the SDK's promise hook (true: as the SDK
 * starts them) or start without it. Process-wide, read when the SDK starts a thread (at
 * Worker.create): a worker process has one setting, from its configuration.
 */
export function setWorkflowStackTraces(on: boolean): void {
  const current = workerThreads.Worker as ThreadWorker;
  if (current[STACK_TRACES] !== undefined) {
    current[STACK_TRACES] = on;
    return;
  }
  if (on) return;
  class WorkflowThreadWorker extends current {
    static [STACK_TRACES] = false;
    constructor(filename: string | URL, options?: workerThreads.WorkerOptions) {
      if (!WorkflowThreadWorker[STACK_TRACES] && filename === SDK_WORKFLOW_THREAD) super(PREAMBLE, { ...options, eval: true });
      else super(filename, options);
    }
  }
  // The default import is the module object itself (esModuleInterop), which the SDK reads
  // `Worker` from each time it starts a thread.
  workerThreads.Worker = WorkflowThreadWorker;
}
