/**
 * Records session, intent, task-scheduler, task-run, OpenTelemetry exporter and log builder workflow histories for the replay test (test/replay/replay.test.ts).
 *
 *   npm run record-histories                 # writes test/replay/histories/<scenario>.json
 *   npm run record-histories -- --tag v2     # writes <scenario>.v2.json next to the old ones
 *   npm run record-histories -- --overwrite  # replaces existing files (see README: normally never)
 *
 * Starts everything it needs itself: a Temporal dev server on free ports, a scratch database
 * timekeeper_record_<pid> on the local PostgreSQL (dropped afterwards), a worker with the real
 * activities, and a Temporal client that drives each scenario the way the API does. Nothing
 * is written unless every scenario completes as expected.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Client, Connection, WithStartWorkflowOperation, WorkflowHandle, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, TypedSearchAttributes } from '@temporalio/common';
import { historyToJSON } from './history-json';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { Client as PgClient } from 'pg';
import { deriveAppUrl, DEFAULT_DATABASE_URL } from '../../lib/config';
import { createPool, quoteIdent, withDatabase } from '../../lib/db';
import { migrate } from '../../lib/migrate';
import { freePort, startDevServer } from '../../lib/temporal-server';
import { createTimekeeperWorker, type TimekeeperWorkerOptions } from '../../worker/worker';
import { AppendRequest, AppendReceipt, EventType, SessionSettings, sessionWorkflowId } from '../../lib/domain/sessions';
import { SessionIdKey } from '../../lib/domain/platform/search-attributes';
import { IntentClient } from '../../clients/intents';
import { IntentStatus, intentWorkflowId } from '../../lib/domain/intents';
import { IntentStore } from '../../lib/store/intents';
import { ensureSearchAttributes } from '../../lib/temporal';
import { taskRunQueues } from '../../lib/config';
import { TaskClient } from '../../clients/tasks';
import { RetrySchema, TriggerSchema } from '../../api/tasks/contract';
import { TASK_DEFAULTS, TaskAction, schedulerWorkflowId, type TaskDefinition } from '../../lib/domain/tasks';
import { LIMITS } from '../../lib/domain/limits';
import { TaskStore } from '../../lib/store/tasks';
import { FireScheduleStore } from '../../lib/store/tasks/fire-schedule';
import { ensureFireShards } from '../../clients/task-fires';
import { fireShardOf, fireShardWorkflowId } from '../../lib/domain/tasks/fire-shards';
import type { RunResult } from '../../workflows/tasks/messages';
import type { Pool } from 'pg';
import type { IntentWorkflowResult } from '../../workflows/intents/messages';
import type { sessionWorkflow } from '../../workflows/sessions/workflow';
import { SignalClient } from '../../clients/signals';
import { SignalStore } from '../../lib/store/signals';
import { databaseInstanceId } from '../../lib/store/instance';
import { tlogBuilderWorkflowId } from '../../workflows/tlog/builder';
import { SessionWorkflowResult, appendUpdate, createdUpdate, endUpdate } from '../../workflows/sessions/messages';

export const HISTORIES_DIR = path.join(__dirname, 'histories');

type History = import('./history-json').History;
type Session = WorkflowHandle<typeof sessionWorkflow>;


interface Ctx {
  client: Client;
  taskQueue: string;
  pool: Pool;
  /** Export requests the stand-in OTLP collector took (only when the otel-export scenario runs). */
  otlpRequests?: () => number;
  /** The worker builds and signs the transparency log (only when the tlog-builder scenario runs). */
  tlog?: boolean;
}

/** One recorded run: the file name (without .json) and its history. */
interface Recorded {
  name: string;
  history: History;
}

function assert(cond: unknown, msg: string): asserts cond {
  if (!cond) throw new Error(`scenario check failed: ${msg}`);
}

/** As api/timeline-service.ts createSession: update-with-start of `created`. */
async function createSession(ctx: Ctx, sessionId: string, overrides: Partial<SessionSettings> = {}): Promise<Session> {
  const settings: SessionSettings = {
    sessionId,
    timelineId: randomUUID(),
    createEventId: randomUUID(),
    agentId: 'recorder',
    channel: 'replay',
    metadata: { scenario: sessionId },
    maxContentBytes: 262144,
    updatesPerRun: 1000,
    ...overrides,
  };
  const start = new WithStartWorkflowOperation<typeof sessionWorkflow>('sessionWorkflow', {
    workflowId: sessionWorkflowId(sessionId),
    taskQueue: ctx.taskQueue,
    args: [{ settings }],
    workflowIdConflictPolicy: 'FAIL',
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    typedSearchAttributes: new TypedSearchAttributes([{ key: SessionIdKey, value: sessionId }]),
  });
  const created = await ctx.client.workflow.executeUpdateWithStart(createdUpdate, { startWorkflowOperation: start });
  assert(created.event_type === EventType.SessionCreate && created.seq === 1, `${sessionId}: created returns SESSION_CREATE seq 1`);
  return ctx.client.workflow.getHandle<typeof sessionWorkflow>(sessionWorkflowId(sessionId));
}

/** As api/timeline-service.ts append: update id from the idempotency key, else the event id. */
function append(h: Session, type: string, content: AppendRequest['content'], opts: { idempotencyKey?: string; updateId?: string } = {}): Promise<AppendReceipt> {
  const req: AppendRequest = { eventId: randomUUID(), type, content, idempotencyKey: opts.idempotencyKey, clientEventId: false };
  const updateId = opts.updateId ?? (req.idempotencyKey ? `key:${req.idempotencyKey}` : `event:${req.eventId}`);
  return h.executeUpdate(appendUpdate, { args: [req], updateId });
}

function end(h: Session, reason = 'done'): Promise<AppendReceipt> {
  const eventId = randomUUID();
  return h.executeUpdate(endUpdate, { args: [{ eventId, reason }], updateId: `event:${eventId}` });
}

async function expectUpdateFailure(p: Promise<unknown>, type: string, what: string): Promise<void> {
  try {
    await p;
  } catch (err) {
    const cause = err instanceof WorkflowUpdateFailedError ? err.cause : undefined;
    assert(cause instanceof ApplicationFailure && cause.type === type, `${what}: expected failure ${type}, got ${String(err)}`);
    return;
  }
  throw new Error(`scenario check failed: ${what}: the update succeeded`);
}

/** Every run of the handle's workflow id, first run first, found through continuedExecutionRunId. */
async function fetchRuns(ctx: Ctx, h: WorkflowHandle): Promise<History[]> {
  const runs: History[] = [];
  let runId: string | undefined = (await h.describe()).runId;
  while (runId) {
    const history: History = await ctx.client.workflow.getHandle(h.workflowId, runId).fetchHistory();
    runs.unshift(history);
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
    runId = started?.continuedExecutionRunId || undefined;
  }
  return runs;
}

async function finish(ctx: Ctx, h: Session, reason: string): Promise<History> {
  const result: SessionWorkflowResult = await h.result();
  assert(result.reason === reason, `${h.workflowId}: completed with reason ${reason}, got ${result.reason}`);
  const runs = await fetchRuns(ctx, h);
  assert(runs.length === 1, `${h.workflowId}: one run, got ${runs.length}`);
  return runs[0];
}

const CONTENT: Record<string, (i: number) => AppendRequest['content']> = {
  [EventType.UserInput]: (i) => ({ input: `question ${i}` }),
  [EventType.LlmResponse]: (i) => ({ response: `answer ${i}`, model: 'test' }),
  [EventType.ToolCall]: (i) => ({ tool_name: 'search', params: { q: `q${i}` } }),
  [EventType.ToolResult]: (i) => ({ tool_name: 'search', result: [i, i + 1] }),
};

/** As the API builds it (api/app.ts), with the given retention. */
function intents(ctx: Ctx, retentionS = 604800): IntentClient {
  return new IntentClient({ client: ctx.client, pool: ctx.pool, taskQueue: ctx.taskQueue, writeTimeoutMs: 30000, defaultTtlS: 86400, domainTtls: {}, retentionS });
}

/** As the API builds it (api/app.ts). */
/** A webhook stand-in answering the protocol for `taskId` after `delayMs`. */
async function answeringAgent(taskId: string, processed: number, summary: string, delayMs: number): Promise<http.Server> {
  const agent = http.createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ task_id: taskId, status: 'success', processed, errors: [], summary, next_action: null })), delayMs),
    );
  });
  await new Promise<void>((ok) => agent.listen(0, '127.0.0.1', () => ok()));
  return agent;
}

/** Runs `fn` with a stand-in agent (answeringAgent) and closes it afterwards, whatever `fn` did. */
async function withAgent<T>(taskId: string, processed: number, summary: string, delayMs: number, fn: (agent: http.Server) => Promise<T>): Promise<T> {
  const agent = await answeringAgent(taskId, processed, summary, delayMs);
  try {
    return await fn(agent);
  } finally {
    await new Promise((ok) => agent.close(() => ok(undefined)));
  }
}

/** A task definition calling the stand-in `agent` on `trigger`. */
const webhookTask = (taskId: string, name: string, agent: http.Server, prompt: string, trigger: TaskDefinition['trigger']): TaskDefinition => ({
  ...TASK_DEFAULTS,
  task_id: taskId,
  name,
  trigger,
  agent: { type: 'webhook', url: `http://127.0.0.1:${(agent.address() as AddressInfo).port}/agent`, prompt_template: prompt },
  delivery: [],
  tags: [],
});

/** Waits (30 s at most) until the task has `n` successful runs; returns them, newest first. */
async function successes(store: TaskStore, taskId: string, n: number): Promise<{ run_id: string }[]> {
  const end = Date.now() + 30000;
  let done: { run_id: string }[] = [];
  while ((done = (await store.runsOfTask(taskId, 20)).filter((r) => r.status === 'success')).length < n) {
    assert(Date.now() < end, `${taskId}: ${n} runs succeed`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return done;
}

/**
 * The history of a workflow that runs one long activity after another (the log builder, a fire
 * shard), once its first activity has completed and the next is scheduled (within `runMs` + 30 s);
 * then the workflow is terminated (it would run for ever).
 */
async function afterFirstActivity(handle: WorkflowHandle, runMs: number, what: string): Promise<History> {
  const end = Date.now() + runMs + 30_000;
  for (;;) {
    const history: History = await handle.fetchHistory().catch(() => ({ events: [] }));
    const events = history.events ?? [];
    if (events.some((e) => e.activityTaskCompletedEventAttributes) && events.filter((e) => e.activityTaskScheduledEventAttributes).length >= 2) {
      await handle.terminate('recorded');
      return history;
    }
    assert(Date.now() < end, what);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Waits (30 s at most) until `cond` holds. */
async function until(cond: () => Promise<boolean>, what: string): Promise<void> {
  const end = Date.now() + 30000;
  while (!(await cond())) {
    assert(Date.now() < end, what);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Deletes the task, waits for its scheduler to end, and returns its (single) run's history. */
async function deleteAndFetchScheduler(ctx: Ctx, tc: TaskClient, store: TaskStore, taskId: string) {
  await tc.delete((await store.getTask(taskId))!);
  const scheduler = ctx.client.workflow.getHandle(schedulerWorkflowId(taskId));
  await scheduler.result();
  const schedulerRuns = await fetchRuns(ctx, scheduler);
  assert(schedulerRuns.length === 1, `${taskId}: one scheduler run`);
  return schedulerRuns;
}

const runQueues = (ctx: Ctx) => taskRunQueues({ taskQueue: ctx.taskQueue, tasksTaskQueue: undefined, tasksCoreTaskQueue: undefined });

function tasks(ctx: Ctx): TaskClient {
  return new TaskClient({ client: ctx.client, pool: ctx.pool, taskQueue: ctx.taskQueue, runQueues: runQueues(ctx) });
}

/** As the API sends a signal (POST /v1/signals): stored, then delivered to the schedulers listening. */
async function sendSignal(ctx: Ctx, name: string, value: number | null, values: Record<string, string> = {}): Promise<string[]> {
  const signals = new SignalClient({ client: ctx.client, taskQueue: ctx.taskQueue, runQueues: runQueues(ctx), store: new SignalStore(ctx.pool) });
  const sent = await signals.send({ signal_id: randomUUID(), name, value, values, atMs: Date.now() }, undefined, false);
  return sent.deliveredTo;
}

/**
 * A scheduler scenario on one trigger kind: creates the task on `trigger` (defaults as the API
 * applies them), lets `drive` make it fire (`runs` successes), then `afterRuns`, deletes it.
 * Recorded: the scheduler's history, as `name` (default task-scheduler-<trigger type>).
 */
async function schedulerScenario(
  ctx: Ctx,
  taskId: string,
  trigger: unknown,
  runs: number,
  drive: () => Promise<void> = async () => undefined,
  afterRuns: () => Promise<void> = async () => undefined,
  name = `task-scheduler-${(trigger as { type: string }).type}`,
): Promise<Recorded[]> {
  return withAgent(taskId, 1, 'done', 0, async (agent) => {
    const tc = tasks(ctx);
    const store = new TaskStore(ctx.pool);
    await tc.create(webhookTask(taskId, `Record a ${(trigger as { type: string }).type} task`, agent, 'go', TriggerSchema.parse(trigger)), true);
    await drive();
    await successes(store, taskId, runs);
    await afterRuns();
    const schedulerRuns = await deleteAndFetchScheduler(ctx, tc, store, taskId);
    return [{ name, history: schedulerRuns[0] }];
  });
}

/** Waits until the stored intent is in `status` (a timer of its workflow moved it). */
async function storedStatus(ctx: Ctx, eventId: string, status: string): Promise<void> {
  const store = new IntentStore(ctx.pool);
  const end = Date.now() + 20000;
  while ((await store.get(eventId))?.status !== status) {
    assert(Date.now() < end, `${eventId}: reaches ${status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The intent workflow's one run, after it closed for `closed`. */
async function finishIntent(ctx: Ctx, eventId: string, closed: IntentWorkflowResult['closed']): Promise<History> {
  const h = ctx.client.workflow.getHandle(intentWorkflowId(eventId));
  const result = (await h.result()) as IntentWorkflowResult;
  assert(result.closed === closed, `${eventId}: closed for ${closed}, got ${result.closed}`);
  const runs = await fetchRuns(ctx, h);
  assert(runs.length === 1, `${eventId}: one run, got ${runs.length}`);
  return runs[0];
}

const scenarios: Record<string, (ctx: Ctx) => Promise<Recorded[]>> = {
  /** (a) create, a few appends of each type, end. */
  async 'basic-lifecycle'(ctx) {
    const h = await createSession(ctx, 'record-basic');
    let seq = 1;
    for (let round = 0; round < 2; round++) {
      for (const [type, content] of Object.entries(CONTENT)) {
        const r = await append(h, type, content(round));
        assert(r.event.seq === ++seq, `basic: seq ${seq}`);
      }
    }
    await end(h, 'done');
    return [{ name: 'basic-lifecycle', history: await finish(ctx, h, 'done') }];
  },

  /** (b) 25 concurrent appends, then end. */
  async 'concurrent-appends'(ctx) {
    const h = await createSession(ctx, 'record-concurrent');
    const results = await Promise.all(Array.from({ length: 25 }, (_, i) => append(h, EventType.UserInput, { input: `burst ${i}` })));
    const seqs = results.map((r) => r.event.seq).sort((a, b) => a - b);
    assert(seqs.join() === Array.from({ length: 25 }, (_, i) => i + 2).join(), 'concurrent: seqs 2..26, each once');
    await end(h, 'done');
    return [{ name: 'concurrent-appends', history: await finish(ctx, h, 'done') }];
  },

  /** (c) idempotent retries and refused updates, then end through append(SESSION_END). */
  async 'idempotency-and-rejection'(ctx) {
    const h = await createSession(ctx, 'record-idempotency');
    const first = await append(h, EventType.UserInput, { input: 'once' }, { idempotencyKey: 'retry-1' });
    // The API's retry: same key, so same update id; the server answers from the completed update.
    const retried = await append(h, EventType.UserInput, { input: 'once' }, { idempotencyKey: 'retry-1' });
    assert(retried.event.seq === first.event.seq && retried.event.event_id === first.event.event_id, 'retry returns the first event');
    // A retry that reaches the workflow under another update id (as after continue-as-new): the activity deduplicates.
    const viaWorkflow = await append(h, EventType.UserInput, { input: 'once' }, { idempotencyKey: 'retry-1', updateId: 'retry-1-again' });
    assert(viaWorkflow.deduplicated && viaWorkflow.event.seq === first.event.seq, 'second delivery is deduplicated by the activity');
    // Refused by the validator: never enters history.
    await expectUpdateFailure(append(h, 'DELETE_ALL', {}), 'InvalidEventType', 'bad event type');
    // Accepted, then failed by the handler: the key was used for different content.
    await expectUpdateFailure(append(h, EventType.UserInput, { input: 'other' }, { idempotencyKey: 'retry-1', updateId: 'retry-1-conflict' }), 'IdempotencyKeyReused', 'key reuse');
    const next = await append(h, EventType.LlmResponse, { response: 'after' });
    assert(next.event.seq === first.event.seq + 1, 'nothing was written for the refused updates');
    const eventId = randomUUID();
    await h.executeUpdate(appendUpdate, {
      args: [{ eventId, type: EventType.SessionEnd, content: { reason: 'finished' } }],
      updateId: `event:${eventId}`,
    });
    return [{ name: 'idempotency-and-rejection', history: await finish(ctx, h, 'finished') }];
  },

  /** (d) continue-as-new every 5 appends: 12 appends and the end span three runs. */
  async 'continue-as-new'(ctx) {
    const h = await createSession(ctx, 'record-can', { updatesPerRun: 5 });
    const types = Object.keys(CONTENT);
    for (let i = 0; i < 12; i++) {
      const r = await append(h, types[i % types.length], CONTENT[types[i % types.length]](i));
      assert(r.event.seq === i + 2, `continue-as-new: seq ${i + 2}`);
    }
    await end(h, 'done');
    const result = await h.result();
    assert(result.reason === 'done' && result.head.seq === 14, 'continue-as-new: ends at seq 14');
    const runs = await fetchRuns(ctx, h);
    assert(runs.length === 3, `continue-as-new: three runs, got ${runs.length}`);
    return runs.map((history, i) => ({ name: `continue-as-new.run${i + 1}`, history }));
  },

  /** (e) idle timeout after 2 s without appends. */
  async 'idle-timeout'(ctx) {
    const h = await createSession(ctx, 'record-idle', { idleTimeoutS: 2 });
    return [{ name: 'idle-timeout', history: await finish(ctx, h, 'idle') }];
  },

  /**
   * (e2) `idleTimeoutS = 2` with three appends 0.8 s apart, then idle: under patch
   * `session-idle-timer-per-period` the appends start no timer; the one armed at create fires
   * while the session is still active and is armed again for the last append's deadline, then idle.
   */
  async 'idle-timeout-appends'(ctx) {
    const h = await createSession(ctx, 'record-idle-appends', { idleTimeoutS: 2 });
    for (let i = 1; i <= 3; i++) {
      await new Promise((r) => setTimeout(r, 800));
      const r = await append(h, EventType.UserInput, CONTENT[EventType.UserInput](i));
      assert(r.event.seq === i + 1, `idle-appends: seq ${i + 1}`);
    }
    return [{ name: 'idle-timeout-appends', history: await finish(ctx, h, 'idle') }];
  },

  /** (f) intent requested → in-progress → done, linked to a session (each transition appended to it); closes on done. */
  async 'intent-lifecycle'(ctx) {
    const session = await createSession(ctx, 'record-intent-link');
    const ic = intents(ctx);
    const id = 'REPORT-20231027-001';
    const created = await ic.create({ eventId: id, domain: 'reporting', action: 'generate-and-send-daily-report', tags: ['daily'], data: { date: '2023-10-27' }, sessionId: 'record-intent-link' });
    assert(created.seq === 1 && created.content.to === IntentStatus.Requested, 'intent: created as requested');
    assert((await ic.transition(id, { status: IntentStatus.InProgress, note: 'pulling data' })).seq === 2, 'intent: in-progress is seq 2');
    const done = await ic.transition(id, { status: IntentStatus.Done, note: 'sent', data: { message_id: 'm-1' } });
    assert(done.seq === 3 && done.content.to === IntentStatus.Done, 'intent: done is seq 3');
    const history = await finishIntent(ctx, id, 'done');
    await end(session, 'done');
    await finish(ctx, session, 'done');
    return [{ name: 'intent-lifecycle', history }];
  },

  /** (g) blocked with retry and retry_after in 2 s: the timer re-opens it as requested (and wakes the agent), then done. */
  async 'intent-blocked-retry'(ctx) {
    const ic = intents(ctx);
    const id = 'EMAIL-20231027-002';
    await ic.create({ eventId: id, domain: 'communication', action: 'send-email', data: { to: 'john@example.com' } });
    const retryAfter = new Date(Date.now() + 2000).toISOString();
    const blocked = await ic.transition(id, { status: IntentStatus.Blocked, note: 'smtp down', data: { error: 'Connection timeout after 10s', next_step: 'Retry in 2 s', retry: true, retry_after: retryAfter } });
    assert(blocked.content.to === IntentStatus.Blocked, 'retry: blocked');
    await storedStatus(ctx, id, IntentStatus.Requested);
    const done = await ic.transition(id, { status: IntentStatus.Done, note: 'sent on retry' });
    assert(done.seq === 4, `retry: requested, blocked, requested (system), done; got seq ${done.seq}`);
    return [{ name: 'intent-blocked-retry', history: await finishIntent(ctx, id, 'done') }];
  },

  /** (g2) blocked without a retry, the same blocked PATCH again (answered by the client, not sent), then straight to done (seed 001's recovery). */
  async 'intent-blocked-done'(ctx) {
    const ic = intents(ctx);
    const id = 'EMAIL-20231027-003';
    await ic.create({ eventId: id, domain: 'communication', action: 'send-email', data: { to: 'john@example.com' } });
    const blockedReq = { status: IntentStatus.Blocked, note: 'smtp down', data: { error: 'Connection timeout after 10s', next_step: 'Check the relay, redo it' } };
    const blocked = await ic.transition(id, blockedReq);
    assert(blocked.seq === 2, 'blocked-done: blocked is seq 2');
    assert((await ic.transition(id, blockedReq)).seq === 2, 'blocked-done: the repeat answers seq 2');
    const done = await ic.transition(id, { status: IntentStatus.Done, note: 'sent after redoing it' });
    assert(done.seq === 3 && done.content.from === IntentStatus.Blocked, `blocked-done: blocked → done is seq 3; got ${done.seq}`);
    return [{ name: 'intent-blocked-done', history: await finishIntent(ctx, id, 'done') }];
  },

  /** (h2) the OpenTelemetry exporter (otel-export/<queue>): a session's events exported in batches to a stand-in collector, then polls once caught up; recorded while it runs, then terminated. */
  async 'otel-export'(ctx) {
    assert(ctx.otlpRequests !== undefined, 'otel-export: the worker exports');
    const h = await createSession(ctx, 'record-otel');
    await append(h, EventType.UserInput, { input: 'weather?' });
    await append(h, EventType.ToolCall, { tool_name: 'weather', tool_call_id: 'c1' });
    await append(h, EventType.ToolResult, { tool_name: 'weather', tool_call_id: 'c1', ok: true });
    await append(h, EventType.LlmResponse, { response: 'sunny', model: 'm' });
    await end(h, 'done');
    await finish(ctx, h, 'done');
    const handle = ctx.client.workflow.getHandle(`otel-export/${ctx.taskQueue}`);
    const end_ = Date.now() + 30_000;
    let history: History;
    for (;;) {
      history = await handle.fetchHistory();
      const completed = (history.events ?? []).filter((e) => e.activityTaskCompletedEventAttributes).length;
      const timers = (history.events ?? []).filter((e) => e.timerFiredEventAttributes).length;
      if (ctx.otlpRequests() >= 1 && completed >= 3 && timers >= 2) break;
      assert(Date.now() < end_, 'otel-export: batches exported and polls after');
      await new Promise((r) => setTimeout(r, 200));
    }
    await handle.terminate('recorded');
    return [{ name: 'otel-export', history }];
  },

  /**
   * (i) a task run whose webhook agent answers 202 (the run waits for its result): attempt 1
   * gets none within timeout_s 1 and times out; after the exponential wait (0.5 s) attempt 2's
   * result arrives through the `result` update (also once more: deduplicated), the run succeeds.
   */
  async 'task-run-result'(ctx) {
    const agent = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(202, { 'content-type': 'application/json' }).end('{}'));
    });
    await new Promise<void>((ok) => agent.listen(0, '127.0.0.1', () => ok()));
    try {
      const tc = tasks(ctx);
      const taskId = 'record-run-result';
      const definition: TaskDefinition = {
        ...TASK_DEFAULTS,
        task_id: taskId,
        name: 'Record a run result',
        trigger: { type: 'at', at: '2099-01-01T00:00:00Z' },
        agent: { type: 'webhook', url: `http://127.0.0.1:${(agent.address() as AddressInfo).port}/agent`, prompt_template: 'go' },
        delivery: [],
        retry: RetrySchema.parse({ max_attempts: 2, initial_interval_s: 0.5 }),
        timeout_s: 1,
        tags: [],
      };
      const task = await tc.create(definition, false);
      const { runId } = await tc.trigger(task);
      const h = ctx.client.workflow.getHandle(runId);
      // Attempt 2 is waiting once the agent has been called twice; report until the run takes it.
      const answer = { task_id: taskId, status: 'success' as const, processed: 3, errors: [], summary: 'reported later', next_action: null };
      const end = Date.now() + 20000;
      for (;;) {
        assert(Date.now() < end, `${runId}: attempt 2 takes the result`);
        const out = await tc.reportResult(runId, { answer, attempt: 2 }).catch(() => undefined);
        if (out) {
          assert(out.outcome === 'success' && !out.deduplicated, `${runId}: first result accepted`);
          break;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      assert((await tc.reportResult(runId, { answer })).deduplicated, `${runId}: the same result again is deduplicated`);
      const result = (await h.result()) as RunResult;
      assert(result.status === 'success' && result.attempts === 2, `${runId}: success on attempt 2, got ${JSON.stringify(result)}`);
      const runs = await fetchRuns(ctx, h);
      assert(runs.length === 1, `${runId}: one run`);
      return [{ name: 'task-run-result', history: runs[0] }];
    } finally {
      await new Promise((ok) => agent.close(() => ok(undefined)));
    }
  },

  /**
   * (k) buffer_one on the fireRun path (issue 15): a 1 s aligned interval whose agent takes
   * 1.5 s; a fire time during the first run waits (a wake asked for in task_run_wakes), the
   * run's finish signals run-finished and the waiting fire time starts; then the task is
   * deleted. Recorded: the scheduler's history.
   */
  async 'task-scheduler-buffer'(ctx) {
    const taskId = 'record-buffer';
    return withAgent(taskId, 1, 'slow', 1500, async (agent) => {
      const tc = tasks(ctx);
      const store = new TaskStore(ctx.pool);
      await tc.create({ ...webhookTask(taskId, 'Record a buffer_one task', agent, 'slow {{task_name}}', { type: 'interval', every_s: 1, mode: 'aligned' }), overlap: 'buffer_one' }, true);
      await successes(store, taskId, 2);
      const schedulerRuns = await deleteAndFetchScheduler(ctx, tc, store, taskId);
      const signalled = schedulerRuns[0].events!.some((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'run-finished');
      assert(signalled, `${taskId}: the scheduler was woken by run-finished`);
      return [{ name: 'task-scheduler-buffer', history: schedulerRuns[0] }];
    });
  },

  /**
   * (j) a task on an interval of 1 s whose webhook agent answers at once: the scheduler starts
   * two runs on its timers (before issue 15 each a child workflow `run/<task>/<nominal>`; since
   * then each started by the local activity fireRun, and the run is one local activity), then
   * the task is deleted and the scheduler ends. Recorded: the scheduler's history and its first run's.
   */
  async 'task-scheduler-interval'(ctx) {
    const taskId = 'record-interval';
    return withAgent(taskId, 2, 'checked', 0, async (agent) => {
      const tc = tasks(ctx);
      const store = new TaskStore(ctx.pool);
      await tc.create(webhookTask(taskId, 'Record an interval task', agent, 'check {{task_name}} at {{now_utc}}', { type: 'interval', every_s: 1, mode: 'from_last_start' }), true);
      const done = await successes(store, taskId, 2);
      const schedulerRuns = await deleteAndFetchScheduler(ctx, tc, store, taskId);
      const first = done[done.length - 1].run_id;
      const run = ctx.client.workflow.getHandle(first);
      assert(((await run.result()) as RunResult).status === 'success', `${first}: success`);
      const runRuns = await fetchRuns(ctx, run);
      return [
        { name: 'task-scheduler-interval', history: schedulerRuns[0] },
        { name: 'task-run-success', history: runRuns[0] },
      ];
    });
  },

  /** (l) a cron trigger firing every second (six fields, seconds first): two runs on its timers, then the task deleted. */
  'task-scheduler-cron': (ctx) => schedulerScenario(ctx, 'record-cron', { type: 'cron', expression: '* * * * * *', timezone: 'UTC' }, 2),

  /** (m) an `at` trigger 1.5 s ahead: one run, the task completes (its one fire time has run), then it is deleted. */
  async 'task-scheduler-at'(ctx) {
    const taskId = 'record-at';
    const store = new TaskStore(ctx.pool);
    const completed = async () => {
      const end = Date.now() + 20000;
      while ((await store.getTask(taskId))?.last_action !== TaskAction.Complete) {
        assert(Date.now() < end, `${taskId}: completes after its run`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    return schedulerScenario(ctx, taskId, { type: 'at', at: new Date(Date.now() + 1500).toISOString() }, 1, async () => undefined, completed);
  },

  /** (n) a deduplicated delay of 1 s: two events with the same dedupe key start one run, then the task is deleted. */
  'task-scheduler-delay': (ctx) =>
    schedulerScenario(ctx, 'record-delay', { type: 'delay', event: 'record.deploy', seconds: 1, deduplicate: true, dedupe_key: '{{values.host}}' }, 1, async () => {
      for (let i = 0; i < 2; i++) assert((await sendSignal(ctx, 'record.deploy', null, { host: 'web-1' })).join() === 'record-delay', 'delay: the signal reaches the task');
    }),

  /** (o) a condition sustained for 0.5 s: a reading above the bound starts one run, a reading below it after the run, then the task is deleted. */
  'task-scheduler-condition': (ctx) =>
    schedulerScenario(
      ctx,
      'record-condition',
      { type: 'condition', when: { signal: 'record.load', op: '>', value: 0.5, for_s: 0.5 } },
      1,
      async () => assert((await sendSignal(ctx, 'record.load', 0.9)).join() === 'record-condition', 'condition: the signal reaches the task'),
      async () => assert((await sendSignal(ctx, 'record.load', 0.1)).join() === 'record-condition', 'condition: the signal reaches the task'),
    ),

  /**
   * (p) the transparency log builder (tlog-builder/<instance id>; the worker starts it when it
   * signs the log): its first buildLog run (a minute) completes and the second is scheduled;
   * recorded while running, then terminated. Takes about a minute.
   */
  async 'tlog-builder'(ctx) {
    assert(ctx.tlog, 'tlog-builder: the worker builds the log');
    const handle = ctx.client.workflow.getHandle(tlogBuilderWorkflowId(await databaseInstanceId(ctx.pool)));
    const history = await afterFirstActivity(handle, LIMITS.tlogActivityRunMs, 'tlog-builder: one buildLog run completes and the next is scheduled');
    return [{ name: 'tlog-builder', history }];
  },

  /**
   * The fire shard of the recorded tasks' queue (issue 15, workflows/tasks/fire-shard.ts),
   * after the cron and interval scenarios fired from it: its first fireShard activity returns
   * (after taskFireShardActivityMs) and the next is scheduled. Recorded while running, then terminated.
   */
  async 'task-fire-shard'(ctx) {
    const instanceId = await databaseInstanceId(ctx.pool);
    const ids = await ensureFireShards(ctx.client, ctx.pool, ctx.taskQueue);
    const handle = ctx.client.workflow.getHandle(fireShardWorkflowId(instanceId, ctx.taskQueue, fireShardOf('record-cron', LIMITS.taskFireShards)));
    assert(ids.includes(handle.workflowId), 'task-fire-shard: the shard is one of the queue\'s');
    const history = await afterFirstActivity(handle, LIMITS.taskFireShardActivityMs, 'task-fire-shard: one fireShard activity completes and the next is scheduled');
    return [{ name: 'task-fire-shard', history }];
  },

  /**
   * A plain cron task's scheduler started on demand (stop 33): the create writes its row on the
   * shared fire schedule and starts nothing; the rename starts the scheduler from the stored task
   * (onSchedule), which registers version 2 over the row; pause takes the row out, resume puts it
   * back, delete takes it out and ends the scheduler. Recorded: the scheduler's history.
   */
  async 'task-scheduler-on-demand'(ctx) {
    const taskId = 'record-on-demand';
    return withAgent(taskId, 1, 'done', 0, async (agent) => {
      const tc = tasks(ctx);
      const store = new TaskStore(ctx.pool);
      const fires = new FireScheduleStore(ctx.pool);
      const created = await tc.create(webhookTask(taskId, 'Record a plain task changed', agent, 'go', TriggerSchema.parse({ type: 'cron', expression: '0 0 1 1 *', timezone: 'UTC' })), true);
      assert((await fires.get(taskId))?.version === 1, `${taskId}: the create put version 1 on the fire schedule`);
      const renamed = await tc.update(created, { ...created.definition, name: 'Record a plain task, renamed' });
      await until(async () => (await fires.get(taskId))?.version === 2, `${taskId}: its scheduler registered version 2`);
      const paused = await tc.pause(renamed);
      await until(async () => (await fires.get(taskId)) === undefined, `${taskId}: paused, off the fire schedule`);
      await tc.resume(paused);
      await until(async () => (await fires.get(taskId))?.version === 4, `${taskId}: resumed, version 4 registered`);
      const schedulerRuns = await deleteAndFetchScheduler(ctx, tc, store, taskId);
      assert((await fires.get(taskId)) === undefined, `${taskId}: deleted, off the fire schedule`);
      return [{ name: 'task-scheduler-on-demand', history: schedulerRuns[0] }];
    });
  },

  /**
   * A plain task's scheduler at rest (patch ENDS_AT_REST, stop 34): the rename starts it from the
   * stored task (onSchedule), it registers version 2 over the row and ends by itself, leaving the
   * row on the schedule. Recorded: that run's history; the delete then starts another run, which
   * takes the row out.
   */
  async 'task-scheduler-ends-at-rest'(ctx) {
    const taskId = 'record-ends-at-rest';
    return withAgent(taskId, 1, 'done', 0, async (agent) => {
      const tc = tasks(ctx);
      const fires = new FireScheduleStore(ctx.pool);
      const created = await tc.create(webhookTask(taskId, 'Record a plain task at rest', agent, 'go', TriggerSchema.parse({ type: 'cron', expression: '0 0 1 1 *', timezone: 'UTC' })), true);
      await tc.update(created, { ...created.definition, name: 'Record a plain task at rest, renamed' });
      const scheduler = ctx.client.workflow.getHandle(schedulerWorkflowId(taskId));
      await scheduler.result();
      assert((await fires.get(taskId))?.version === 2, `${taskId}: its scheduler registered version 2 and ended`);
      const [history] = await fetchRuns(ctx, scheduler);
      await deleteAndFetchScheduler(ctx, tc, new TaskStore(ctx.pool), taskId);
      assert((await fires.get(taskId)) === undefined, `${taskId}: deleted, off the fire schedule`);
      return [{ name: 'task-scheduler-ends-at-rest', history }];
    });
  },

  /**
   * A plain interval task's late fire time handed back while no scheduler runs (stop 33): its
   * row is set an hour late, the shard hands it back, a scheduler is started with it in its input
   * (returned), runs it under run_latest and registers the task again; then it is deleted.
   * Recorded: the scheduler's history.
   */
  async 'task-scheduler-handed-back'(ctx) {
    const taskId = 'record-handed-back';
    const fires = new FireScheduleStore(ctx.pool);
    // misfire run_latest is the default (TASK_DEFAULTS).
    return schedulerScenario(
      ctx,
      taskId,
      { type: 'interval', every_s: 3600, mode: 'aligned' },
      1,
      async () => {
        const lateMs = Date.now() - 3_600_000;
        await ctx.pool.query('UPDATE task_fire_schedule SET next_fire_ms = $2, cursor_ms = $3 WHERE task_id = $1', [taskId, lateMs, lateMs - 1]);
      },
      () => until(async () => ((await fires.get(taskId))?.nextFireMs ?? 0) > Date.now(), `${taskId}: registered again after the late fire time`),
      'task-scheduler-handed-back',
    );
  },

  /** (h) ttl_s 1: the intent expires (blocked, error expired) and, blocked without a retry, its workflow closes after a retention of 2 s. */
  async 'intent-ttl-expiry'(ctx) {
    const id = 'OPS-20231027-003';
    await intents(ctx, 2).create({ eventId: id, domain: 'ops', action: 'rotate-logs', ttlS: 1 });
    await storedStatus(ctx, id, IntentStatus.Blocked);
    return [{ name: 'intent-ttl-expiry', history: await finishIntent(ctx, id, 'retention') }];
  },
};

function parseArgs(argv: string[]): { tag?: string; overwrite: boolean; only?: string[] } {
  const out: { tag?: string; overwrite: boolean; only?: string[] } = { overwrite: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--overwrite') out.overwrite = true;
    else if (a === '--tag') out.tag = argv[++i];
    else if (a === '--only') out.only = argv[++i].split(',');
    else throw new Error(`unknown argument ${a}; use --tag NAME, --only a,b or --overwrite`);
  }
  if (out.tag !== undefined && !/^[A-Za-z0-9_-]+$/.test(out.tag)) throw new Error('--tag must be letters, digits, - or _');
  return out;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const selected = Object.keys(scenarios).filter((s) => !args.only || args.only.includes(s));
  if (args.only) for (const s of args.only) if (!scenarios[s]) throw new Error(`unknown scenario ${s}; known: ${Object.keys(scenarios).join(', ')}`);
  const began = Date.now();
  const log = (m: string) => console.log(`[record ${((Date.now() - began) / 1000).toFixed(1)}s] ${m}`);
  Runtime.install({ logger: new DefaultLogger('WARN') });

  const server = process.env.TEST_DATABASE_SERVER_URL || process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  const dbName = `timekeeper_record_${process.pid}`;
  const ownerUrl = withDatabase(server, dbName);
  const dropDatabase = async () => {
    const admin = new PgClient({ connectionString: withDatabase(server, 'postgres') });
    await admin.connect();
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(dbName)} WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  };

  const cleanup: (() => Promise<unknown>)[] = [];
  const recorded: Recorded[] = [];
  try {
    cleanup.push(dropDatabase);
    await migrate(ownerUrl);
    log(`migrated scratch database ${dbName}`);
    const dev = await startDevServer({ port: await freePort(), uiPort: 0, log });
    cleanup.push(() => dev.stop());
    log(`temporal dev server at ${dev.address}`);

    const pool = createPool(deriveAppUrl(ownerUrl), { max: 5 });
    cleanup.push(() => pool.end());
    const nativeConnection = await NativeConnection.connect({ address: dev.address });
    cleanup.push(() => nativeConnection.close());
    // The intent workflow's search attributes (IntentId, Domain, IntentStatus), as the API registers them.
    await ensureSearchAttributes(nativeConnection, 'default');
    const connection = await Connection.connect({ address: dev.address });
    cleanup.push(() => connection.close());
    const client = new Client({ connection, namespace: 'default', identity: 'timekeeper-record-histories' });
    const taskQueue = 'record-histories';
    // Task agents are local stand-ins (127.0.0.1); their results come back through the client, not HTTP.
    // The OpenTelemetry exporter only for its own scenario (its interceptors add headers to other histories' updates).
    let otlpRequests: (() => number) | undefined;
    let otel: { endpoint: string; serviceName: string; pollMs: number; settleMs: number } | undefined;
    if (selected.includes('otel-export')) {
      let n = 0;
      const collector = http.createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          n++;
          res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        });
      });
      await new Promise<void>((ok) => collector.listen(0, '127.0.0.1', () => ok()));
      cleanup.push(() => new Promise<void>((ok) => collector.close(() => ok())));
      otlpRequests = () => n;
      otel = { endpoint: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`, serviceName: 'record-histories', pollMs: 300, settleMs: 0 };
    }
    // The log builder only for its own scenario, with a signing key of its own in a scratch folder.
    let tlog: TimekeeperWorkerOptions['tlog'];
    if (selected.includes('tlog-builder')) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'timekeeper-record-'));
      cleanup.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
      tlog = { logOrigin: undefined, logSigningKeyFile: undefined, dataDir, logBatchIntervalMs: 500 };
    }
    const worker = await createTimekeeperWorker({ connection: nativeConnection, namespace: 'default', taskQueue, pool, otel, tlog, tasks: { outboundAllowHosts: ['127.0.0.1'], publicUrl: 'http://127.0.0.1:8000' } });
    const running = worker.run();
    cleanup.push(async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    });
    log('worker running');

    const ctx: Ctx = { client, taskQueue, pool, otlpRequests, tlog: tlog !== undefined };
    for (const name of selected) {
      const runs = await scenarios[name](ctx);
      recorded.push(...runs);
      log(`${name}: ${runs.map((r) => `${r.name} (${r.history.events?.length ?? 0} events)`).join(', ')}`);
    }
  } finally {
    for (const fn of cleanup.reverse()) {
      await fn().catch((err) => console.error('[record] clean-up:', (err as Error).message));
    }
  }

  fs.mkdirSync(HISTORIES_DIR, { recursive: true });
  const files = recorded.map((r) => path.join(HISTORIES_DIR, `${r.name}${args.tag ? `.${args.tag}` : ''}.json`));
  const existing = files.filter((f) => fs.existsSync(f));
  if (existing.length > 0 && !args.overwrite) {
    throw new Error(
      `refusing to overwrite ${existing.map((f) => path.relative(process.cwd(), f)).join(', ')}: recorded histories are ` +
        'the compatibility contract (test/replay/README.md). Record new ones with --tag NAME, or pass --overwrite.',
    );
  }
  recorded.forEach((r, i) => fs.writeFileSync(files[i], historyToJSON(r.history) + '\n'));
  log(`wrote ${files.length} files to ${path.relative(process.cwd(), HISTORIES_DIR)}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
