/**
 * Replays every recorded workflow history (test/replay/histories, written by
 * `npm run record-histories`) against the current workflow code: a change that would break
 * running sessions, intents, task schedulers or runs fails here. Every workflow type the worker
 * registers and every task trigger kind must have a recorded history, and every history must
 * fail replay against workflows with one extra command. See test/replay/README.md.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DefaultLogger, ReplayWorkerOptions, Runtime, Worker } from '@temporalio/worker';
import { defaultPayloadConverter } from '@temporalio/common';
import { DeterminismViolationError } from '@temporalio/workflow';
import { readHistoryFile } from './history-json';
import { TEST_ENV } from '../support/env';
import { WORKFLOWS_PATH, WORKFLOW_INTERCEPTOR_MODULES } from '../../worker/workflow-bundle';
import { workflowSinksOff } from '../../worker/otel';
import * as workflows from '../../workflows';
import { TRIGGER_TYPES } from '../../lib/domain/tasks';
import type { SchedulerInput } from '../../workflows/tasks/messages';

const HISTORIES = path.resolve(__dirname, 'histories');
const files = fs.existsSync(HISTORIES)
  ? fs
      .readdirSync(HISTORIES)
      .filter((f) => f.endsWith('.json'))
      .sort()
  : [];
const histories = () => files.map((f) => ({ file: f, ...readHistoryFile(path.join(HISTORIES, f)) }));
const startedOf = (h: ReturnType<typeof histories>[number]) => h.history.events[0].workflowExecutionStartedEventAttributes!;

/** The bundle global-setup built from ./workflows, or ./workflows itself outside jest's set-up. */
function currentWorkflows(): Pick<ReplayWorkerOptions, 'workflowBundle' | 'workflowsPath' | 'interceptors'> {
  const prebuilt = process.env[TEST_ENV.workflowBundle];
  return prebuilt ? { workflowBundle: { codePath: prebuilt } } : { workflowsPath: WORKFLOWS_PATH, interceptors: { workflowModules: WORKFLOW_INTERCEPTOR_MODULES } };
}

beforeAll(() => {
  try {
    // Core's own warnings too: the negative checks fail workflow tasks on purpose.
    Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } } });
  } catch {
    /* already installed in this process */
  }
});

describe('workflow replay', () => {
  test('the recorded histories are there (an empty folder must not pass)', () => {
    expect(files.length).toBeGreaterThanOrEqual(10);
  });

  test('every recorded history replays against the current workflows', async () => {
    const all = histories();
    const types = Object.fromEntries(all.map((h) => [h.file, startedOf(h).workflowType?.name]));
    // Intent histories are the intent-*.json files, task runs task-run-*.json, task schedulers task-scheduler-*.json, the OpenTelemetry exporter otel-*.json, the log builder tlog-*.json; every other one is a session's.
    const typeOf = (f: string) =>
      f.startsWith('intent-')
        ? 'intentWorkflow'
        : f.startsWith('task-run-')
          ? 'taskRunWorkflow'
          : f.startsWith('task-scheduler-')
            ? 'taskSchedulerWorkflow'
            : f.startsWith('task-fire-shard')
              ? 'taskFireShardWorkflow'
              : f.startsWith('otel-')
              ? 'otelExportWorkflow'
              : f.startsWith('tlog-')
                ? 'tlogBuilderWorkflow'
                : 'sessionWorkflow';
    expect(types).toEqual(Object.fromEntries(files.map((f) => [f, typeOf(f)])));
    expect(files).toEqual(expect.arrayContaining(['task-run-result.json', 'task-run-success.json', 'task-scheduler-interval.json']));
    expect(files.filter((f) => f.startsWith('intent-'))).toEqual(expect.arrayContaining(['intent-lifecycle.json', 'intent-blocked-retry.json', 'intent-ttl-expiry.json']));
    expect(await replayOutcomes(all, { ...currentWorkflows(), sinks: workflowSinksOff(), replayName: 'replay-test' })).toEqual(Object.fromEntries(files.map((f) => [f, 'ok'])));
  });

  test('every workflow type the worker registers has a recorded history (a new type must come with one)', () => {
    const recorded = new Set(histories().map((h) => startedOf(h).workflowType?.name));
    const missing = Object.keys(workflows).filter((type) => !recorded.has(type));
    expect(Object.keys(workflows).length).toBeGreaterThanOrEqual(6);
    expect(missing).toEqual([]);
  });

  test('every task trigger kind has a recorded task scheduler history (a new kind must come with one)', () => {
    const kinds = new Set(
      histories()
        .filter((h) => startedOf(h).workflowType?.name === 'taskSchedulerWorkflow')
        .map((h) => defaultPayloadConverter.fromPayload<SchedulerInput>(startedOf(h).input!.payloads![0]).definition.trigger.type),
    );
    expect(TRIGGER_TYPES.filter((kind) => !kinds.has(kind))).toEqual([]);
  });

  // Each history has teeth: replayed against every workflow type with one extra command in its first workflow task, it fails.
  test('every recorded history fails replay with a determinism violation against workflows with one extra command', async () => {
    const module = require.resolve('./nondeterministic-workflows');
    // The stand-in covers every registered type (so no history replays against a missing one).
    expect(Object.keys(require(module)).sort()).toEqual(Object.keys(workflows).sort());
    const all = histories();
    const outcomes = await replayOutcomes(all, { workflowsPath: module, interceptors: { workflowModules: WORKFLOW_INTERCEPTOR_MODULES }, sinks: workflowSinksOff(), replayName: 'replay-negative-all' }, (e) => (e instanceof DeterminismViolationError ? 'determinism violation' : `${e.name}: ${e.message}`));
    expect(outcomes).toEqual(Object.fromEntries(files.map((f) => [f, 'determinism violation'])));
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

/** Replays `all` with `options`: per file, 'ok' or the error (as `describe` words it). */
async function replayOutcomes(all: ReturnType<typeof histories>, options: ReplayWorkerOptions, describe = (e: Error) => `${e.name}: ${e.message}`): Promise<Record<string, string>> {
  const byRun = new Map(all.map((h) => [startedOf(h).originalExecutionRunId, h.file]));
  const outcomes: Record<string, string> = {};
  for await (const r of Worker.runReplayHistories(options, all)) {
    outcomes[byRun.get(r.runId) ?? `${r.workflowId}/${r.runId}`] = r.error ? describe(r.error) : 'ok';
  }
  return outcomes;
}
