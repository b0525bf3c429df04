/**
 * Preload for worker processes run from the TypeScript sources (`node -r
 * ./bin/tsx-main-thread.cjs bin/worker.ts`: `npm run dev`'s worker child, the tests' worker
 * processes; production runs the compiled build through bin/launch.cjs): registers tsx
 * (TypeScript) in the main thread only.
 *
 * The Temporal SDK runs workflow code in worker threads, and worker threads inherit the
 * process's loader flags: under `--import tsx` every workflow thread loads tsx too and turns
 * on source-map-aware stack traces, which the SDK then pays for on each promise a workflow
 * creates (it records a stack trace per promise for its stack-trace query). The threads run
 * only the SDK's JavaScript and the prebuilt workflow bundle, so they need no loader.
 */
if (require('node:worker_threads').isMainThread) require('tsx/cjs');
