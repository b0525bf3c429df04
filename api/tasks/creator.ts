/**
 * Which agent a task request acts for, from its key: the one place the key's agent id
 * (`principal.agentId`, keys bound to agents, api/auth.ts) becomes a task's `created_by`. A key's
 * agent wins over the `created_by` a body claims (lib/task-definition.ts), so an agent's key
 * cannot create tasks outside the agent bounds by leaving `created_by` out or naming another.
 * A key bound to several agents (or none) names no single agent: the body's `created_by` is the source.
 */
import type { Response } from 'express';
import { principalOf } from '../auth';

export function keyAgentId(res: Response): string | undefined {
  return principalOf(res).agentId || undefined;
}
