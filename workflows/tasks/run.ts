/**
 * One durable workflow per run (workflow id `run/<task_id>/<nominal UTC time>`): log the
 * start, ask the agent (activity runAgent, bounded by the task's timeout_s per attempt),
 * retry along the backoff list on durable timers, log the outcome, deliver, and on a final
 * failure put the run in the needs-attention queue, alert, and auto-disable the task after
 * too many failures in a row. The run's state shows in the Temporal UI as RunStatus.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  TimeoutFailure,
  getExternalWorkflowHandle,
  isCancellation,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { TaskActivities } from '../../activities/tasks';
import { CANCELLED_REASON_PREFIX, backoffBeforeAttempt, type AgentAnswer } from '../../lib/domain/tasks';
import { RunInput, RunResult, RunState, RunStatusKey, changedSignal, runStateQuery } from './messages';

// Short: these are single inserts (and outgoing deliveries); one lost with a crashed worker is retried soon.
const log = proxyActivities<TaskActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/** Why an attempt failed, in words for the log. */
function reasonOf(err: unknown): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof TimeoutFailure) return 'timed_out: the agent did not answer within timeout_s';
  if (cause instanceof ApplicationFailure) return `${cause.type ?? 'error'}: ${cause.message}`;
  return (cause as Error)?.message ?? String(cause);
}

export async function taskRunWorkflow(input: RunInput): Promise<RunResult> {
  const task = input.definition;
  const state: RunState = { runId: input.runId, status: 'running', attempt: 0 };
  setHandler(runStateQuery, () => state);
  const setStatus = (status: RunState['status']) => {
    state.status = status;
    upsertSearchAttributes([{ key: RunStatusKey, value: status }]);
  };
  const base = { runId: input.runId, taskId: input.taskId, trigger: input.trigger, nominalMs: input.nominalMs };
  const startedMs = Date.now();

  // Each attempt is one activity with no retries of its own: the backoff list below is the ladder.
  const agent = proxyActivities<TaskActivities>({
    startToCloseTimeout: `${task.timeout_s} seconds`,
    retry: { maximumAttempts: 1 },
  });

  let answer: AgentAnswer | undefined;
  let reason = '';
  try {
    await log.recordRun({ ...base, status: 'running', startedMs, attempt: 1 });
    for (let attempt = 1; attempt <= task.retry.max_attempts; attempt++) {
      state.attempt = attempt;
      try {
        const a = await agent.runAgent({ task, runId: input.runId, trigger: input.trigger, nominalMs: input.nominalMs, startedMs, attempt });
        if (a.status === 'failed') throw ApplicationFailure.create({ type: 'agent_reported_failure', message: a.summary || 'the agent reported status failed' });
        answer = a;
        break;
      } catch (err) {
        if (isCancellation(err)) throw err;
        reason = reasonOf(err);
        state.lastError = reason;
        if (attempt < task.retry.max_attempts) {
          const waitS = backoffBeforeAttempt(task.retry, attempt + 1);
          setStatus('retry');
          await log.recordRun({ ...base, status: 'retry', startedMs, attempt, reason: `attempt ${attempt} failed (${reason}); attempt ${attempt + 1} in ${waitS} s` });
          await sleep(waitS * 1000);
          setStatus('running');
        }
      }
    }
  } catch (err) {
    if (!isCancellation(err)) throw err;
    // Cancelled (overlap cancel_previous): record it, outside the cancelled scope.
    await CancellationScope.nonCancellable(() =>
      log.recordRun({ ...base, status: 'failed', startedMs, finishedMs: Date.now(), attempt: state.attempt, reason: `${CANCELLED_REASON_PREFIX} a newer run replaced it (overlap cancel_previous)` }),
    );
    setStatus('failed');
    return { runId: input.runId, status: 'failed', attempts: state.attempt, reason: 'cancelled' };
  }

  const finishedMs = Date.now();
  const attempts = state.attempt;
  if (answer) {
    await log.recordRun({
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
    await log.deliverRun({ task, runId: input.runId, nominalMs: input.nominalMs, startedMs, finishedMs, attempt: attempts, status: 'success', answer });
    return { runId: input.runId, status: 'success', attempts, answer };
  }

  const finalReason = `failed after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${reason}`;
  await log.recordRun({ ...base, status: 'failed', startedMs, finishedMs, attempt: attempts, reason: finalReason, needsAttention: true });
  setStatus('failed');
  await log.deliverRun({ task, runId: input.runId, nominalMs: input.nominalMs, startedMs, finishedMs, attempt: attempts, status: 'failed', reason: finalReason });
  const disabled = await log.afterFailure({ task, runId: input.runId, reason: finalReason });
  if (disabled) await getExternalWorkflowHandle(input.schedulerId).signal(changedSignal, disabled).catch(() => undefined);
  return { runId: input.runId, status: 'failed', attempts, reason: finalReason };
}
