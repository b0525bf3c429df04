/**
 * Which agent a task request acts for, from its key: the one place the key's agent id
 * (`principal.agentId`, keys bound to agents) becomes a task's `created_by`. A key's agent
 * wins over the `created_by` a body claims (api/tasks/definition.ts), so an agent's key
 * cannot create tasks outside the agent bounds by leaving `created_by` out or naming another.
 * Until keys carry an agent, this finds none and the body's `created_by` is the source.
 */
import type { Request } from 'express';

export function keyAgentId(req: Request): string | undefined {
  const principal = (req as Request & { principal?: { agentId?: string } }).principal;
  return principal?.agentId || undefined;
}
