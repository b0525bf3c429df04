/**
 * The run workflow's inbox for results reported later (the `result` update): it is open while
 * an attempt is in progress — during the agent call, since an agent may report before its 202
 * reaches us, and while the run waits afterwards — and holds at most one result per attempt.
 * The first result of an attempt counts; the same result sent again (same answer, canonical
 * JSON) is answered with the first one's outcome; anything else is refused by the validator
 * with the run's current state, so a refusal never reaches the workflow's history.
 */
import { condition, setHandler } from '@temporalio/workflow';
import { canonicalize } from '../../lib/domain/canonical-json';
import { answersLater, outcomeOf, resultErrors, type ResultOutcome, type ResultReport, type RunWaitState } from '../../lib/domain/tasks/results';
import type { AgentAnswer } from '../../lib/domain/tasks';
import { RunInput, RunState, resultUpdate } from './messages';

export class ResultInbox {
  /** The attempt results are taken for now, if any. */
  private openAttempt: number | undefined;
  private received: AgentAnswer | undefined;
  private readonly accepted: { key: string; outcome: ResultOutcome }[] = [];

  constructor(
    private readonly input: RunInput,
    private readonly state: RunState,
  ) {
    setHandler(resultUpdate, (r) => this.accept(r), { validator: (r) => this.validate(r) });
  }

  /** Starts taking results for `attempt`. */
  open(attempt: number): void {
    this.openAttempt = attempt;
    this.received = undefined;
  }

  /** Stops taking results (the attempt's outcome is decided); later ones are refused as not waiting. */
  close(): void {
    this.openAttempt = undefined;
  }

  /** The result accepted for the open attempt, if one arrived. */
  get result(): AgentAnswer | undefined {
    return this.received;
  }

  /** Waits up to `ms` for the open attempt's result; undefined when none came in time. */
  async wait(ms: number): Promise<AgentAnswer | undefined> {
    if (this.received === undefined && ms > 0) await condition(() => this.received !== undefined, ms);
    return this.received;
  }

  private waitState(): RunWaitState {
    return { run_status: this.state.status, attempt: this.state.attempt, waiting: this.openAttempt !== undefined };
  }

  private previous(r: ResultReport): ResultOutcome | undefined {
    const key = canonicalize(r.answer);
    return this.accepted.find((a) => a.key === key && (r.attempt === undefined || r.attempt === a.outcome.attempt))?.outcome;
  }

  private validate(r: ResultReport): void {
    if (this.previous(r)) return;
    const { definition: task, runId } = this.input;
    if (!answersLater(task.agent.type)) throw resultErrors.answersDirectly(runId, task.agent.type, this.waitState()).toFailure();
    if (r.answer.task_id !== task.task_id) throw resultErrors.otherTask(runId, task.task_id, this.waitState()).toFailure();
    if (this.openAttempt === undefined) throw resultErrors.notWaiting(runId, this.waitState(), `it is ${this.state.status}`).toFailure();
    if (r.attempt !== undefined && r.attempt !== this.openAttempt) {
      throw resultErrors.notWaiting(runId, this.waitState(), `attempt ${r.attempt} is over; attempt ${this.openAttempt} is in progress`).toFailure();
    }
    if (this.received !== undefined) throw resultErrors.alreadyAccepted(runId, this.openAttempt, this.waitState()).toFailure();
  }

  private accept(r: ResultReport): ResultOutcome {
    const before = this.previous(r);
    if (before) return { ...before, deduplicated: true };
    const attempt = this.openAttempt!;
    this.received = r.answer;
    const outcome: ResultOutcome = {
      run_id: this.input.runId,
      task_id: this.input.taskId,
      attempt,
      outcome: outcomeOf(r.answer, attempt, this.input.definition.retry.max_attempts),
      deduplicated: false,
    };
    this.accepted.push({ key: canonicalize(r.answer), outcome });
    return outcome;
  }
}
