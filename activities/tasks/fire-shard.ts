/**
 * One fire shard's loop (issue 15, schema/023): the long-running activity behind
 * workflows/tasks/fire-shard.ts. It sleeps until its shard's earliest fire time (at most
 * taskFireShardPollMs, so rows registered meanwhile are seen), claims the due rows, starts
 * their runs through the same fire step as a scheduler's fireRun (overlap policy from the run
 * log, run id `run/<task>/<nominal UTC>` with REJECT_DUPLICATE), and moves each row on to its
 * next fire time in the same transaction. A fire costs Temporal the run's start and nothing of
 * the scheduler: the scheduler workflow sleeps until its task changes.
 *
 * A row too late to be on time (onTimeWindowMs: the worker or the cluster was down) is handed
 * back to the task's scheduler, which applies the misfire policy as it always did. A row whose
 * fire failed (PostgreSQL or Temporal away) stays where it is and is tried again on the next
 * pass however late: it was due on time, so it runs when they return, as fireRun's retries do.
 * Two loops of one shard (a worker presumed dead that was not) are harmless: rows are claimed
 * with SKIP LOCKED and a fire time runs once by its run id.
 */
import { LIMITS } from '../../lib/domain/limits';
import { runId as runIdOf, type TaskDefinition } from '../../lib/domain/tasks';
import { onTimeWindowMs } from '../../lib/domain/tasks/fire-shards';
import type { DueBatch, FireRow, FireScheduleStore } from '../../lib/store/tasks/fire-schedule';
import type { FiresReturned } from '../../workflows/tasks/messages';
import type { FireInput, FireOutcome } from '../../workflows/tasks/messages';

export interface FireShardDeps {
  store: FireScheduleStore;
  /** The scheduler's fire step (overlap policy, start logged, run started). */
  fire: (i: FireInput) => Promise<FireOutcome>;
  /** The fire time after `afterMs` (pure), null when there is none. */
  nextAfter: (d: TaskDefinition, afterMs: number, lastFireMs: number) => Promise<number | null>;
  /** Signals the task's scheduler that its row is handed back (signal fires-returned). */
  handBack: (taskId: string, r: FiresReturned) => Promise<void>;
  warn: (msg: string, err: unknown) => void;
}

export interface ShardLoopControl {
  /** The loop returns at this instant (the workflow starts the next activity). */
  untilMs: number;
  heartbeat: () => void;
  /** Sleeps; throws when the activity is cancelled (worker shutdown). */
  sleep: (ms: number) => Promise<void>;
}

export interface ShardPass {
  fired: number;
  returned: number;
}

/** Runs `fn` over `items`, at most `limit` at once. */
async function eachLimited<T>(items: T[], limit: number, fn: (t: T) => Promise<void>): Promise<void> {
  let i = 0;
  const lane = async () => {
    while (i < items.length) await fn(items[i++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

export async function runFireShard(deps: FireShardDeps, queue: string, shard: number, ctl: ShardLoopControl): Promise<ShardPass> {
  const total: ShardPass = { fired: 0, returned: 0 };
  /** Fire times whose fire failed: tried again however late (they were due on time). */
  const retrying = new Set<string>();
  /** Fires of the current pass that failed. */
  let failed = 0;

  async function fireRow(batch: DueBatch, row: FireRow, back: FireRow[]): Promise<void> {
    ctl.heartbeat();
    const nominalMs = row.nextFireMs!;
    const key = `${row.taskId}@${row.version}@${nominalMs}`;
    const now = Date.now();
    if (now - nominalMs > onTimeWindowMs(row.definition) && !retrying.has(key)) {
      await batch.giveBack(row.taskId);
      back.push(row);
      return;
    }
    // The next fire time first: pure, so nothing is started when it cannot be answered.
    const next = await deps.nextAfter(row.definition, nominalMs, now);
    try {
      await deps.fire({ taskId: row.taskId, runId: runIdOf(row.taskId, nominalMs), definition: row.definition, nominalMs, trigger: 'schedule', mayWait: false });
    } catch (err) {
      failed++;
      retrying.add(key);
      deps.warn(`fire of ${row.taskId} at ${new Date(nominalMs).toISOString()} failed; trying again`, err);
      return;
    }
    retrying.delete(key);
    await batch.advance(row.taskId, nominalMs, next, now);
    total.fired++;
  }

  /** Whether the next pass claims at once: after a full batch, or on waking at a fire time. */
  let claimNow = false;
  while (Date.now() < ctl.untilMs) {
    ctl.heartbeat();
    if (!claimNow) {
      // An idle shard costs one indexed read per poll, not a claim: the claim is a transaction of
      // three round trips, and four shards polling twice a second made it most of an idle
      // worker's CPU (docs/operations.md, issue 17). A read that fails goes on to the claim,
      // whose failure is reported and paused on.
      const next = await deps.store.nextDue(queue, shard).catch(() => Date.now());
      if (next === undefined || next > Date.now()) {
        const wait = Math.min(LIMITS.taskFireShardPollMs, next === undefined ? Infinity : next - Date.now(), ctl.untilMs - Date.now());
        if (wait > 0) await ctl.sleep(wait);
        claimNow = next !== undefined && next <= Date.now();
        continue;
      }
    }
    claimNow = false;
    let claimed = 0;
    failed = 0;
    const back: FireRow[] = [];
    try {
      await deps.store.claimDue(queue, shard, Date.now(), LIMITS.taskFireShardBatch, async (batch) => {
        claimed = batch.rows.length;
        await eachLimited(batch.rows, LIMITS.taskFireShardStartsAtOnce, (row) => fireRow(batch, row, back));
      });
    } catch (err) {
      deps.warn(`shard ${shard}: a pass failed; trying again`, err);
      await ctl.sleep(LIMITS.taskActivityRetryInitialMs);
      continue;
    }
    // Handed back only once committed: the scheduler registering again must find the row returned.
    for (const row of back) {
      try {
        await deps.handBack(row.taskId, { version: row.version, cursorMs: row.cursorMs, ...(row.lastFireMs === undefined ? {} : { lastFireMs: row.lastFireMs }) });
        total.returned++;
      } catch (err) {
        deps.warn(`shard ${shard}: could not hand ${row.taskId} back to its scheduler; trying again`, err);
        await deps.store.takeBackReturn(row.taskId, row.version).catch(() => undefined);
      }
    }
    if (claimed >= LIMITS.taskFireShardBatch) {
      claimNow = true;
      continue;
    }
    let next: number | undefined;
    try {
      next = await deps.store.nextDue(queue, shard);
    } catch (err) {
      deps.warn(`shard ${shard}: could not read its next fire time`, err);
    }
    // Due rows left that this pass did not fire (their fire failed, another loop holds them, or
    // their task has a newer version to register): looked at again after a pause, not at once.
    const stalled = failed > 0 || (claimed === 0 && next !== undefined && next <= Date.now());
    const untilNext = stalled ? (failed > 0 ? LIMITS.taskActivityRetryInitialMs : LIMITS.taskFireShardPollMs) : next === undefined ? Infinity : next - Date.now();
    const wait = Math.min(failed > 0 ? Infinity : LIMITS.taskFireShardPollMs, untilNext, ctl.untilMs - Date.now());
    if (wait > 0) await ctl.sleep(wait);
    claimNow = !stalled && next !== undefined && next <= Date.now();
  }
  return total;
}
