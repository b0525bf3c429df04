/**
 * Results reported later: an agent that cannot answer within its HTTP call (a webhook agent
 * answering 202, an OpenClaw Gateway's /hooks/agent, which only starts an agent turn) reports
 * its answer through POST /v1/runs/{run_id}/result, a Workflow Update on the run. This module
 * holds what both sides agree on: which agents answer later, the callback's path and the
 * instructions the agent reads, the outcome a result leads to, and the refusals (409 with the
 * run's current state). Sandbox-safe: the run workflow's update validator uses it.
 */
import { DomainError, ErrorCode } from '../errors';
import type { AgentAnswer } from './index';

/** Agent types whose result may arrive through the callback; `openai` answers in its HTTP response only. */
export const CALLBACK_AGENT_TYPES = ['webhook', 'openclaw'] as const;
export const answersLater = (agentType: string): boolean => (CALLBACK_AGENT_TYPES as readonly string[]).includes(agentType);

/** What the runAgent activity returns when the agent will report its result through the callback. */
export interface AwaitingResult {
  awaiting_result: true;
  /** What the agent said, for the run's state and the timeout reason (e.g. OpenClaw's run id). */
  detail: string;
}
export const isAwaitingResult = (x: AgentAnswer | AwaitingResult): x is AwaitingResult => (x as AwaitingResult).awaiting_result === true;

/** The request body: the answer protocol object, optionally with the attempt it answers. */
export interface ResultReport {
  answer: AgentAnswer;
  /** The attempt the result belongs to (the run context names it); default: the attempt waiting now. */
  attempt?: number;
}

/** What a result leads to. `retry`: the agent reported `failed` and attempts remain. */
export type ResultOutcomeKind = 'success' | 'retry' | 'failed';

export interface ResultOutcome {
  run_id: string;
  task_id: string;
  attempt: number;
  outcome: ResultOutcomeKind;
  /** True when this exact result had been accepted before: the answer is the first one's, nothing happened twice. */
  deduplicated: boolean;
}

export function outcomeOf(answer: AgentAnswer, attempt: number, maxAttempts: number): ResultOutcomeKind {
  if (answer.status !== 'failed') return 'success';
  return attempt < maxAttempts ? 'retry' : 'failed';
}

/** The callback path of a run (the run id has slashes, so it is percent-encoded). */
export const resultPath = (runId: string): string => `/v1/runs/${encodeURIComponent(runId)}/result`;

/** The part of the agent's message that tells it how to report back. */
export function callbackInstructions(url: string, runId: string, attempt: number, lang: 'en' | 'zh'): string {
  if (lang === 'zh') {
    return [
      `完成后，不要在对话中回答：把结果（上面输出协议中的 JSON 对象，可加 "attempt": ${attempt}）以 POST 发送到 ${url}（Content-Type: application/json；若 Timekeeper 要求 API 密钥，加 Authorization: Bearer <密钥>）。`,
      `运行编号 ${runId}。同一结果重复发送只算一次。`,
    ].join('\n');
  }
  return [
    `When you are done, do not answer in the chat: POST the result (the JSON object of the answer protocol above, optionally with "attempt": ${attempt}) to ${url} with Content-Type: application/json (and Authorization: Bearer <key> if Timekeeper requires API keys).`,
    `This is run ${runId}. Sending the same result again is counted once.`,
  ].join('\n');
}

/** The run's state as a refusal carries it (`extra`), so the agent sees why. */
export interface RunWaitState {
  run_status: string;
  attempt: number;
  waiting: boolean;
}

export const resultErrors = {
  notWaiting: (runId: string, s: RunWaitState, why: string) =>
    new DomainError(ErrorCode.RunNotWaiting, `run ${runId} is not waiting for a result: ${why}`, [], { ...s }),
  answersDirectly: (runId: string, agentType: string, s: RunWaitState) =>
    new DomainError(ErrorCode.RunNotWaiting, `run ${runId} does not take results through this route: its agent (${agentType}) answers in its HTTP response`, [], { ...s }),
  otherTask: (runId: string, taskId: string, s: RunWaitState) =>
    new DomainError(ErrorCode.ResultConflict, `task_id must be "${taskId}", the task of run ${runId}`, [{ field: 'task_id', reason: `must be "${taskId}"` }], { ...s }),
  alreadyAccepted: (runId: string, attempt: number, s: RunWaitState) =>
    new DomainError(ErrorCode.ResultConflict, `run ${runId} already accepted a different result for attempt ${attempt}; the first result counts`, [], { ...s }),
};
