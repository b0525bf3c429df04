/**
 * The built-in `digest` agent: instead of calling an LLM it reads the needs-attention queue
 * (runs that failed for good, or the statuses it names) of the other tasks and answers in
 * the ordinary protocol: processed = the number of runs summarised, errors = the runs (up to
 * max_items), summary = what failed and why. The answer then takes the task's usual path:
 * execution log, deliveries, run memory. The window starts where the digest's previous run
 * started (or since_s back), so consecutive digests cover every failure at least once.
 */
import { DIGEST_DEFAULTS, digestSummary, type DigestAgent } from '../../../lib/domain/tasks/outputs';
import type { AgentAnswer, TaskDefinition } from '../../../lib/domain/tasks';
import type { TaskResultStore } from '../../../lib/store/tasks/results';
import type { TaskStore } from '../../../lib/store/tasks';

/** The protocol's summary limit (lib/domain/tasks/answer.ts). */
const SUMMARY_MAX = 20_000;

export async function runDigest(stores: { tasks: TaskStore; results: TaskResultStore }, task: TaskDefinition, runId: string, nowMs: number): Promise<AgentAnswer> {
  const agent = task.agent as DigestAgent;
  const previous = await stores.tasks.lastStartBefore(task.task_id, runId);
  const sinceMs = agent.since_s !== undefined ? nowMs - agent.since_s * 1000 : previous ?? nowMs - DIGEST_DEFAULTS.first_window_s * 1000;
  const { items, total } = await stores.results.digest({
    statuses: agent.statuses,
    sinceMs,
    untilMs: nowMs,
    taskIds: agent.task_ids,
    excludeTaskId: task.task_id,
    limit: agent.max_items,
  });
  const summary = digestSummary(items, total, sinceMs, task.lang);
  return { task_id: task.task_id, status: 'success', processed: total, errors: items, summary: summary.length > SUMMARY_MAX ? summary.slice(0, SUMMARY_MAX - 1) + '…' : summary, next_action: null };
}
