/**
 * The bounds an operator sets for tasks an agent creates for itself (issue 22): the shortest
 * interval between fire times, the most tasks per agent, the agent and delivery types and the
 * hosts such a task may use (AGENT_TASK_* / AGENT_TASKS_MAX, lib/config.ts). They apply to
 * every task whose creator is an agent (`created_by`), at create and at PATCH, in the API
 * (api/tasks/routes.ts), so a model cannot step around them by calling REST instead of its
 * tools. Each refusal names its bound (the variable), so the model can read what to change.
 */
import type { FieldError } from './domain/errors';
import { fireTimes } from './domain/tasks/schedule';
import type { TaskDefinition } from './domain/tasks';
import { outgoingUrls } from './task-policy';

export interface AgentTaskBounds {
  /** AGENT_TASK_MIN_INTERVAL_S: the shortest time between two fire times (0: no bound). */
  minIntervalS: number;
  /** AGENT_TASKS_MAX: the most tasks (not deleted) one agent may have (0: no bound). */
  maxTasksPerAgent: number;
  /** AGENT_TASK_AGENT_TYPES: the agent types allowed (empty: all). */
  agentTypes: readonly string[];
  /** AGENT_TASK_DELIVERY_TYPES: the delivery types allowed (empty: all). */
  deliveryTypes: readonly string[];
  /** AGENT_TASK_HOSTS: the hosts an agent, delivery or alert URL may name (empty: any the outbound policy lets through). */
  hosts: readonly string[];
}

export const NO_AGENT_BOUNDS: AgentTaskBounds = { minIntervalS: 0, maxTasksPerAgent: 0, agentTypes: [], deliveryTypes: [], hosts: [] };

/** Fire times a cron's gap is measured over: enough to see the pattern of a day's schedule (e.g. `0,1 9 * * *`). */
const CRON_GAP_SAMPLE = 50;

/** The shortest time (seconds) between fire times the trigger allows, or undefined where none repeats on a clock (at, delay, condition). */
function shortestGapS(d: TaskDefinition, nowMs: number): number | undefined {
  const t = d.trigger;
  if (t.type === 'interval') return t.every_s;
  if (t.type !== 'cron') return undefined;
  const times = fireTimes(t, d.calendar, nowMs, CRON_GAP_SAMPLE);
  let gap: number | undefined;
  for (let i = 1; i < times.length; i++) gap = Math.min(gap ?? Infinity, (times[i] - times[i - 1]) / 1000);
  return gap;
}

const hostOf = (url: string) => new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();

/** What the definition of an agent-created task breaks, by field, naming the bound. */
export function agentBoundProblems(d: TaskDefinition, b: AgentTaskBounds, nowMs: number): FieldError[] {
  const out: FieldError[] = [];
  if (b.minIntervalS > 0) {
    const gap = shortestGapS(d, nowMs);
    if (gap !== undefined && gap < b.minIntervalS) {
      const field = d.trigger.type === 'interval' ? 'trigger.every_s' : 'trigger.expression';
      out.push({ field, reason: `fires every ${gap} s at the shortest; AGENT_TASK_MIN_INTERVAL_S lets an agent's task fire at most every ${b.minIntervalS} s` });
    }
  }
  if (b.agentTypes.length && !b.agentTypes.includes(d.agent.type)) {
    out.push({ field: 'agent.type', reason: `${d.agent.type} is not allowed for an agent's task; AGENT_TASK_AGENT_TYPES allows ${b.agentTypes.join(', ')}` });
  }
  if (b.deliveryTypes.length) {
    d.delivery.forEach((t, i) => {
      if (!b.deliveryTypes.includes(t.type)) out.push({ field: `delivery.${i}.type`, reason: `${t.type} is not allowed for an agent's task; AGENT_TASK_DELIVERY_TYPES allows ${b.deliveryTypes.join(', ')}` });
    });
  }
  if (b.hosts.length) {
    for (const { field, url } of outgoingUrls(d)) {
      const host = hostOf(url);
      if (!b.hosts.includes(host)) out.push({ field, reason: `host ${host} is not allowed for an agent's task; AGENT_TASK_HOSTS allows ${b.hosts.join(', ')}` });
    }
  }
  return out;
}

/** The refusal of one task too many, or undefined. `existing`: the agent's tasks now. */
export function agentTaskCountProblem(agentId: string, existing: number, b: AgentTaskBounds): FieldError | undefined {
  if (b.maxTasksPerAgent <= 0 || existing < b.maxTasksPerAgent) return undefined;
  return { field: 'created_by', reason: `agent ${agentId} already has ${existing} tasks; AGENT_TASKS_MAX allows ${b.maxTasksPerAgent} per agent (cancel one first)` };
}
