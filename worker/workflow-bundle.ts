/**
 * What the worker's sandbox runs: the workflows (workflows/index.ts) and the workflow
 * interceptor module (workflows/otel/interceptors.ts, Temporal's OpenTelemetry workflow spans).
 * A prebuilt bundle must contain the interceptors (the SDK ignores
 * WorkerOptions.interceptors.workflowModules when a bundle is given), so every bundler here
 * (the worker under tsx, the tests' global set-up and rigs) takes these options;
 * bin/build.mjs, plain JavaScript, names the same two files.
 * Paths from this file's folder rather than require.resolve: in the compiled bundle the
 * latter would resolve from dist/ (bin/build.mjs gives each module its source folder back).
 */
import path from 'node:path';
import { bundleWorkflowCode, type BundleOptions } from '@temporalio/worker';

export const WORKFLOWS_PATH = path.join(__dirname, '..', 'workflows', 'index.ts');
export const WORKFLOW_INTERCEPTOR_MODULES = [path.join(__dirname, '..', 'workflows', 'otel', 'interceptors.ts')];

/** The workflow code bundled for the worker's sandbox (seconds of CPU: once per process under tsx; the compiled runtime loads dist/workflow-bundle.js). */
export async function bundleWorkflows(logger?: BundleOptions['logger']): Promise<string> {
  return (await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES, ...(logger ? { logger } : {}) })).code;
}
