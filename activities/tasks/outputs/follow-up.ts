/**
 * next_action follow-ups: a run's answer may hand work to another agent with
 * {"type": "follow_up", "task": {...}}. The activity side only asks a FollowUpCreator (built
 * by the worker from the API's definition parser and the task client, worker/follow-ups.ts)
 * and records the outcome as a delivery-like row (type follow_up): a refused definition is
 * recorded there, never a run failure.
 */
import type { FollowUpAction } from '../../../lib/domain/tasks/outputs';

/** The task_deliveries `target` of a run's follow-up (delivery targets are 0-9, the task's session 10 at most; alerts use 1000). */
export const FOLLOW_UP_TARGET = 100;

export interface FollowUpRequest {
  parentRunId: string;
  parentTaskId: string;
  /** When the parent run finished: a follow-up without a trigger runs once, delay_s later. */
  finishedMs: number;
  action: FollowUpAction;
}

export interface FollowUpCreator {
  /**
   * Creates the follow-up task once per parent run (a repeated call finds the one it made);
   * `ok: false` with the reason for a definition that is refused. Throws only on errors a
   * retry may fix (Temporal or PostgreSQL unreachable).
   */
  create(r: FollowUpRequest): Promise<{ ok: true; taskId: string } | { ok: false; reason: string }>;
}
