/**
 * Task activities: every piece of outside I/O a task does — fire-time computation and run
 * starts under the overlap policy (local activities of the scheduler), the execution log, the
 * agent call (time context, run memory, the answer protocol with one re-ask; a run's first
 * attempt with its whole finish as one local activity), deliveries, alerts and auto-disable.
 * The workflows decide; these act.
 */
import { createHmac } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Pool } from 'pg';
import { RunFailure } from '../../lib/domain/errors';
import { LIMITS } from '../../lib/domain/limits';
import { EventType, type SessionWriter } from '../../lib/domain/sessions';
import {
  AgentAnswer,
  LOST_REASON_PREFIX,
  RunContext,
  RunTrigger,
  TaskAction,
  TaskDefinition,
  buildRunMemory,
  buildSystemPrompt,
  buildTimeContext,
  cutSummary,
  renderTemplate,
  templateVariables,
  triggerZone,
  type Calendar,
  type DeliveryTarget,
  type Trigger,
} from '../../lib/domain/tasks';
import { OutboundRefused, answerLine, outboundRequest } from '../../lib/platform/outbound';
import type { TaskSecrets } from '../../lib/task-secrets';
import { isRunDay } from '../../lib/domain/tasks/calendars';
import { fireTimes } from '../../lib/domain/tasks/schedule';
import { metrics, observeTaskLateness, secondsSince } from '../../lib/metrics';
import { TaskStore, type RunLogInput } from '../../lib/store/tasks';
import { OpenRunStore, type OpenRun } from '../../lib/store/tasks/open-runs';
import { FireScheduleStore } from '../../lib/store/tasks/fire-schedule';
import { fireShardOf } from '../../lib/domain/tasks/fire-shards';
import { logFor } from '../../lib/log';
import { runFireShard, type ShardPass } from './fire-shard';
import type { FireInput, FireOutcome } from '../../workflows/tasks/messages';
import { createSignalActivities } from '../signals';
import type { RunControl } from './run-control';
import { parseAgentAnswer } from '../../lib/domain/tasks/answer';
import { resultPath, type AwaitingResult } from '../../lib/domain/tasks/results';
import { openclawHookRequest } from './openclaw-agent';
import { isFollowUp } from '../../lib/domain/tasks/outputs';
import { TaskResultStore } from '../../lib/store/tasks/results';
import { runDigest } from './outputs/digest';
import { writeRunFile } from './outputs/file';
import { FOLLOW_UP_TARGET, type FollowUpCreator } from './outputs/follow-up';
import { markdownOf } from './outputs/format';

export interface TaskActivityDeps {
  pool: Pool;
  sessions: SessionWriter;
  /** Hosts outgoing requests may reach although they are private or local (OUTBOUND_ALLOW_HOSTS). */
  outboundAllowHosts: readonly string[];
  /** Opens the sealed HMAC secrets of stored definitions (lib/task-secrets.ts); none: a sealed secret fails the call. */
  secrets?: TaskSecrets;
  /** OUTBOUND_ECHO_BODIES: quote the start of a non-2xx answer in the run's reason (default: the status line only). */
  outboundEchoBodies?: boolean;
  /** Reads a secret by its environment variable name, if registered in AGENT_SECRETS (lib/config.ts readSecret). */
  secret: (name: string) => string | undefined;
  /** The API's base URL as agents reach it (PUBLIC_URL): results reported later go to <base>/v1/runs/{run_id}/result. */
  publicUrl: string;
  /** The `file` delivery writes here (ARTIFACTS_DIR, the folder GET /api/artifacts serves); none: file deliveries fail. */
  artifactsDir?: string;
  /** Creates next_action follow-up tasks (worker/follow-ups.ts); none: follow-ups are recorded as refused. */
  followUps?: FollowUpCreator;
  /** Starts, cancels and wakes through Temporal (worker/run-control.ts); none: fireRun fails and finished runs wake nobody. */
  runs?: RunControl;
}

export interface FireTimesInput {
  trigger: Trigger;
  calendar?: Calendar;
  afterMs: number;
  count: number;
  untilMs?: number;
  lastFireMs?: number;
}

export interface AgentCall {
  task: TaskDefinition;
  runId: string;
  trigger: RunTrigger;
  nominalMs: number;
  startedMs: number;
  attempt: number;
  /** Why a signal-triggered run woke, for the time context. */
  cause?: string;
}

export interface DeliverInput {
  task: TaskDefinition;
  runId: string;
  nominalMs: number;
  startedMs: number;
  finishedMs: number;
  attempt: number;
  status: 'success' | 'failed';
  answer?: AgentAnswer;
  reason?: string;
}

/** A run's first attempt in one local activity (issue 15): the agent call and, when it answered with success, the whole finish. */
export interface FirstAttemptInput {
  call: AgentCall;
  trigger: RunTrigger;
}

/**
 * The answer of the first attempt, and how far a successful run's finish got inside the
 * activity: `announced` is all of it (success logged, delivered, outcome signal sent); any
 * step that failed (the database or a delivery store down) is left to the workflow's
 * retried activities, from the step after `done`. The agent is never called twice for it.
 */
export interface FirstAttemptResult {
  direct: AgentAnswer | AwaitingResult;
  done?: 'none' | 'logged' | 'delivered' | 'announced';
  finishedMs?: number;
}

/** The task_deliveries `target` of a failed run's alert (delivery targets are 0-9, the session 10, a follow-up FOLLOW_UP_TARGET). */
const ALERT_TARGET = 1000;

/** A failure no retry of the activity can fix: the run workflow's own retry ladder decides. */
const fail = (type: RunFailure, message: string) => ApplicationFailure.create({ type, message, nonRetryable: true });

export function createTaskActivities(deps: TaskActivityDeps) {
  const store = new TaskStore(deps.pool);
  const results = new TaskResultStore(deps.pool);
  const open = new OpenRunStore(deps.pool);
  const fireSchedule = new FireScheduleStore(deps.pool);
  const signals = createSignalActivities({ pool: deps.pool });
  /** First attempts in flight or just answered, by run id and attempt (runFirstAttempt). */
  const firstAttempts = new Map<string, Promise<FirstAttemptResult>>();
  const control = (): RunControl => {
    if (!deps.runs) throw new Error('this worker was built without RunControl');
    return deps.runs;
  };

  async function post(url: string, body: string, headers: Record<string, string>) {
    try {
      return await outboundRequest(url, { method: 'POST', body, headers, allowHosts: deps.outboundAllowHosts });
    } catch (err) {
      if (err instanceof OutboundRefused) throw fail(RunFailure.OutboundRefused, err.message);
      throw fail(RunFailure.AgentUnreachable, `${new URL(url).host}: ${(err as Error).message}`);
    }
  }

  /** The signature header for a body, with the task's secret opened only here (it is sealed everywhere else). */
  const sign = (task: TaskDefinition, secret: string | undefined, body: string): Record<string, string> => {
    if (!secret) return {};
    let key: string;
    try {
      if (!deps.secrets) throw new Error('this worker has no secrets key');
      key = deps.secrets.open(secret, task.task_id);
    } catch (err) {
      throw fail(RunFailure.SecretUnreadable, (err as Error).message);
    }
    return { 'x-timekeeper-signature': `sha256=${createHmac('sha256', key).update(body).digest('hex')}` };
  };

  async function taskFireTimes(i: FireTimesInput): Promise<number[]> {
    return fireTimes(i.trigger, i.calendar, i.afterMs, i.count, i.untilMs ?? Infinity, { lastFireMs: i.lastFireMs });
  }

  /** The one fire time after `afterMs` (pure), null when the trigger has none left. */
  async function nextFireTime(a: { trigger: Trigger; calendar?: Calendar; afterMs: number; lastFireMs?: number }): Promise<number | null> {
    return (await taskFireTimes({ ...a, count: 1 }))[0] ?? null;
  }

  async function recordRun(e: RunLogInput): Promise<void> {
    await store.recordRun({ ...e, summary: e.summary === undefined ? undefined : cutSummary(e.summary), reason: e.reason?.slice(0, LIMITS.taskReasonMaxChars) });
    metrics.taskRuns.inc({ status: e.status, trigger: e.trigger });
    // A run's start is logged once, as `running` with attempt 1: that is when it fired.
    if (e.status === 'running' && e.attempt === 1 && e.startedMs !== undefined) observeTaskLateness(e.trigger, e.nominalMs, e.startedMs);
    // A finish wakes the schedulers that wait for it (after the row is written: see schema/015); a
    // final failure (needs attention) wakes them from afterFailure, once auto-disable is decided.
    if (e.status === 'success' || (e.status === 'failed' && !e.needsAttention)) await wakeWaiting(e.runId);
  }

  async function wakeWaiting(runId: string): Promise<void> {
    if (deps.runs) for (const taskId of await open.wakesFor(runId)) await deps.runs.wakeScheduler(taskId, runId);
  }

  /**
   * The task's runs still running by the log. A run whose workflow closed without a logged
   * finish (terminated by an operator, timed out) or that Temporal does not know
   * taskRunLostAfterMs after its start was logged (the start never reached it) does not count,
   * and its end is logged here as `failed` with why: it would otherwise show `running` for good
   * and cost a describe at every fire of its task. A waiting scheduler is woken by it.
   */
  async function openRuns(taskId: string): Promise<string[]> {
    const runs = await open.openRuns(taskId);
    const closed = await Promise.all(runs.map((r) => control().closed(r.runId)));
    const still: string[] = [];
    for (const [i, run] of runs.entries()) {
      const status = closed[i];
      if (status === undefined) still.push(run.runId);
      // Not known yet may be a start on its way (logged first, then started): only later is it lost.
      else if (status !== 'NOT_FOUND' || run.loggedAgoMs >= LIMITS.taskRunLostAfterMs) await closeLost(taskId, run, status);
    }
    return still;
  }

  async function closeLost(taskId: string, run: OpenRun, status: string): Promise<void> {
    const reason =
      status === 'NOT_FOUND'
        ? `${LOST_REASON_PREFIX} Temporal has no workflow for this run ${Math.round(run.loggedAgoMs / 1000)} s after its start was logged (the start never reached it, or its history is gone)`
        : `${LOST_REASON_PREFIX} its workflow closed (${status}) without logging a finish`;
    const logged = await store.recordFinishIfOpen({ runId: run.runId, taskId, status: 'failed', trigger: run.trigger, nominalMs: run.nominalMs, startedMs: run.startedMs ?? undefined, finishedMs: Date.now(), attempt: 1, reason });
    if (!logged) return;
    metrics.taskRuns.inc({ status: 'failed', trigger: run.trigger });
    await wakeWaiting(run.runId);
  }

  /** How many of the task's runs are still running by the log, a wake asked for each (the scheduler waits for them: an `at` task completes after its run). */
  async function watchRuns(i: { taskId: string }): Promise<number> {
    const running = await openRuns(i.taskId);
    if (running.length === 0) return 0;
    await open.addWakes(i.taskId, running);
    return (await openRuns(i.taskId)).length;
  }

  /**
   * The scheduler's fire time (a local activity, so a fire costs the scheduler no workflow task
   * of its own): the overlap policy against the runs the log says are running, then the run
   * started (TaskClient.startRun: start logged, workflow started with REJECT_DUPLICATE).
   */
  async function fireRun(i: FireInput): Promise<FireOutcome> {
    const t = performance.now();
    try {
      // The next fire time first: pure, so nothing is started when it cannot be answered.
      const next = i.next && (await nextFireTime(i.next));
      const outcome = await fire(i);
      return next === undefined ? outcome : { ...outcome, next };
    } finally {
      metrics.taskFirstAttemptSteps.observe({ step: 'fire' }, secondsSince(t));
    }
  }

  async function fire(i: FireInput): Promise<FireOutcome> {
    const d = i.definition;
    let running = await openRuns(i.taskId);
    if (running.length > 0) {
      // This very run, started by an earlier try of this activity (a worker crashed before the scheduler recorded it).
      if (running.includes(i.runId) || (await store.startedRunIds([i.runId])).size > 0) return { outcome: 'duplicate' };
      let reason: string | undefined;
      switch (d.overlap) {
        case 'allow':
          if (running.length >= d.max_concurrency) reason = `overlap allow: ${running.length} runs already running (max_concurrency ${d.max_concurrency})`;
          break;
        case 'buffer_one':
          if (!i.mayWait) {
            reason = 'overlap buffer_one: a run is running and another is already waiting';
            break;
          }
          // Ask first, then look again: the run logs its finish first, then reads the asks (schema/015).
          await open.addWakes(i.taskId, running);
          running = await openRuns(i.taskId);
          if (running.length > 0) return { outcome: 'waiting' };
          break;
        case 'cancel_previous':
          await Promise.all(running.map((id) => control().cancel(id)));
          break;
        case 'skip':
        default:
          reason = `overlap skip: the previous run (${running[0]}) is still running`;
      }
      if (reason) {
        await recordSkipped({ taskId: i.taskId, runs: [{ runId: i.runId, nominalMs: i.nominalMs, reason, trigger: i.trigger }] });
        return { outcome: 'skipped', reason };
      }
    }
    const started = await control().start({ definition: d, runId: i.runId, nominalMs: i.nominalMs, trigger: i.trigger, ...(i.cause ? { cause: i.cause } : {}) });
    if (!started) return { outcome: 'duplicate' };
    return { outcome: 'started' };
  }

  async function recordSkipped(i: { taskId: string; runs: { runId: string; nominalMs: number; reason: string; trigger: RunTrigger }[] }): Promise<void> {
    for (const r of i.runs) {
      await store.recordRun({ runId: r.runId, taskId: i.taskId, status: 'skipped', reason: r.reason, trigger: r.trigger, nominalMs: r.nominalMs, attempt: 0 });
      metrics.taskRuns.inc({ status: 'skipped', trigger: r.trigger });
    }
  }

  /**
   * One attempt: build what the agent wakes up with, ask it, check its answer (asking again
   * once). Agents that report later (webhook 202, OpenClaw) return AwaitingResult: the run
   * workflow then waits for POST /v1/runs/{run_id}/result.
   */
  async function runAgent(call: AgentCall, lap: (step: 'context') => void = () => undefined): Promise<AgentAnswer | AwaitingResult> {
    const { task } = call;
    const tz = triggerZone(task.trigger);
    const nowMs = Date.now();
    // The built-in digest answers from the needs-attention queue, without an LLM.
    if (task.agent.type === 'digest') return runDigest({ tasks: store, results }, task, call.runId, nowMs);
    const known = await store.runContext(task.task_id, call.runId, task.memory_runs);
    const ctx: RunContext = { ...call, nowMs, lastRunMs: known.lastStartMs };
    const timeContext = buildTimeContext(ctx, isRunDay(task.calendar, nowMs, tz, task.lang));
    const memory = buildRunMemory(known.memory, tz, task.lang);
    lap('context');
    const system = buildSystemPrompt(ctx, timeContext, memory);
    const prompt = renderTemplate(task.agent.prompt_template, templateVariables(ctx));
    const agent = task.agent;

    if (agent.type === 'openai') {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (agent.api_key_env) {
        const key = deps.secret(agent.api_key_env);
        if (!key) throw fail(RunFailure.AgentMisconfigured, `agent.api_key_env: the environment variable ${agent.api_key_env} is not set on the worker, or not registered in AGENT_SECRETS`);
        headers.authorization = `Bearer ${key}`;
      }
      const messages: { role: string; content: string }[] = [
        { role: 'system', content: system },
        { role: 'user', content: prompt },
      ];
      let problem = '';
      for (let ask = 1; ask <= LIMITS.agentAnswerAsks; ask++) {
        const body = JSON.stringify({ model: agent.model, messages, ...(agent.temperature !== undefined ? { temperature: agent.temperature } : {}) });
        const res = await post(`${agent.base_url.replace(/\/+$/, '')}/chat/completions`, body, headers);
        if (res.status < 200 || res.status > 299) throw fail(RunFailure.AgentError, `chat completions answered ${answerLine(res, deps.outboundEchoBodies ?? false)}`);
        let content: string;
        try {
          content = String(JSON.parse(res.body).choices[0].message.content ?? '');
        } catch {
          throw fail(RunFailure.AgentError, 'chat completions answer has no choices[0].message.content');
        }
        const parsed = parseAgentAnswer(content, task.task_id);
        if (parsed.ok) return parsed.answer;
        problem = parsed.problem;
        messages.push({ role: 'assistant', content }, { role: 'user', content: `Your answer does not follow the protocol: ${problem}. ${'Answer again with only the JSON object.'}` });
      }
      throw fail(RunFailure.InvalidAnswer, `the agent's answer did not follow the protocol, also when asked again: ${problem}`);
    }

    const resultUrl = `${deps.publicUrl.replace(/\/+$/, '')}${resultPath(call.runId)}`;
    if (agent.type === 'openclaw') {
      const token = deps.secret(agent.token_env);
      if (!token) throw fail(RunFailure.AgentMisconfigured, `agent.token_env: the environment variable ${agent.token_env} is not set on the worker, or not registered in AGENT_SECRETS`);
      const req = openclawHookRequest({ task, agent, token, runId: call.runId, attempt: call.attempt, system, prompt, resultUrl });
      const res = await post(req.url, req.body, req.headers);
      if (res.status < 200 || res.status > 299) throw fail(RunFailure.AgentError, `the OpenClaw Gateway answered ${answerLine(res, deps.outboundEchoBodies ?? false)}`);
      let ocRun: unknown;
      try {
        ocRun = JSON.parse(res.body).runId;
      } catch {
        ocRun = undefined;
      }
      return { awaiting_result: true, detail: `the OpenClaw Gateway started the agent turn${typeof ocRun === 'string' && /^[A-Za-z0-9._:-]{1,100}$/.test(ocRun) ? ` (OpenClaw run ${ocRun})` : ''}` };
    }

    // webhook agent: POST the run context; a JSON answer is the result, 202 means it comes to result_url.
    let problem: string | undefined;
    for (let ask = 1; ask <= LIMITS.agentAnswerAsks; ask++) {
      const body = JSON.stringify({
        run_id: call.runId,
        task_id: task.task_id,
        task_name: task.name,
        scheduled_at: new Date(call.nominalMs).toISOString(),
        started_at: new Date(call.startedMs).toISOString(),
        attempt: call.attempt,
        system_prompt: system,
        prompt,
        time_context: timeContext,
        memory,
        result_url: resultUrl,
        ...(problem ? { previous_answer_problem: problem } : {}),
      });
      const res = await post(agent.url, body, { 'content-type': 'application/json', 'idempotency-key': `${call.runId}#${call.attempt}.${ask}`, ...sign(task, agent.secret, body) });
      if (res.status === 202) return { awaiting_result: true, detail: 'the webhook answered 202 Accepted' };
      if (res.status < 200 || res.status > 299) throw fail(RunFailure.AgentError, `the webhook answered ${answerLine(res, deps.outboundEchoBodies ?? false)}`);
      const parsed = parseAgentAnswer(res.body, task.task_id);
      if (parsed.ok) return parsed.answer;
      problem = parsed.problem;
    }
    throw fail(RunFailure.InvalidAnswer, `the agent's answer did not follow the protocol, also when asked again: ${problem}`);
  }

  /**
   * Hands a finished run to its delivery targets (successful runs) and to the task's session
   * (every run). Each target is recorded once it took the result; a retry of this activity
   * skips those, and receivers deduplicate by Idempotency-Key (the run id). Failures are
   * recorded, never thrown: a delivery failure is not a run failure. The targets are webhook,
   * session, file (activities/tasks/outputs/file.ts) and table (task_results); a successful
   * run's `follow_up` next_action is created here too, recorded as target FOLLOW_UP_TARGET
   * (only an unreachable Temporal or database throws, so the activity retries it).
   */
  async function deliverRun(d: DeliverInput): Promise<{ delivered: number; failed: number }> {
    const targets: DeliveryTarget[] = [...(d.status === 'success' ? d.task.delivery : []), ...(d.task.session_id ? [{ type: 'session' as const, session_id: d.task.session_id }] : [])];
    const action = d.answer?.next_action;
    const followUp = d.status === 'success' && isFollowUp(action);
    // Nothing to hand over (most runs): no read of what an earlier try delivered (issue 15: a statement per run).
    if (targets.length === 0 && !followUp) return { delivered: 0, failed: 0 };
    const done = new Set((await store.deliveries(d.runId)).filter((x) => x.ok).map((x) => x.target));
    const payload = {
      run_id: d.runId,
      task_id: d.task.task_id,
      task_name: d.task.name,
      scheduled_at: new Date(d.nominalMs).toISOString(),
      started_at: new Date(d.startedMs).toISOString(),
      finished_at: new Date(d.finishedMs).toISOString(),
      attempt: d.attempt,
      status: d.status,
      result: (d.answer ?? null) as unknown,
      summary: d.answer?.summary ?? d.reason ?? '',
    };
    let delivered = 0;
    let failed = 0;
    for (const [i, t] of targets.entries()) {
      if (done.has(i)) continue;
      let ok = false;
      let detail = '';
      try {
        if (t.type === 'file') {
          if (!deps.artifactsDir) throw new Error('this worker has no ARTIFACTS_DIR');
          detail = `wrote ${await writeRunFile(deps.artifactsDir, t, d.task, d.nominalMs, payload)} in ARTIFACTS_DIR`;
          ok = true;
        } else if (t.type === 'table') {
          if (!d.answer) throw new Error('no result to store');
          const stored = await results.insertResult({ runId: d.runId, taskId: d.task.task_id, scheduledMs: d.nominalMs, startedMs: d.startedMs, finishedMs: d.finishedMs, attempt: d.attempt, answer: d.answer });
          detail = stored ? 'stored in task_results' : 'already in task_results';
          ok = true;
        } else if (t.type === 'webhook') {
          const markdown = t.format === 'markdown';
          const body = markdown ? markdownOf(payload) : JSON.stringify(payload);
          const res = await outboundRequest(t.url, {
            method: 'POST',
            body,
            allowHosts: deps.outboundAllowHosts,
            headers: { 'content-type': markdown ? 'text/markdown; charset=utf-8' : 'application/json', 'idempotency-key': d.runId, ...sign(d.task, t.secret, body) },
          });
          ok = res.status >= 200 && res.status < 300;
          detail = `HTTP ${res.status}`;
        } else if (t.type === 'session') {
          await deps.sessions.append({
            sessionId: t.session_id,
            type: EventType.TaskRun,
            content: payload as never,
            idempotencyKey: `task-run:${d.runId}`.slice(0, LIMITS.idempotencyKeyMaxChars),
            system: true,
          });
          ok = true;
          detail = `appended to session ${t.session_id}`;
        }
      } catch (err) {
        detail = (err as Error).message;
      }
      await store.recordDelivery({ runId: d.runId, taskId: d.task.task_id, target: i, type: t.type, ok, detail });
      metrics.taskDeliveries.inc({ type: t.type, outcome: ok ? 'ok' : 'failed' });
      if (ok) delivered++;
      else failed++;
    }
    // A next_action follow-up, created once per run; a refused definition is recorded here, not a run failure.
    if (followUp && isFollowUp(action) && !done.has(FOLLOW_UP_TARGET)) {
      const r = deps.followUps ? await deps.followUps.create({ parentRunId: d.runId, parentTaskId: d.task.task_id, finishedMs: d.finishedMs, action }) : { ok: false as const, reason: 'this worker creates no follow-up tasks' };
      await store.recordDelivery({ runId: d.runId, taskId: d.task.task_id, target: FOLLOW_UP_TARGET, type: 'follow_up', ok: r.ok, detail: r.ok ? `created task ${r.taskId}` : `refused: ${r.reason}` });
      metrics.taskDeliveries.inc({ type: 'follow_up', outcome: r.ok ? 'ok' : 'failed' });
      if (r.ok) delivered++;
      else failed++;
    }
    return { delivered, failed };
  }

  /**
   * After a run failed for good: the alert webhook, and auto-disable after
   * `auto_disable_after` failures in a row (recorded in the task history with its reason).
   * Returns the change to send the scheduler when the task was disabled.
   */
  async function afterFailure(i: { task: TaskDefinition; runId: string; reason: string }) {
    const { task } = i;
    if (task.alert) {
      const body = JSON.stringify({ event: 'task_run_failed', run_id: i.runId, task_id: task.task_id, task_name: task.name, reason: i.reason });
      const alert = task.alert;
      await Promise.resolve()
        .then(() => outboundRequest(alert.url, { method: 'POST', body, allowHosts: deps.outboundAllowHosts, headers: { 'content-type': 'application/json', 'idempotency-key': `alert:${i.runId}`, ...sign(task, alert.secret, body) } }))
        .catch((err: Error) => store.recordDelivery({ runId: i.runId, taskId: task.task_id, target: ALERT_TARGET, type: 'alert', ok: false, detail: err.message }));
    }
    const disabled = await autoDisable(i);
    await wakeWaiting(i.runId);
    return disabled;
  }

  async function autoDisable(i: { task: TaskDefinition; runId: string; reason: string }) {
    const { task } = i;
    const failures = await store.consecutiveFailures(task.task_id);
    if (failures < task.auto_disable_after) return null;
    const row = await store.getTask(task.task_id);
    if (!row || row.deleted || !row.enabled) return null;
    const reason = `disabled after ${failures} failed runs in a row (auto_disable_after ${task.auto_disable_after}); last: ${i.reason}`.slice(0, LIMITS.taskReasonMaxChars);
    const after = await store.appendHistory({ taskId: task.task_id, expectedSeq: row.version, action: TaskAction.AutoDisable, definition: row.definition, enabled: false, reason });
    // Its scheduler hears it here, started if none runs (a plain task firing from the shared schedule); the run's own signal after this finds it running.
    await control().changed(after);
    return { version: after.version, definition: after.definition, enabled: false, deleted: false };
  }

  /** An `at` task ran its one fire time: it completes (kept, not deleted). */
  async function completeTask(i: { taskId: string }): Promise<void> {
    const row = await store.getTask(i.taskId);
    // Disabled meanwhile (its run auto-disabled it, or it was paused): it stays as it is.
    if (!row || row.deleted || !row.enabled || row.last_action === TaskAction.Complete) return;
    await store.appendHistory({ taskId: i.taskId, expectedSeq: row.version, action: TaskAction.Complete, definition: row.definition, enabled: false, reason: 'its one fire time has run' });
  }

  /** The run's outcome as signal task_run:<task_id> to the schedulers listening (the run workflow's announceOutcome, from an activity). */
  async function announce(i: { taskId: string; runId: string; status: 'success' | 'failed' }): Promise<void> {
    const { event, listeners } = await signals.emitRunOutcome(i);
    if (event) for (const id of listeners) await control().deliverEvent(id, event);
  }

  /**
   * A run's first attempt as a local activity of the run workflow: the agent call, and when
   * the agent answered with success, the finish the workflow would otherwise do in three more
   * activities (success logged, delivered, outcome announced). A fast webhook run is then one
   * workflow task. Failures of the agent call throw, as runAgent's do; a finish
   * step that fails is returned as not done, for the workflow's retried activities.
   */
  async function runFirstAttempt(i: FirstAttemptInput): Promise<FirstAttemptResult> {
    // A local activity runs again when its workflow task timed out before recording it (an
    // overloaded worker): in this process it joins the call in flight, or takes the answer it
    // got, instead of calling the agent a second time.
    const key = `${i.call.runId}#${i.call.attempt}`;
    const known = firstAttempts.get(key);
    if (known) return known;
    const p = firstAttempt(i);
    firstAttempts.set(key, p);
    p.then(
      () => setTimeout(() => firstAttempts.delete(key), LIMITS.taskFirstAttemptKeptMs).unref(),
      () => firstAttempts.delete(key),
    );
    return p;
  }

  async function firstAttempt(i: FirstAttemptInput): Promise<FirstAttemptResult> {
    // Each step timed (timekeeper_task_first_attempt_step_seconds): queued is the start logged
    // to here (workflow start, the run's workflow task, a local-activity slot).
    metrics.taskFirstAttemptSteps.observe({ step: 'queued' }, Math.max(0, Date.now() - i.call.startedMs) / 1000);
    let t = performance.now();
    const lap = (step: string) => {
      metrics.taskFirstAttemptSteps.observe({ step }, secondsSince(t));
      t = performance.now();
    };
    // Not raced with cancellation: cancel_previous runs do not take this path, and a re-executed
    // activity joining this call must not inherit the first execution's cancellation.
    const direct = await runAgent(i.call, lap);
    lap('agent');
    if ('awaiting_result' in direct || direct.status === 'failed') return { direct };
    const { task, runId, nominalMs, startedMs, attempt } = i.call;
    const finishedMs = Date.now();
    let done: FirstAttemptResult['done'] = 'none';
    try {
      await recordRun({
        runId,
        taskId: task.task_id,
        trigger: i.trigger,
        nominalMs,
        status: 'success',
        startedMs,
        finishedMs,
        attempt,
        processed: direct.processed,
        errorCount: direct.errors.length,
        summary: direct.summary,
        result: direct,
      });
      done = 'logged';
      lap('log');
      await deliverRun({ task, runId, nominalMs, startedMs, finishedMs, attempt, status: 'success', answer: direct });
      done = 'delivered';
      lap('deliver');
      await announce({ taskId: task.task_id, runId, status: 'success' });
      done = 'announced';
      lap('announce');
    } catch {
      // Left to the workflow's retried activities, from the step after `done`.
    }
    return { direct, done, finishedMs };
  }

  /**
   * The scheduler puts a plain cron or interval task on the shared fire schedule (schema/023)
   * at this version, its next fire time computed from its cursor; a row of the same version
   * already moved on by its shard is kept. Answers the row's next fire time.
   */
  async function registerFires(i: { taskId: string; version: number; definition: TaskDefinition; cursorMs: number; lastFireMs?: number }): Promise<number | null> {
    const d = i.definition;
    // A local activity: its task queue is its scheduler's, whose workers run the shard.
    const queue = Context.current().info.taskQueue;
    const row = await fireSchedule.register({ ...i, queue, shard: fireShardOf(i.taskId, LIMITS.taskFireShards) }, (afterMs, lastFireMs) =>
      nextFireTime({ trigger: d.trigger, calendar: d.calendar, afterMs, lastFireMs }),
    );
    return row.nextFireMs;
  }

  /**
   * Takes the task off the shared fire schedule; returns once no fire of it is in flight there,
   * with what the row did meanwhile (its fires, cursor and last start), or null without a row.
   */
  async function unregisterFires(i: { taskId: string; version: number }): Promise<{ fires: number; cursorMs: number; lastFireMs?: number } | null> {
    const row = await fireSchedule.unregister(i.taskId, i.version);
    return row ? { fires: row.fires, cursorMs: row.cursorMs, ...(row.lastFireMs === undefined ? {} : { lastFireMs: row.lastFireMs }) } : null;
  }

  /** One shard of the shared fire schedule, for taskFireShardActivityMs (activities/tasks/fire-shard.ts). */
  async function fireShard(i: { shard: number }): Promise<ShardPass> {
    const ctx = Context.current();
    const log = logFor(undefined, { component: 'task-fires', queue: ctx.info.taskQueue, shard: i.shard });
    return runFireShard(
      {
        store: fireSchedule,
        fire: async (f) => {
          const t = performance.now();
          try {
            return await fire(f);
          } finally {
            metrics.taskFirstAttemptSteps.observe({ step: 'fire' }, secondsSince(t));
          }
        },
        nextAfter: (d, afterMs, lastFireMs) => nextFireTime({ trigger: d.trigger, calendar: d.calendar, afterMs, lastFireMs }),
        handBack: (taskId, r) => control().returnFires(taskId, r),
        warn: (msg, err) => log.warn({ err: (err as Error)?.message }, msg),
      },
      ctx.info.taskQueue,
      i.shard,
      { untilMs: Date.now() + LIMITS.taskFireShardActivityMs, heartbeat: () => ctx.heartbeat(), sleep: (ms) => ctx.sleep(ms) },
    );
  }

  return { taskFireTimes, recordRun, recordSkipped, fireRun, watchRuns, runAgent, runFirstAttempt, deliverRun, afterFailure, completeTask, registerFires, unregisterFires, fireShard };
}

export type TaskActivities = ReturnType<typeof createTaskActivities>;
