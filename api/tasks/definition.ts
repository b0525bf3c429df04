/**
 * A whole task definition from a request body: the contract's shape (CreateTaskBody, every
 * default filled in) and then the domain rules. One function for POST /v1/tasks, the result
 * of a PATCH, and a follow-up task an agent's next_action asks for (worker/follow-ups.ts),
 * so all three are validated alike, also against the operator's rules (lib/task-policy.ts:
 * outgoing URLs, agent secret names). Nothing is stored on a refusal.
 */
import { randomUUID } from 'node:crypto';
import { DomainError, ErrorCode } from '../../lib/domain/errors';
import { digestProblems } from '../../lib/domain/task-outputs';
import { taskDefinitionProblems, type TaskDefinition } from '../../lib/domain/tasks';
import { taskPolicyProblems, type TaskPolicy } from '../../lib/task-policy';
import { parse } from '../http';
import { CreateTaskBody } from './contract';

/** `parent_run_id` is never read from the body: only the system sets it (on a follow-up, and kept across a PATCH). */
export function definitionOf(body: unknown, nowMs: number, policy: TaskPolicy, system: { parent_run_id?: string } = {}): { definition: TaskDefinition; enabled: boolean } {
  const b = parse(CreateTaskBody, body);
  const { enabled, ...rest } = b;
  const id = rest.task_id ?? `task-${randomUUID()}`;
  const definition = { ...rest, task_id: id, name: rest.name ?? id, ...(system.parent_run_id ? { parent_run_id: system.parent_run_id } : {}) } as TaskDefinition;
  const problems = [...taskDefinitionProblems(definition), ...digestProblems(definition), ...taskPolicyProblems(definition, policy)];
  if (definition.trigger.type === 'at' && Date.parse(definition.trigger.at) <= nowMs) problems.push({ field: 'trigger.at', reason: 'is in the past' });
  if (problems.length) throw new DomainError(ErrorCode.Validation, problems.map((p) => `${p.field}: ${p.reason}`).join('; '), problems);
  return { definition, enabled };
}
