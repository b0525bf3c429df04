/**
 * What one fire costs Temporal since issue 15, read from the real histories: a plain interval
 * task fires from the shared fire schedule (schema/023), so neither its scheduler's history nor
 * its shard's grows with its fires (no child workflow, no timer per fire), a fast webhook run
 * is one workflow task with no activity task, and a run's finish signals its scheduler only
 * when it waits for it (buffer_one). Real Temporal and PostgreSQL.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { FireScheduleStore } from '../../lib/store/tasks/fire-schedule';
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
    const runEvents = await historyOf(r.run_id);
    const run = names(runEvents);
    expect(run.filter((n) => n === 'WORKFLOW_TASK_COMPLETED')).toHaveLength(1);
    expect(run.filter((n) => n.startsWith('ACTIVITY_TASK'))).toEqual([]);
    // Its patches came with its input (RunInput.patches): the first attempt's marker only, and no
    // search-attribute upsert at all (a run that succeeds at once shows no RunStatus, and no
    // TemporalChangeVersion per run).
    expect(run.filter((n) => n === 'MARKER_RECORDED')).toHaveLength(1);
    expect(run.filter((n) => n === 'UPSERT_WORKFLOW_SEARCH_ATTRIBUTES')).toEqual([]);
    // Started by a client (the scheduler's local activity), so it has no parent, and with no
    // search attributes: a visibility write with one cost Temporal more per run.
    const started = runEvents[0].workflowExecutionStartedEventAttributes!;
    expect(started.parentWorkflowExecution ?? null).toBeNull();
    expect(Object.keys(started.searchAttributes?.indexedFields ?? {})).toEqual([]);
  }
  // Still findable by task id in the Temporal UI, by the workflow id's prefix (visibility trails
  // the closes).
  const listed = await eventually(async () => {
    const ids: string[] = [];
    for await (const wf of t.sys.client.workflow.list({ query: `WorkflowId STARTS_WITH "run/${id}/"` })) ids.push(wf.workflowId);
    return runs.every((r) => ids.includes(r.run_id)) ? ids : undefined;
  });
  expect(listed.every((w) => w.startsWith(`run/${id}/`))).toBe(true);
});

test('a run over by its log frees the task although its workflow is gone; a workflow terminated before logging its finish does not block it forever, and its end is logged as lost', async () => {
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
  // The fire that found it lost logged its end: it no longer shows running (nor costs a describe at every fire).
  const lost = (await t.runsOldestFirst(id)).find((r) => r.run_id === first.run_id)!;
  expect(lost).toMatchObject({ status: 'failed', reason: 'lost: its workflow closed (TERMINATED) without logging a finish' });
  expect(lost.finished_at).not.toBeNull();
  // Logged like any run's end: its lateness and duration from its start.
  expect(lost.lateness_ms).not.toBeNull();
  expect(lost.duration_ms).not.toBeNull();
  await t.tk.tasks.delete(id);
  for (const r of (await t.runsOldestFirst(id)).filter((x) => x.status === 'running')) await t.sys.client.workflow.getHandle(r.run_id).terminate('test over').catch(() => undefined);
});

test('a start logged that never reached Temporal is logged as lost once taskRunLostAfterMs has passed; a younger one (a start maybe on its way) is only not counted', async () => {
  const id = t.uid('never');
  const url = await fastAgentUrl();
  await t.tk.tasks.create({ task_id: id, trigger: { type: 'interval', every_s: 1, mode: 'aligned' }, agent: { type: 'webhook', url, prompt_template: 'go' } });
  // Two starts in the log with no workflow (a worker that logged them and lost Temporal): one logged long enough ago to be lost, one just now.
  const log = `INSERT INTO task_run_log (run_id, task_id, status, trigger, nominal_at, started_at, attempt, recorded_at)
               VALUES ($1, $2, 'running', 'manual', now() - $3::interval, now() - $3::interval, 1, now() - $3::interval)`;
  const old = `run/${id}/manual-old`;
  const young = `run/${id}/manual-young`;
  await t.sys.ownerPool.query(log, [old, id, `${(LIMITS.taskRunLostAfterMs + 60_000) / 1000} seconds`]);
  await t.sys.ownerPool.query(log, [young, id, '0 seconds']);
  // Neither holds the task (overlap skip): its fires run, and the first of them found the old one lost.
  await eventually(async () => ((await t.runsOldestFirst(id)).filter((r) => r.status === 'success').length >= 2 ? true : undefined), 20_000);
  await t.tk.tasks.delete(id);
  const runs = await t.runsOldestFirst(id);
  expect(runs.filter((r) => r.status === 'skipped')).toEqual([]);
  const lost = runs.find((r) => r.run_id === old)!;
  expect(lost.status).toBe('failed');
  expect(lost.reason).toMatch(/^lost: Temporal has no workflow for this run \d+ s after its start was logged \(the start never reached it, or its history is gone\)$/);
  expect(runs.find((r) => r.run_id === young)!.status).toBe('running');
});

test('a plain cron task starts no workflow at its create: its row on the shared fire schedule is written with it; its first change starts the scheduler, which takes the row over', async () => {
  const id = t.uid('plain');
  const created = await t.tk.tasks.create({ task_id: id, trigger: { type: 'cron', expression: '0 0 1 1 *', timezone: 'UTC' }, agent: { type: 'webhook', url: await fastAgentUrl(), prompt_template: 'go' } });
  const next = created.next_fire_times[0];
  // No scheduler: the create is a statement, not a workflow start.
  await expect(t.sys.client.workflow.getHandle(schedulerWorkflowId(id)).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
  const row = await new FireScheduleStore(t.sys.pool).get(id);
  expect(row).toMatchObject({ version: 1, fires: 0 });
  const placed = await t.sys.pool.query('SELECT queue, shard FROM task_fire_schedule WHERE task_id = $1', [id]);
  expect(placed.rows).toEqual([{ queue: t.sys.config.taskQueue, shard: fireShardOf(id, LIMITS.taskFireShards) }]);
  expect(new Date(row!.nextFireMs!).toISOString()).toBe(next);
  // GET answers from the row: the same next fire time, no runs.
  expect((await t.tk.tasks.get(id)).scheduler).toEqual({ workflow_id: schedulerWorkflowId(id), running_runs: [], next_fire_at: next });

  // A change starts the scheduler from the stored task; it registers the new version over the row.
  await t.tk.tasks.update(id, { name: 'renamed' });
  await eventually(async () => ((await new FireScheduleStore(t.sys.pool).get(id))?.version === 2 ? true : undefined));
  expect((await schedulerState(t.sys, id)).version).toBe(2);
  // Paused, it takes the row out (the row was its own from the start, though another version's).
  await t.tk.tasks.pause(id);
  await eventually(async () => ((await new FireScheduleStore(t.sys.pool).get(id)) === undefined ? true : undefined));
  expect((await t.tk.tasks.get(id)).scheduler.next_fire_at).toBeNull();
  await t.tk.tasks.delete(id);
});

test('the scheduler a change of a plain task starts ends once it has registered the new version: the schedule fires the task with no workflow open, and the next change starts one again', async () => {
  const id = t.uid('plainrest');
  await t.tk.tasks.create({ task_id: id, trigger: { type: 'interval', every_s: 1, mode: 'aligned' }, agent: { type: 'webhook', url: await fastAgentUrl(), prompt_template: 'go' } });
  await t.tk.tasks.update(id, { name: 'renamed' });
  const first = t.sys.client.workflow.getHandle(schedulerWorkflowId(id));
  // It completes by itself (nothing asked it to), leaving the row at the new version on the schedule.
  await first.result();
  const firstRun = await first.describe();
  expect(firstRun.status.name).toBe('COMPLETED');
  expect((await new FireScheduleStore(t.sys.pool).get(id))?.version).toBe(2);
  const endedEvents = await historyOf(schedulerWorkflowId(id));
  const ended = names(endedEvents);
  expect(ended[ended.length - 1]).toBe('WORKFLOW_EXECUTION_COMPLETED');
  // Its patches came with its input: no marker for the new path either.
  expect(endedEvents.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')).toEqual([]);

  // The shared schedule goes on firing it with no scheduler open.
  const before = (await t.runsOldestFirst(id)).length;
  await eventually(async () => ((await t.runsOldestFirst(id)).filter((r) => r.status === 'success').length >= before + 2 ? true : undefined), 20_000);
  expect((await t.sys.client.workflow.getHandle(schedulerWorkflowId(id)).describe()).status.name).toBe('COMPLETED');
  // GET answers with the row's next fire time.
  expect(Date.parse((await t.tk.tasks.get(id)).scheduler.next_fire_at!)).toBeGreaterThan(Date.now() - 2_000);

  // The next change starts a new scheduler run from the stored task: paused, it takes the row out and stays.
  await t.tk.tasks.pause(id);
  await eventually(async () => ((await new FireScheduleStore(t.sys.pool).get(id)) === undefined ? true : undefined));
  const second = await t.sys.client.workflow.getHandle(schedulerWorkflowId(id)).describe();
  expect(second.status.name).toBe('RUNNING');
  expect(second.runId).not.toBe(firstRun.runId);
  await t.tk.tasks.delete(id);
});

test('deleting a plain task that never changed starts its scheduler only to take its row off the shared fire schedule', async () => {
  const id = t.uid('plaindel');
  await t.tk.tasks.create({ task_id: id, trigger: { type: 'cron', expression: '0 0 1 1 *', timezone: 'UTC' }, agent: { type: 'webhook', url: await fastAgentUrl(), prompt_template: 'go' } });
  expect(await new FireScheduleStore(t.sys.pool).get(id)).toBeDefined();
  await t.tk.tasks.delete(id);
  await t.sys.client.workflow.getHandle(schedulerWorkflowId(id)).result();
  expect(await new FireScheduleStore(t.sys.pool).get(id)).toBeUndefined();
});

test('a plain task created paused has no row and no scheduler until it is resumed', async () => {
  const id = t.uid('plainoff');
  await t.tk.tasks.create({ task_id: id, enabled: false, trigger: { type: 'interval', every_s: 3600, mode: 'aligned' }, agent: { type: 'webhook', url: await fastAgentUrl(), prompt_template: 'go' } });
  expect(await new FireScheduleStore(t.sys.pool).get(id)).toBeUndefined();
  await expect(t.sys.client.workflow.getHandle(schedulerWorkflowId(id)).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
  await t.tk.tasks.resume(id);
  const row = await eventually(async () => new FireScheduleStore(t.sys.pool).get(id));
  expect(row.version).toBe(2);
  await t.tk.tasks.delete(id);
});

test('a late fire time of a plain task with no scheduler running starts one with it, which applies the misfire policy and registers the task again', async () => {
  const id = t.uid('plainlate');
  const agent = await t.server(async (r) => ({ body: protocolAnswer(JSON.parse(r.body).task_id) }));
  // Hourly at the minute five minutes back, so the one fire time due since the row's cursor is
  // always five minutes late, well past its 60 s grace (an aligned hourly interval was on time in the
  // first minute of an hour, and the test failed when CI ran it then).
  const dueMs = Math.floor((Date.now() - 300_000) / 60_000) * 60_000;
  const minute = new Date(dueMs).getUTCMinutes();
  await t.tk.tasks.create({ task_id: id, trigger: { type: 'cron', expression: `${minute} * * * *`, timezone: 'UTC' }, misfire: 'run_latest', misfire_grace_s: 60, agent: { type: 'webhook', url: agent.url, prompt_template: 'go' } });
  // The row's fire time an hour ago, past its grace: the shard finds it late and hands it back.
  const lateMs = Date.now() - 3_600_000;
  await t.sys.pool.query('UPDATE task_fire_schedule SET next_fire_ms = $2, cursor_ms = $3 WHERE task_id = $1', [id, lateMs, lateMs - 1]);
  const state = await eventually(async () => {
    const s = await schedulerState(t.sys, id).catch(() => undefined);
    return s && s.nextFireMs !== null && s.nextFireMs > Date.now() ? s : undefined;
  }, 30_000);
  expect(state.version).toBe(1);
  // run_latest: the late fire time ran once, under the misfire trigger.
  const runs = await eventually(async () => {
    const rs = await t.runsOldestFirst(id);
    return rs.length ? rs : undefined;
  });
  // The one fire time between the row's cursor and now (the fire time the row stood for was made up for the test).
  expect(runs.map((r) => [r.trigger, r.scheduled_at])).toEqual([['misfire', new Date(dueMs).toISOString()]]);
  // And it is back on the schedule, not handed back.
  const row = await new FireScheduleStore(t.sys.pool).get(id);
  expect(row).toMatchObject({ version: 1 });
  expect(row!.nextFireMs).toBeGreaterThan(Date.now());
  await t.tk.tasks.delete(id);
});

test('a create of a task that is not plain starts its scheduler without a signal; one already running under the id (a database reset under a live cluster) is told the change instead', async () => {
  const id = t.uid('start');
  const created = await t.tk.tasks.create({ task_id: id, overlap: 'buffer_one', trigger: { type: 'cron', expression: '0 0 1 1 *', timezone: 'UTC' }, agent: { type: 'webhook', url: await fastAgentUrl(), prompt_template: 'go' } });
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
