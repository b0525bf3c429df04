/**
 * The operator's rules a task definition must keep, beyond its shape and the domain rules
 * (lib/task-definition.ts applies them at create, PATCH and follow-up): every outgoing URL
 * (agent, deliveries, alert) that is an IP literal must be one the SSRF guard would reach
 * (lib/platform/outbound.ts urlProblem: refused early, by address, in any spelling), and an agent's
 * `token_env` / `api_key_env` may name only a secret the operator registered for agents
 * (AGENT_SECRETS), never one of the process's own variables. The worker checks both again
 * when the run happens (the guard on every hop, readSecret against the same list).
 */
import type { AgentTaskBounds } from './agent-task-bounds';
import type { FieldError } from './domain/errors';
import type { TaskDefinition } from './domain/tasks';
import { urlProblem } from './platform/outbound';

export interface TaskPolicy {
  /** OUTBOUND_ALLOW_HOSTS: hosts outgoing requests may reach although private or local. */
  outboundAllowHosts: readonly string[];
  /** AGENT_SECRETS: the variables an agent's token_env / api_key_env may name. */
  agentSecrets: readonly string[];
  /** AGENT_TASK_* / AGENT_TASKS_MAX: what a task an agent creates may do (lib/agent-task-bounds.ts). Unset: no bounds. */
  agentBounds?: AgentTaskBounds;
}

/** The secret-name rule, stated once for the 400 and the run-time refusal alike. */
export const AGENT_SECRET_RULE = 'must name a secret registered for agents (AGENT_SECRETS on the API and the worker); Timekeeper\'s own variables are never readable';

/** Every URL a task sends to, with the field that names it. */
export function outgoingUrls(d: TaskDefinition): { field: string; url: string }[] {
  const out: { field: string; url: string }[] = [];
  const a = d.agent;
  if (a.type === 'openai') out.push({ field: 'agent.base_url', url: a.base_url });
  if (a.type === 'webhook' || a.type === 'openclaw') out.push({ field: 'agent.url', url: a.url });
  d.delivery.forEach((t, i) => t.type === 'webhook' && out.push({ field: `delivery.${i}.url`, url: t.url }));
  if (d.alert) out.push({ field: 'alert.url', url: d.alert.url });
  return out;
}

export function taskPolicyProblems(d: TaskDefinition, p: TaskPolicy): FieldError[] {
  const out: FieldError[] = [];
  for (const { field, url } of outgoingUrls(d)) {
    const problem = urlProblem(url, p.outboundAllowHosts);
    if (problem) out.push({ field, reason: problem });
  }
  const a = d.agent;
  const named = a.type === 'openclaw' ? { field: 'agent.token_env', name: a.token_env } : a.type === 'openai' && a.api_key_env ? { field: 'agent.api_key_env', name: a.api_key_env } : undefined;
  if (named && !p.agentSecrets.includes(named.name)) out.push({ field: named.field, reason: `${AGENT_SECRET_RULE}: ${named.name} is not registered` });
  return out;
}
