/**
 * Creates the follow-up tasks that runs ask for in next_action (activities/tasks/outputs/
 * follow-up.ts): the definition is parsed and checked exactly as POST /v1/tasks would
 * (lib/task-definition.ts), linked to its parent run (parent_run_id), stored and started
 * through the task client. Once per parent run: without its own task_id the follow-up's id
 * is derived from the parent run id, and a task that already carries this parent run is the
 * one an earlier attempt made (its scheduler is signalled again in case that attempt
 * stopped between storing and starting it).
 */
import { createHash } from 'node:crypto';
import type { FollowUpCreator, FollowUpRequest } from '../activities/tasks/outputs/follow-up';
import { agentTaskCountProblem } from '../lib/agent-task-bounds';
import type { TaskClient } from '../clients/tasks';
import { DomainError, ErrorCode } from '../lib/domain/errors';
import type { TaskRow, TaskStore } from '../lib/store/tasks';
import { definitionOf } from '../lib/task-definition';
import type { TaskPolicy } from '../lib/task-policy';
import type { TaskSecrets } from '../lib/task-secrets';

/** `<parent task>.fu-<16 hex of the parent run id>`: one id per parent run, within TASK_ID_RE's 128 characters. */
export const followUpTaskId = (parentTaskId: string, parentRunId: string) => `${parentTaskId.slice(0, 100)}.fu-${createHash('sha256').update(parentRunId).digest('hex').slice(0, 16)}`;

/** Seconds after the parent run a follow-up without a trigger runs. */
const DEFAULT_DELAY_S = 1;

export function followUpCreator(tasks: TaskClient, store: TaskStore, policy: TaskPolicy, secrets: TaskSecrets): FollowUpCreator {
  async function found(row: TaskRow, r: FollowUpRequest) {
    if (row.definition.parent_run_id !== r.parentRunId) return { ok: false as const, reason: `next_action.task.task_id: ${row.task_id} is already used by another task` };
    if (!row.deleted) await tasks.notify(row);
    return { ok: true as const, taskId: row.task_id };
  }

  return {
    async create(r) {
      const body: Record<string, unknown> = { ...r.action.task };
      const taskId = typeof body.task_id === 'string' ? body.task_id : followUpTaskId(r.parentTaskId, r.parentRunId);
      const existing = await store.getTask(taskId);
      if (existing) return found(existing, r);
      // A follow-up belongs to its parent's agent, whatever the answer asks (keys bound to agents see it with its parent).
      delete body.agent_id;
      const owner = (await store.getTask(r.parentTaskId))?.definition.agent_id;
      if (owner !== undefined) body.agent_id = owner;
      const nowMs = Date.now();
      if (body.trigger === undefined) {
        const at = Math.max(r.finishedMs + (r.action.delay_s ?? DEFAULT_DELAY_S) * 1000, nowMs + DEFAULT_DELAY_S * 1000);
        body.trigger = { type: 'at', at: new Date(at).toISOString() };
      }
      // A follow-up of an agent's task is that agent's too: it carries the creator and keeps the agent bounds.
      const createdBy = (await store.getTask(r.parentTaskId))?.created_by ?? undefined;
      let parsed: ReturnType<typeof definitionOf>;
      try {
        parsed = definitionOf({ ...body, task_id: taskId }, nowMs, policy, { parent_run_id: r.parentRunId, created_by: createdBy });
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        const fields = err.errors.map((e) => `next_action.task.${e.field}: ${e.reason}`).join('; ');
        return { ok: false, reason: (fields || err.message).slice(0, 900) };
      }
      if (parsed.createdBy && policy.agentBounds) {
        const tooMany = agentTaskCountProblem(parsed.createdBy, await store.countCreatedBy(parsed.createdBy), policy.agentBounds);
        if (tooMany) return { ok: false, reason: `next_action.task.${tooMany.field}: ${tooMany.reason}` };
      }
      try {
        const row = await tasks.create(secrets.forStorage(parsed.definition), parsed.enabled, parsed.createdBy);
        return { ok: true, taskId: row.task_id };
      } catch (err) {
        // Another attempt of the same activity got there first.
        if (err instanceof DomainError && err.code === ErrorCode.TaskExists) {
          const row = await store.getTask(taskId);
          if (row) return found(row, r);
        }
        throw err;
      }
    },
  };
}
