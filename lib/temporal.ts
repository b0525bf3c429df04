/** Temporal set-up shared by the API, the tests and the tools. */
import type { ConnectionLike } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { LIMITS } from './domain/limits';
import { SEARCH_ATTRIBUTES } from './domain/platform/search-attributes';

/**
 * Registers the Keyword search attributes sessions are tagged with, when missing. The dev
 * server gets them on its command line; a production cluster gets them here or from its
 * set-up job, whichever runs first.
 */
export async function ensureSearchAttributes(connection: ConnectionLike, namespace: string): Promise<void> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = SEARCH_ATTRIBUTES.filter((name) => !(name in (existing.customAttributes ?? {})));
  if (missing.length === 0) return;
  const Keyword = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
  try {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((n) => [n, Keyword])),
    });
  } catch (err) {
    // Another process added them between our list and our add.
    if (!/already exists/i.test((err as Error).message)) throw err;
  }
}

/**
 * "ok" when some worker polled the task queue for workflow tasks recently (DescribeTaskQueue),
 * else the reason: /readyz reports it, and a write that timed out names it as its cause.
 */
export async function workerPolling(connection: ConnectionLike, namespace: string, taskQueue: string): Promise<string> {
  try {
    const r = await connection.workflowService.describeTaskQueue({
      namespace,
      taskQueue: { name: taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
      taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    });
    const now = Date.now();
    const recent = (r.pollers ?? []).some((p) => {
      const t = p.lastAccessTime;
      const ms = t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0;
      return now - ms <= LIMITS.workerPollerFreshMs;
    });
    return recent ? 'ok' : `no worker has polled task queue "${taskQueue}" in the last ${LIMITS.workerPollerFreshMs / 1000} s`;
  } catch (e) {
    return `unknown: ${(e as Error)?.message || String(e)}`;
  }
}
