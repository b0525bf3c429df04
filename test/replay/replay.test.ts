/**
 * Replays every recorded session, intent and task-run workflow history (test/replay/histories, written
 * by `npm run record-histories`) against the current workflow code: a change that would break
 * running sessions or intents fails here. See test/replay/README.md.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DefaultLogger, ReplayWorkerOptions, Runtime, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { readHistoryFile } from './history-json';
import { TEST_ENV } from '../support/env';
import { WORKFLOWS_PATH, WORKFLOW_INTERCEPTOR_MODULES } from '../../worker/workflow-bundle';
import { workflowSinksOff } from '../../worker/otel';

const HISTORIES = path.resolve(__dirname, 'histories');
const files = fs.existsSync(HISTORIES)
  ? fs
      .readdirSync(HISTORIES)
      .filter((f) => f.endsWith('.json'))
      .sort()
  : [];

/** The bundle global-setup built from ./workflows, or ./workflows itself outside jest's set-up. */
function currentWorkflows(): Pick<ReplayWorkerOptions, 'workflowBundle' | 'workflowsPath' | 'interceptors'> {
  const prebuilt = process.env[TEST_ENV.workflowBundle];
  return prebuilt ? { workflowBundle: { codePath: prebuilt } } : { workflowsPath: WORKFLOWS_PATH, interceptors: { workflowModules: WORKFLOW_INTERCEPTOR_MODULES } };
}

beforeAll(() => {
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    /* already installed in this process */
  }
});

describe('workflow replay', () => {
  test('the recorded histories are there (an empty folder must not pass)', () => {
    expect(files.length).toBeGreaterThanOrEqual(10);
  });

  test('every recorded history replays against the current session, intent and task-run workflows', async () => {
    const histories = files.map((f) => ({ file: f, ...readHistoryFile(path.join(HISTORIES, f)) }));
    const types = Object.fromEntries(histories.map((h) => [h.file, h.history.events[0].workflowExecutionStartedEventAttributes?.workflowType?.name]));
    // Intent histories are the intent-*.json files, task runs task-run-*.json, task schedulers task-scheduler-*.json, the OpenTelemetry exporter otel-*.json; every other one is a session's.
    const typeOf = (f: string) =>
      f.startsWith('intent-') ? 'intentWorkflow' : f.startsWith('task-run-') ? 'taskRunWorkflow' : f.startsWith('task-scheduler-') ? 'taskSchedulerWorkflow' : f.startsWith('otel-') ? 'otelExportWorkflow' : 'sessionWorkflow';
    expect(types).toEqual(Object.fromEntries(files.map((f) => [f, typeOf(f)])));
    expect(files).toEqual(expect.arrayContaining(['task-run-result.json', 'task-run-success.json', 'task-scheduler-interval.json']));
    expect(files.filter((f) => f.startsWith('intent-'))).toEqual(expect.arrayContaining(['intent-lifecycle.json', 'intent-blocked-retry.json', 'intent-ttl-expiry.json']));
    const byRun = new Map(histories.map((h) => [h.history.events[0].workflowExecutionStartedEventAttributes!.originalExecutionRunId, h.file]));
    const results = Worker.runReplayHistories({ ...currentWorkflows(), sinks: workflowSinksOff(), replayName: 'replay-test' }, histories);
    const outcomes: Record<string, string> = {};
    for await (const r of results) {
      outcomes[byRun.get(r.runId) ?? `${r.workflowId}/${r.runId}`] = r.error ? `${r.error.name}: ${r.error.message}` : 'ok';
    }
    expect(outcomes).toEqual(Object.fromEntries(files.map((f) => [f, 'ok'])));
  });

  // The check has teeth: a workflow of the same type with one extra timer must fail replay.
  test.each([
    ['a session workflow', 'basic-lifecycle.json', 'nondeterministic-workflow'],
    ['an intent workflow', 'intent-lifecycle.json', 'nondeterministic-intent-workflow'],
  ])('%s with one extra timer fails replay of %s with a determinism violation', async (_what, file, module) => {
    const { workflowId, history } = readHistoryFile(path.join(HISTORIES, file));
    const err = await Worker.runReplayHistory(
      { workflowsPath: require.resolve(`./${module}`), replayName: `replay-negative-${module}` },
      history,
      workflowId,
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DeterminismViolationError);
  });
});
