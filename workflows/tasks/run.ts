/**
 * One durable workflow per run (workflow id `run/<task_id>/<nominal UTC time>`): log the
 * start, ask the agent (activity runAgent, bounded by the task's timeout_s per attempt); an
 * agent that reports later (webhook 202, OpenClaw) is waited for through the `result` update
 * (results.ts) within the same timeout_s; retry along the backoff list on durable timers, log the outcome, deliver, and on a final
 * failure put the run in the needs-attention queue, alert, and auto-disable the task after
 * too many failures in a row. The Temporal UI finds a task's runs by the workflow id's
 * `run/<task_id>/` prefix, and a run that waits, retries or fails by its RunStatus.
 *
 * Since issue 15 the starter logs the start (input.startedMs), and the first attempt is one
 * local activity that also finishes a successful run (log, delivery, outcome signal): a fast
 * agent's run costs one workflow task. Failures fall back to the activities and durable
 * timers below; agents that report later are waited for as before.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  TimeoutFailure,
  getExternalWorkflowHandle,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { SignalActivities } from '../../activities/signals';
import { RunFailure } from '../../lib/domain/errors';
import { LIMITS } from '../../lib/domain/limits';
import type { FirstAttemptResult, TaskActivities } from '../../activities/tasks';
import { isAwaitingResult, resultPath, type AwaitingResult } from '../../lib/domain/tasks/results';
import { CANCELLED_REASON_PREFIX, backoffBeforeAttempt, schedulerWorkflowId, type AgentAnswer } from '../../lib/domain/tasks';
import { RunStatusKey } from '../../lib/domain/platform/search-attributes';
import { RunInput, RunResult, RunState, changedSignal, runStateQuery, signalEventSignal } from './messages';
import { ResultInbox } from './results';
import { hasPatch } from '../platform/patches';

/** Issue 15: attempt 1 (and a successful run's finish) as one local activity; older histories replay with activities. */
export const FIRST_ATTEMPT_LOCAL = 'task-run-first-attempt-local';
/** The run's outcome signal to the schedulers whose condition reads it. */
export const OUTCOME_SIGNAL = 'task-run-outcome-signal';
/**
 * Issue 15: a run is started with no search attributes and sets RunStatus only once it leaves the
 * plain path (waiting, retry, failed; then every change after): a run that succeeds at its first
 * attempt writes no visibility update besides its start and close. Older runs were started with
 * TaskId and RunStatus=running and upsert every change.
 */
export const STATUS_WHEN_NOTABLE = 'task-run-status-when-notable';
/** The patches of this code, given to every run it starts (RunInput.patches: no markers, no search-attribute upserts for them). */
export const RUN_PATCHES = [FIRST_ATTEMPT_LOCAL, OUTCOME_SIGNAL, STATUS_WHEN_NOTABLE];


/**
 * The run's retried steps (activities, named as registered): its log rows (recordRun), its
 * deliveries (deliverRun), and after a final failure the alert and auto-disable
 * (afterFailure). Short: single inserts and outgoing deliveries; one lost with a crashed
 * worker is retried soon.
 */
const steps = proxyActivities<TaskActivities>({
  startToCloseTimeout: LIMITS.taskActivityTimeoutMs,
  retry: { initialInterval: LIMITS.taskActivityRetryInitialMs, maximumInterval: LIMITS.taskActivityRetryMaxMs },
});

const signals = proxyActivities<SignalActivities>({
  startToCloseTimeout: LIMITS.taskActivityTimeoutMs,
  retry: { initialInterval: LIMITS.taskActivityRetryInitialMs, maximumInterval: LIMITS.taskActivityRetryMaxMs },
});

/**
 * The run's outcome as the signal task_run:<task_id>, to every scheduler whose condition
 * reads it (patched: run histories from before this step replay without it).
 */
async function announceOutcome(input: RunInput, status: 'success' | 'failed'): Promise<void> {
  if (!hasPatch(input.patches, OUTCOME_SIGNAL)) return;
  const { event, listeners } = await signals.emitRunOutcome({ taskId: input.taskId, runId: input.runId, status });
  // A listener whose scheduler is not running misses it; its next run outcome carries the streak again.
  if (!event) return;
  for (const id of listeners) await getExternalWorkflowHandle(schedulerWorkflowId(id)).signal(signalEventSignal, event).catch(() => undefined);
}

/** Why an attempt failed, in words for the log. */
function reasonOf(err: unknown): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof TimeoutFailure) return `${RunFailure.TimedOut}: the agent did not answer within timeout_s`;
  if (cause instanceof ApplicationFailure) return `${cause.type ?? 'error'}: ${cause.message}`;
  return (cause as Error)?.message ?? String(cause);
}

export async function taskRunWorkflow(input: RunInput): Promise<RunResult> {
  const task = input.definition;
  const state: RunState = { runId: input.runId, status: 'running', attempt: 0 };
  setHandler(runStateQuery, () => state);
  const inbox = new ResultInbox(input, state);
  // Whether RunStatus is in visibility yet: a current run's only once it waits, retries or fails,
  // so the happy path writes none (STATUS_WHEN_NOTABLE). Read from the input alone, never with
  // patched(): only a starter that gives this patch starts the run without RunStatus=running; a run
  // an older starter began with it must keep it true to the end.
  let statusShown = !input.patches?.includes(STATUS_WHEN_NOTABLE);
  const setStatus = (status: RunState['status']) => {
    state.status = status;
    if (!statusShown && (status === 'running' || status === 'success')) return;
    statusShown = true;
    upsertSearchAttributes([{ key: RunStatusKey, value: status }]);
  };
  const base = { runId: input.runId, taskId: input.taskId, trigger: input.trigger, nominalMs: input.nominalMs };
  // Runs started since issue 15 had their start logged by the starter (TaskClient.startRun).
  const startedMs = input.startedMs ?? Date.now();

  // Each attempt is one activity with no retries of its own: the backoff list below is the ladder.
  const agent = proxyActivities<TaskActivities>({
    startToCloseTimeout: `${task.timeout_s} seconds`,
    retry: { maximumAttempts: 1 },
  });
  // The first attempt, with a successful run's whole finish, as one local activity (issue 15): a
  // fast agent's run is one workflow task. Not for cancel_previous: a workflow task waiting on a
  // local activity sees no cancellation until it returns, and a replaced run must stop at once.
  const firstLocal = task.overlap !== 'cancel_previous' && hasPatch(input.patches, FIRST_ATTEMPT_LOCAL);
  const local = proxyLocalActivities<TaskActivities>({
    startToCloseTimeout: `${task.timeout_s} seconds`,
    retry: { maximumAttempts: 1 },
  });
  /** How far the first attempt's local activity got with a successful run's finish. */
  let finished: { done: NonNullable<FirstAttemptResult['done']>; finishedMs: number } | undefined;
  const call = (attempt: number) => ({ task, runId: input.runId, trigger: input.trigger, nominalMs: input.nominalMs, startedMs, attempt, ...(input.cause ? { cause: input.cause } : {}) });

  /**
   * One attempt's answer: the agent's HTTP answer, or — for an agent that reports later — the
   * result posted to the run, waited for until the attempt's timeout_s is used up. A result
   * that arrives during the call counts first (the agent may post before its 202 reaches us).
   */
  async function attemptAnswer(attempt: number): Promise<AgentAnswer> {
    const attemptStart = Date.now();
    inbox.open(attempt);
    try {
      let direct: AgentAnswer | AwaitingResult;
      try {
        if (attempt === 1 && firstLocal) {
          const r = await local.runFirstAttempt({ call: call(attempt), trigger: input.trigger });
          // A success the activity began to finish is the run's answer (logged there already).
          if (r.done !== undefined) {
            finished = { done: r.done, finishedMs: r.finishedMs! };
            return r.direct as AgentAnswer;
          }
          direct = r.direct;
        } else direct = await agent.runAgent(call(attempt));
      } catch (err) {
        if (inbox.result && !isCancellation(err)) return inbox.result;
        throw err;
      }
      if (inbox.result) return inbox.result;
      if (!isAwaitingResult(direct)) return direct;
      state.waitingFor = direct.detail;
      setStatus('waiting');
      const reported = await inbox.wait(task.timeout_s * 1000 - (Date.now() - attemptStart));
      state.waitingFor = undefined;
      setStatus('running');
      if (reported) return reported;
      throw ApplicationFailure.create({
        type: RunFailure.TimedOut,
        message: `no result reached POST ${resultPath(input.runId)} within timeout_s (${task.timeout_s} s) after ${direct.detail}`,
      });
    } finally {
      inbox.close();
    }
  }

  let answer: AgentAnswer | undefined;
  let lastFailedAnswer: AgentAnswer | undefined;
  let reason = '';
  try {
    if (input.startedMs === undefined) await steps.recordRun({ ...base, status: 'running', startedMs, attempt: 1 });
    for (let attempt = 1; attempt <= task.retry.max_attempts; attempt++) {
      state.attempt = attempt;
      // The answer this attempt got (also a `failed` one): kept in the log, so a result sent again after the run ended is recognised.
      let got: AgentAnswer | undefined;
      try {
        got = await attemptAnswer(attempt);
        if (got.status === 'failed') throw ApplicationFailure.create({ type: RunFailure.AgentReportedFailure, message: got.summary || 'the agent reported status failed' });
        answer = got;
        break;
      } catch (err) {
        if (isCancellation(err)) throw err;
        reason = reasonOf(err);
        state.lastError = reason;
        lastFailedAnswer = got;
        if (attempt < task.retry.max_attempts) {
          const waitS = backoffBeforeAttempt(task.retry, attempt + 1);
          setStatus('retry');
          await steps.recordRun({ ...base, status: 'retry', startedMs, attempt, reason: `attempt ${attempt} failed (${reason}); attempt ${attempt + 1} in ${waitS} s`, result: got });
          await sleep(waitS * 1000);
          setStatus('running');
        }
      }
    }
  } catch (err) {
    if (!isCancellation(err)) throw err;
    // Cancelled (overlap cancel_previous): record it, outside the cancelled scope.
    await CancellationScope.nonCancellable(() =>
      steps.recordRun({ ...base, status: 'failed', startedMs, finishedMs: Date.now(), attempt: state.attempt, reason: `${CANCELLED_REASON_PREFIX} a newer run replaced it (overlap cancel_previous)` }),
    );
    setStatus('failed');
    return { runId: input.runId, status: 'failed', attempts: state.attempt, reason: 'cancelled' };
  }

  const finishedMs = finished?.finishedMs ?? Date.now();
  const attempts = state.attempt;
  if (answer) {
    const step = ['none', 'logged', 'delivered', 'announced'].indexOf(finished?.done ?? 'none');
    if (step < 1) await steps.recordRun({
      ...base,
      status: 'success',
      startedMs,
      finishedMs,
      attempt: attempts,
      processed: answer.processed,
      errorCount: answer.errors.length,
      summary: answer.summary,
      result: answer,
    });
    setStatus('success');
    if (step < 2) await steps.deliverRun({ task, runId: input.runId, nominalMs: input.nominalMs, startedMs, finishedMs, attempt: attempts, status: 'success', answer });
    if (step < 3) await announceOutcome(input, 'success');
    return { runId: input.runId, status: 'success', attempts, answer };
  }

  const finalReason = `failed after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${reason}`;
  await steps.recordRun({ ...base, status: 'failed', startedMs, finishedMs, attempt: attempts, reason: finalReason, needsAttention: true, result: lastFailedAnswer });
  setStatus('failed');
  await steps.deliverRun({ task, runId: input.runId, nominalMs: input.nominalMs, startedMs, finishedMs, attempt: attempts, status: 'failed', reason: finalReason });
  const disabled = await steps.afterFailure({ task, runId: input.runId, reason: finalReason });
  if (disabled) await getExternalWorkflowHandle(input.schedulerId).signal(changedSignal, disabled).catch(() => undefined);
  await announceOutcome(input, 'failed');
  return { runId: input.runId, status: 'failed', attempts, reason: finalReason };
}
