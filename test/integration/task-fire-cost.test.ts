/**
 * What one fire costs Temporal since issue 15, read from the real histories: a plain interval
 * task fires from the shared fire schedule (schema/023), so neither its scheduler's history nor
 * its shard's grows with its fires (no child workflow, no timer per fire), a fast webhook run
 * is one workflow task with no activity task, and a run's finish signals its scheduler only
 * when it waits for it (buffer_one). Real Temporal and PostgreSQL.
 */
import { temporal } from '@temporalio/proto';
import { LIMITS } from '../../lib/domain/limits';
import { schedulerWorkflowId } from '../../lib/domain/tasks';
import { fireShardOf, fireShardWorkflowId } from '../../lib/domain/tasks/fire-shards';
import { databaseInstanceId } from '../../lib/store/instance';
import { protocolAnswer } from '../support/fake-services';
import { eventually } from '../support';
import { schedulerState, useTaskTestSystem } from '../support/task-system';
import { startScheduler } from '../../clients/task-scheduler';
import { taskRunQueues } from '../../lib/config';
import type { TaskDefinition } from '../../lib/domain/tasks';
import { changedSignal } from '../../workflows/tasks/messages';

const t = useTaskTestSystem();
type Event = temporal.api.history.v1.IHistoryEvent;

async function historyOf(workflowId: string): Promise<Event[]> {
  return (await t.sys.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
}
/** Event types by name without the EVENT_TYPE_ prefix (the client decodes them as enum numbers). */
const names = (events: Event[]) => events.map((e) => String(temporal.api.enums.v1.EventType[e.eventType ?? 0]).replace('EVENT_TYPE_', ''));

async function fastAgentUrl(delayMs = 0) {
  const s = await t.server(async (r) => {
    if (delayMs) await new Promise((ok) => setTimeout(ok, delayMs));
    return { body: protocolAnswer(JSON.parse(r.body).task_id) };
  });
  return s.url;
}

test('a fire costs the scheduler nothing (it sleeps on the shared fire schedule) and a fast run one workflow task, with no child workflow and no activity task', async () => {
  const id = t.uid('cost');
  await t.tk.tasks.create({ task_id: id, trigger: { type: 'interval', every_s: 1, mode: 'aligned' }, agent: { type: 'webhook', url: await fastAgentUrl(), prompt_template: 'go' } });
  const runs = await eventually(async () => {
    const rs = (await t.runsOldestFirst(id)).filter((r) => r.status === 'success');
    return rs.length >= 3 ? rs : undefined;
  }, 20_000);
  await t.tk.tasks.delete(id);
  await t.sys.client.workflow.getHandle(schedulerWorkflowId(id)).result();

  const schedulerEvents = await historyOf(schedulerWorkflowId(id));
  const scheduler = names(schedulerEvents);
  expect(scheduler.filter((n) => n.includes('CHILD_WORKFLOW'))).toEqual([]);
  expect(scheduler.filter((n) => n.startsWith('ACTIVITY_TASK'))).toEqual([]);
  expect(scheduler.filter((n) => n.startsWith('TIMER'))).toEqual([]);
  // No run woke it: nothing asked (overlap skip, runs over before the next fire time).
  expect(scheduler.filter((n) => n === 'WORKFLOW_EXECUTION_SIGNALED').length).toBe(1); // the delete's `changed`: a create starts it without a signal
  // Its patches came with its input (SchedulerInput.patches): no core_patch marker and no
  // TemporalChangeVersion upsert, a visibility write per create.
  expect(schedulerEvents.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')).toEqual([]);
  expect(scheduler.filter((n) => n === 'UPSERT_WORKFLOW_SEARCH_ATTRIBUTES')).toEqual([]);
  // The log counts the fires (a run or a skip each); the scheduler's history does not grow with
  // them: its start (registerFires) and the delete (unregisterFires), whatever the fires.
  const fires = (await t.runsOldestFirst(id)).length;
  const wfts = scheduler.filter((n) => n === 'WORKFLOW_TASK_COMPLETED').length;
  expect(fires).toBeGreaterThanOrEqual(3);
  expect(wfts).toBeLessThanOrEqual(3);
  const localActivities = schedulerEvents.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length;
  expect(localActivities).toBeLessThanOrEqual(3);
  // Nor does the shard's: one long activity that fires every due row of its shard.
  const shard = fireShardWorkflowId(await databaseInstanceId(t.sys.pool), t.sys.config.taskQueue, fireShardOf(id, LIMITS.taskFireShards));
  const shardEvents = names(await historyOf(shard));
  expect(shardEvents.filter((n) => n === 'ACTIVITY_TASK_SCHEDULED').length).toBeGreaterThanOrEqual(1);
  expect(shardEvents.length).toBeLessThan(12);

  for (const r of runs) {
    const run = names(await historyOf(r.run_id));
    expect(run.filter((n) => n === 'WORKFLOW_TASK_COMPLETED')).toHaveLength(1);
    expect(run.filter((n) => n.startsWith('ACTIVITY_TASK'))).toEqual([]);
    // Its patches came with its input (RunInput.patches): the first attempt's marker only, and one
    // search-attribute upsert (RunStatus), no TemporalChangeVersion upsert per run.
    expect(run.filter((n) => n === 'MARKER_RECORDED')).toHaveLength(1);
    expect(run.filter((n) => n === 'UPSERT_WORKFLOW_SEARCH_ATTRIBUTES')).toHaveLength(1);
    // Started by a client (the scheduler's local activity), so it has no parent.
    const started = (await historyOf(r.run_id))[0].workflowExecutionStartedEventAttributes!;
    expect(started.parentWorkflowExecution ?? null).toBeNull();
    // Still findable by task id in the Temporal UI.
    expect(JSON.stringify(started.searchAttributes)).toContain('TaskId');
  }
});

test('a run over by its log frees the task although its workflow is gone; a workflow terminated before logging its finish does not block it forever', async () => {
  const id = t.uid('lost');
  // A slow agent: the first run is terminated while it runs, so its finish is never logged.
  const url = await fastAgentUrl(60_000);
  await t.tk.tasks.create({ task_id: id, trigger: { type: 'interval', every_s: 1, mode: 'aligned' }, agent: { type: 'webhook', url, prompt_template: 'go' }, timeout_s: 120 });
  const first = await eventually(async () => (await t.runsOldestFirst(id)).find((r) => r.status === 'running'), 20_000);
  // Fire times while it runs are skipped as overlaps.
  await eventually(async () => ((await t.runsOldestFirst(id)).some((r) => r.status === 'skipped' && r.reason?.includes(first.run_id)) ? true : undefined), 20_000);
  await t.sys.client.workflow.getHandle(first.run_id).terminate('test: a run lost without its finish');
  // The next fire time finds the log's run without a live workflow and starts.
  const next = await eventually(async () => (await t.runsOldestFirst(id)).find((r) => r.run_id !== first.run_id && r.status === 'running'), 20_000);
  expect(Date.parse(next.scheduled_at)).toBeGreaterThan(Date.parse(first.scheduled_at));
  await t.tk.tasks.delete(id);
  for (const r of (await t.runsOldestFirst(id)).filter((x) => x.status === 'running')) await t.sys.client.workflow.getHandle(r.run_id).terminate('test over').catch(() => undefined);
});

test('a create starts its scheduler without a signal; one already running under the id (a database reset under a live cluster) is told the change instead', async () => {
  const id = t.uid('start');
  const created = await t.tk.tasks.create({ task_id: id, trigger: { type: 'cron', expression: '0 0 1 1 *', timezone: 'UTC' }, agent: { type: 'webhook', url: await fastAgentUrl(), prompt_template: 'go' } });
  expect((await schedulerState(t.sys, id)).version).toBe(1);
  const started = names(await historyOf(schedulerWorkflowId(id)));
  expect(started.filter((n) => n === 'WORKFLOW_EXECUTION_SIGNALED')).toEqual([]);

  // The id's scheduler runs; a second first version arrives (its task row gone with a reset): no
  // WorkflowExecutionAlreadyStarted to the caller, the running scheduler takes the newer change.
  const target = { client: t.sys.client, taskQueue: t.sys.config.taskQueue, runQueues: taskRunQueues(t.sys.config) };
  const change = { version: 2, definition: { ...created.definition, name: 'renamed' } as TaskDefinition, enabled: true, deleted: false };
  await startScheduler(target, id, change, changedSignal);
  const state = await eventually(async () => {
    const s = await schedulerState(t.sys, id);
    return s.version === 2 ? s : undefined;
  });
  expect(state).toMatchObject({ taskId: id, version: 2, enabled: true, deleted: false });
  await t.tk.tasks.delete(id).catch(() => undefined);
});
