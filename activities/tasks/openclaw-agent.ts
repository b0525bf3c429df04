/**
 * The request a task run sends an OpenClaw Gateway: POST <url><hooks_path>/agent, OpenClaw's
 * hook for starting an isolated agent turn. Its shape is OpenClaw's (`message` required;
 * `name`, `agentId`, `sessionKey`, `wakeMode`, `deliver`, `model`, `timeoutSeconds`
 * optional), authenticated with `Authorization: Bearer <hooks.token>`, and deduplicated by the
 * Gateway through `Idempotency-Key` (one key per run and attempt: a retry is a new turn, a
 * re-sent request of the same attempt is not). The Gateway answers 200 `{ok, runId}` (202 for
 * hook queues) once the turn has started; the agent reports its result through the callback
 * the message names. Pure: the caller sends it through the SSRF guard.
 */
import { LIMITS } from '../../lib/domain/limits';
import { callbackInstructions } from '../../lib/domain/tasks/results';
import type { OpenClawAgent, TaskDefinition } from '../../lib/domain/tasks';

export interface OpenClawHookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface OpenClawTurn {
  task: TaskDefinition;
  agent: OpenClawAgent;
  token: string;
  runId: string;
  attempt: number;
  /** Persona, time context, run memory and the answer protocol (buildSystemPrompt). */
  system: string;
  /** The rendered prompt template. */
  prompt: string;
  /** Where the agent posts its result. */
  resultUrl: string;
}

export const openclawIdempotencyKey = (runId: string, attempt: number): string => `${runId}#${attempt}`.slice(0, LIMITS.idempotencyKeyMaxChars);

export function openclawHookRequest(t: OpenClawTurn): OpenClawHookRequest {
  const zh = t.task.lang === 'zh';
  const message = [t.system, zh ? '## 任务' : '## Task', t.prompt, zh ? '## 回报结果' : '## Reporting the result', callbackInstructions(t.resultUrl, t.runId, t.attempt, t.task.lang)].join('\n');
  const body = {
    message,
    name: `Timekeeper: ${t.task.name}`,
    ...(t.agent.agent_id ? { agentId: t.agent.agent_id } : {}),
    ...(t.agent.session_key ? { sessionKey: t.agent.session_key } : {}),
    ...(t.agent.model ? { model: t.agent.model } : {}),
    wakeMode: 'now',
    deliver: t.agent.deliver,
    timeoutSeconds: t.task.timeout_s,
  };
  return {
    url: `${t.agent.url.replace(/\/+$/, '')}/${t.agent.hooks_path.replace(/^\/+|\/+$/g, '')}/agent`,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${t.token}`, 'idempotency-key': openclawIdempotencyKey(t.runId, t.attempt) },
    body: JSON.stringify(body),
  };
}
