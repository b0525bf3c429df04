/**
 * A whole task definition from a request body: the schema's shape (CreateTaskBody,
 * lib/task-definition-schema.ts, every default filled in) and then the domain rules. One
 * function for POST /v1/tasks, the result of a PATCH (both in api/tasks/routes.ts),
 * and a follow-up task an agent's next_action asks for (worker/follow-ups.ts), so all three
 * are validated alike, also against the operator's rules (lib/task-policy.ts: outgoing URLs,
 * agent secret names). Nothing is stored on a refusal. Below the API and the worker.
 */
import { randomUUID } from 'node:crypto';
import { DomainError, ErrorCode, type FieldError } from './domain/errors';
import { agentBoundProblems } from './agent-task-bounds';
import { parse } from './domain/platform/refusals';
import { withStagger } from './domain/tasks/stagger';
import { digestProblems } from './domain/tasks/outputs';
import { taskDefinitionProblems, taskDefinitionWarnings, type TaskDefinition } from './domain/tasks';
import { AgentSchema, CreateTaskBody } from './task-definition-schema';
import { taskPolicyProblems, type TaskPolicy } from './task-policy';

/** Operator settings a definition is completed with (lib/config.ts). */
export interface DefinitionDefaults {
  /** TASK_DEFAULT_AGENT: the agent a task gets when its `agent` names no `type`; its own fields win. */
  agent?: Record<string, unknown>;
  /** TASK_STAGGER_TOP_OF_HOUR_S: the stagger window of a top-of-hour cron that names none (0: none). */
  staggerTopOfHourS?: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The body with the default agent under an `agent` that names no type (the seed's example has only persona and prompt_template). */
function withDefaultAgent(body: unknown, defaults: DefinitionDefaults): unknown {
  if (!defaults.agent || !isObject(body) || !isObject(body.agent) || 'type' in body.agent) return body;
  return { ...body, agent: { ...defaults.agent, ...body.agent } };
}

/** Why a configured default agent is not one a task could use, or undefined (checked at start-up). */
export function defaultAgentProblem(agent: Record<string, unknown>): string | undefined {
  const r = AgentSchema.safeParse({ prompt_template: 'x', ...agent });
  return r.success ? undefined : r.error.issues.map((i) => `${['agent', ...i.path].join('.')}: ${i.message}`).join('; ');
}

/**
 * `parent_run_id` is never read from the body: only the system sets it (on a follow-up, and
 * kept across a PATCH). `warnings` name what is stored as sent but unused. `createdBy` is the
 * agent the task is for: the system's (the key's agent, a follow-up's parent, the stored
 * creator on a PATCH) before the body's `created_by`; it is not part of the definition, and
 * with one the operator's agent bounds apply (policy.agentBounds).
 */
export function definitionOf(
  body: unknown,
  nowMs: number,
  policy: TaskPolicy,
  system: { parent_run_id?: string; created_by?: string } = {},
  defaults: DefinitionDefaults = {},
): { definition: TaskDefinition; enabled: boolean; warnings: FieldError[]; createdBy: string | undefined } {
  const b = parse(CreateTaskBody, withDefaultAgent(body, defaults));
  const { enabled, created_by: claimed, ...rest } = b;
  const createdBy = system.created_by ?? claimed;
  const id = rest.task_id ?? `task-${randomUUID()}`;
  const definition = { ...rest, task_id: id, name: rest.name ?? id, ...(system.parent_run_id ? { parent_run_id: system.parent_run_id } : {}) } as TaskDefinition;
  if (definition.trigger.type === 'cron') definition.trigger = withStagger(definition.trigger, id, defaults.staggerTopOfHourS ?? 0);
  const problems = [...taskDefinitionProblems(definition), ...digestProblems(definition), ...taskPolicyProblems(definition, policy)];
  if (createdBy && policy.agentBounds) problems.push(...agentBoundProblems(definition, policy.agentBounds, nowMs));
  if (definition.trigger.type === 'at' && Date.parse(definition.trigger.at) <= nowMs) problems.push({ field: 'trigger.at', reason: 'is in the past' });
  if (problems.length) throw new DomainError(ErrorCode.Validation, problems.map((p) => `${p.field}: ${p.reason}`).join('; '), problems);
  return { definition, enabled, warnings: taskDefinitionWarnings(definition), createdBy };
}
