/**
 * The typed client for scheduled tasks: create, change, pause, resume, delete and trigger a
 * task. Every change is written to the task history first (the store decides conflicts by
 * version), then sent to the task's scheduler workflow with signal-with-start, so a scheduler
 * that is missing (never started, or lost) is started again from the stored state. SDK
 * failures come out as DomainErrors, classified by type. Runs started from here (trigger,
 * backfill, and the scheduler's local activity through worker/run-control.ts) all go through
 * startRun: their start logged, then the run workflow started.
 */
import { Client, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import type { SignalEvent } from '../lib/domain/signals';
import { canonicalize } from '../lib/domain/canonical-json';
import { LIMITS } from '../lib/domain/limits';
import { metrics, observeTaskLateness } from '../lib/metrics';
import { resultErrors, type ResultOutcome, type ResultReport } from '../lib/domain/tasks/results';
import type { Pool } from 'pg';
import { DomainError, ErrorCode } from '../lib/domain/errors';
import { TaskAction, manualRunId, runId as runIdOf, schedulerWorkflowId, taskErrors, type TaskDefinition } from '../lib/domain/tasks';
import { TaskStore, type TaskRow } from '../lib/store/tasks';
import type { TaskSecrets } from '../lib/task-secrets';
import { OpenRunStore } from '../lib/store/tasks/open-runs';
import { FireScheduleStore } from '../lib/store/tasks/fire-schedule';
import { fireShardOf, firesShared } from '../lib/domain/tasks/fire-shards';
import { fireTimes } from '../lib/domain/tasks/schedule';
import { FiresReturned, RunQueues, RunStart, SchedulerState, TaskChange, changedSignal, firesReturnedSignal, resultUpdate, runFinishedSignal, schedulerStateQuery, signalEventSignal } from '../workflows/tasks/messages';
import { domainErrorOf, isDeadline, workflowGone } from './failures';
import { RUN_PATCHES, taskRunWorkflow } from '../workflows/tasks/run';
import { signalWithStartScheduler, startHandedBack, startScheduler } from './task-scheduler';

export interface TaskClientOptions {
  client: Client;
  pool: Pool;
  /** The main task queue: schedulers run here. */
  taskQueue: string;
  runQueues: RunQueues;
}

export class TaskClient {
  private readonly store: TaskStore;
  private readonly openRuns: OpenRunStore;
  private readonly fireSchedule: FireScheduleStore;

  constructor(private readonly opts: TaskClientOptions) {
    this.store = new TaskStore(opts.pool);
    this.openRuns = new OpenRunStore(opts.pool);
    this.fireSchedule = new FireScheduleStore(opts.pool);
  }

  /**
   * Stores a validated definition (version 1), with the agent that created it if one did. A
   * plain cron or interval task (lib/domain/tasks/fire-shards.ts) is put on the shared fire
   * schedule in the same statement and starts no workflow: its fire shard fires it, and its
   * scheduler is started from the stored task by its first change or a late fire time handed
   * back (notify, returnFires). A plain task created paused needs neither until it is resumed.
   * Every other task starts its scheduler here (no signal: nothing runs for a new id).
   */
  async create(definition: TaskDefinition, enabled: boolean, createdBy?: string): Promise<TaskRow> {
    const taskId = definition.task_id;
    if (firesShared(definition)) {
      const nowMs = Date.now();
      const fires = enabled
        ? { queue: this.opts.taskQueue, shard: fireShardOf(taskId, LIMITS.taskFireShards), cursorMs: nowMs, nextFireMs: fireTimes(definition.trigger, definition.calendar, nowMs, 1)[0] ?? null }
        : undefined;
      return this.store.appendHistory({ taskId, expectedSeq: 0, action: TaskAction.Create, definition, enabled, createdBy, fires });
    }
    const row = await this.store.appendHistory({ taskId, expectedSeq: 0, action: TaskAction.Create, definition, enabled, createdBy });
    try {
      await startScheduler(this.opts, row.task_id, changeOf(row), changedSignal);
    } catch (err) {
      throw this.classify(err);
    }
    return row;
  }

  async update(current: TaskRow, definition: TaskDefinition, enabled?: boolean): Promise<TaskRow> {
    return this.change(current, TaskAction.Update, definition, enabled ?? current.enabled);
  }

  pause(current: TaskRow): Promise<TaskRow> {
    return this.change(current, TaskAction.Pause, current.definition, false);
  }

  resume(current: TaskRow): Promise<TaskRow> {
    return this.change(current, TaskAction.Resume, current.definition, true);
  }

  /**
   * Deletes the task: its scheduler takes it off the shared fire schedule and ends (started from
   * the stored task for that when none runs: a plain task); history and runs stay readable.
   */
  async delete(current: TaskRow): Promise<TaskRow> {
    if (current.deleted) throw taskErrors.deleted(current.task_id);
    const row = await this.store.appendHistory({ taskId: current.task_id, expectedSeq: current.version, action: TaskAction.Delete, definition: current.definition, enabled: false, deleted: true });
    await this.notify(row);
    return row;
  }

  /**
   * Seals the plain HMAC secrets of every task not deleted whose current definition still holds
   * some (stored before sealing existed): a new `update` version with the same definition, its
   * secrets sealed, sent to the scheduler so later runs carry only ciphertext. Returns the ids
   * of the tasks changed. Older history rows and the histories of past workflows keep the plain
   * values (append-only): treat those secrets as exposed and rotate them.
   */
  async sealPlainSecrets(secrets: TaskSecrets): Promise<string[]> {
    const sealed: string[] = [];
    for (let after: string | undefined; ; ) {
      const page = await this.store.listTasks({ limit: LIMITS.pageMax, order: 'id', after: after === undefined ? undefined : { createdUs: 0, taskId: after } });
      for (const t of page) {
        const d = secrets.sealedPlain(t.definition);
        if (!d) continue;
        await this.change(t, TaskAction.Update, d, t.enabled);
        sealed.push(t.task_id);
      }
      if (page.length < LIMITS.pageMax) return sealed;
      after = page[page.length - 1].task_id;
    }
  }

  /** Runs the task now, with a run id of its own (the article's testing tip); works on a paused task too. */
  async trigger(current: TaskRow): Promise<{ runId: string }> {
    if (current.deleted) throw taskErrors.deleted(current.task_id);
    const nowMs = Date.now();
    const runId = manualRunId(current.task_id, nowMs);
    await this.startRun({ definition: current.definition, runId, nominalMs: nowMs, trigger: 'manual' });
    return { runId };
  }

  /**
   * An agent's result for a run that waits for it: the run workflow's `result` update decides
   * (its validator refuses with the run's state). When the workflow has ended, the execution
   * log answers: the same result it recorded gets the same outcome again, anything else 409.
   */
  async reportResult(runId: string, report: ResultReport): Promise<ResultOutcome> {
    try {
      return await this.opts.client.withDeadline(Date.now() + LIMITS.runResultUpdateMs, () =>
        this.opts.client.workflow.getHandle(runId).executeUpdate(resultUpdate, { args: [report] }),
      );
    } catch (err) {
      const refused = domainErrorOf(err);
      if (refused) throw refused;
      if (workflowGone(err)) return this.resultAfterRun(runId, report);
      if (isDeadline(err)) {
        throw new DomainError(ErrorCode.Unavailable, `the run did not take the result within ${LIMITS.runResultUpdateMs} ms (is a worker running?); it may still take it: send the same result again`).withExtra({
          may_be_stored: true,
        });
      }
      throw new DomainError(ErrorCode.Unavailable, `the run could not be reached: ${(err as Error).message}; send the same result again`);
    }
  }

  private async resultAfterRun(runId: string, report: ResultReport): Promise<ResultOutcome> {
    const run = await this.store.getRun(runId);
    if (!run) throw taskErrors.runNotFound(runId);
    const key = canonicalize(report.answer);
    const same = (await this.store.runLog(runId)).find(
      (row) => row.result !== null && row.result !== undefined && canonicalize(row.result) === key && (report.attempt === undefined || report.attempt === row.attempt),
    );
    if (same && same.status !== 'running' && same.status !== 'skipped') {
      return { run_id: runId, task_id: run.task_id, attempt: same.attempt, outcome: same.status, deduplicated: true };
    }
    throw resultErrors.notWaiting(runId, { run_status: run.status, attempt: run.attempt, waiting: false }, `it is ${run.status}`);
  }

  /**
   * Runs past fire times (backfillFireTimes decided which), each under the scheduled run's
   * own id `run/<task_id>/<nominal UTC>`, so a fire time that already ran is not run again:
   * the run log says it was started (also after Temporal's retention forgot the workflow),
   * or Temporal refuses the id (REJECT_DUPLICATE: started meanwhile, by the scheduler or a
   * concurrent backfill). Works on a paused task too; the overlap policy does not apply, the
   * runs queue for the task-run worker slots.
   */
  async backfill(current: TaskRow, fireTimesMs: number[]): Promise<{ started: number[]; alreadyRun: number[] }> {
    if (current.deleted) throw taskErrors.deleted(current.task_id);
    const d = current.definition;
    const ids = new Map(fireTimesMs.map((t) => [t, runIdOf(d.task_id, t)]));
    const logged = await this.store.startedRunIds([...ids.values()]);
    const started: number[] = [];
    const alreadyRun = fireTimesMs.filter((t) => logged.has(ids.get(t)!));
    const todo = fireTimesMs.filter((t) => !logged.has(ids.get(t)!));
    for (let i = 0; i < todo.length; i += LIMITS.taskBackfillStartsAtOnce) {
      const batch = todo.slice(i, i + LIMITS.taskBackfillStartsAtOnce);
      const outcomes = await Promise.all(batch.map((t) => this.startRun({ definition: d, runId: ids.get(t)!, nominalMs: t, trigger: 'backfill' })));
      batch.forEach((t, j) => (outcomes[j] ? started : alreadyRun).push(t));
    }
    const order = (a: number, b: number) => a - b;
    return { started: started.sort(order), alreadyRun: alreadyRun.sort(order) };
  }

  /**
   * The scheduler's own view (next fire time), or undefined when it does not answer. Its
   * running runs are the log's open runs: since issue 15 the scheduler no longer follows its
   * runs (it starts them from a local activity), so they are read where overlap reads them.
   * A task on the shared fire schedule (schema/023) fires from there: its next fire time,
   * cursor and fires so far are the row's. A row at the task's `version` is the whole answer
   * and the scheduler is not asked: that version is registered, so the task is enabled, plain
   * and fires from the row, and its scheduler, if one still runs, knows nothing the row and
   * the log do not (since ENDS_AT_REST it has usually ended; a query to a closed workflow is
   * answered by a worker replaying its history).
   */
  async schedulerState(taskId: string, version: number): Promise<SchedulerState | undefined> {
    try {
      const [open, row] = await Promise.all([this.openRuns.openRuns(taskId), this.fireSchedule.get(taskId)]);
      if (row && row.version === version) {
        return { taskId, version, enabled: true, deleted: false, cursorMs: row.cursorMs, nextFireMs: row.nextFireMs, running: open.map((r) => r.runId), buffered: null, fires: row.fires };
      }
      const state = await this.opts.client
        .withDeadline(Date.now() + LIMITS.schedulerQueryTimeoutMs, () => this.opts.client.workflow.getHandle(schedulerWorkflowId(taskId)).query(schedulerStateQuery))
        .catch((err: unknown) => {
          if (err instanceof WorkflowNotFoundError) return undefined;
          throw err;
        });
      // No scheduler and no row at this version: nothing fires the task (paused, or a change not yet taken in by a scheduler that is being started).
      if (!state) return undefined;
      const shared = row && row.version === state.version && state.enabled && !state.deleted ? { nextFireMs: row.nextFireMs, cursorMs: Math.max(state.cursorMs, row.cursorMs), fires: state.fires + row.fires } : {};
      return { ...state, ...shared, running: [...new Set([...state.running, ...open.map((r) => r.runId)])] };
    } catch {
      return undefined;
    }
  }

  /**
   * Starts one run: logs its start (`running`, attempt 1: a run counts as running from here
   * until its finish is logged, whatever its workflow does) and starts its workflow with
   * REJECT_DUPLICATE, so a run id runs once. The log row comes first: a run that finishes at
   * once can never have its finish followed by a later `running` row, and a start retried
   * after a crash finds its row (ON CONFLICT DO NOTHING). Undefined when that run id was
   * already started. The scheduler's local activity starts its runs through this too
   * (worker/run-control.ts).
   */
  async startRun(r: RunStart): Promise<{ startedMs: number } | undefined> {
    const d = r.definition;
    const startedMs = Date.now();
    await this.store.recordRun({ runId: r.runId, taskId: d.task_id, status: 'running', trigger: r.trigger, nominalMs: r.nominalMs, startedMs, attempt: 1 });
    try {
      await this.opts.client.workflow.start(taskRunWorkflow, {
        workflowId: r.runId,
        taskQueue: d.priority === 'core' ? this.opts.runQueues.core : this.opts.runQueues.default,
        args: [{ taskId: d.task_id, runId: r.runId, definition: d, nominalMs: r.nominalMs, trigger: r.trigger, schedulerId: schedulerWorkflowId(d.task_id), startedMs, patches: RUN_PATCHES, ...(r.cause ? { cause: r.cause } : {}) }],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        // No search attributes (issue 15, stop 38): with them (and the finish's upsert) a run cost
        // Temporal 14-22 % more CPU (docs/architecture.md). The Temporal UI finds a task's runs by
        // `WorkflowId STARTS_WITH "run/<task_id>/"`, and the run sets RunStatus itself once it
        // waits, retries or fails (workflows/tasks/run.ts).
      });
      // Counted where every start goes through (the scheduler's fireRun, trigger, backfill), once per run.
      metrics.taskRuns.inc({ status: 'running', trigger: r.trigger });
      observeTaskLateness(r.trigger, r.nominalMs, startedMs);
      return { startedMs };
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return undefined;
      throw this.classify(err);
    }
  }

  /** Requests cancellation of a run (overlap cancel_previous); a closed or unknown run is left alone. */
  async cancelRun(runId: string): Promise<void> {
    try {
      await this.opts.client.workflow.getHandle(runId).cancel();
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
  }

  /** How the run's workflow closed (TERMINATED, TIMED_OUT, …; NOT_FOUND when Temporal has none), undefined while it runs. */
  async runClosed(runId: string): Promise<string | undefined> {
    try {
      const status = (await this.opts.client.workflow.getHandle(runId).describe()).status.name;
      return status === 'RUNNING' ? undefined : status;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return 'NOT_FOUND';
      throw err;
    }
  }

  /** Tells a task's scheduler that a run it waits for has finished; a scheduler not running is left alone (it finds out when it starts). */
  async wakeScheduler(taskId: string, runId: string): Promise<void> {
    await this.signalScheduler(taskId, (h) => h.signal(runFinishedSignal, runId));
  }

  /** A signal event (a run's outcome) for a listening task's scheduler; one not running misses it (its condition reads the streak again). */
  async deliverEvent(taskId: string, event: SignalEvent): Promise<void> {
    await this.signalScheduler(taskId, (h) => h.signal(signalEventSignal, event));
  }

  /**
   * Hands the task's row of the shared fire schedule back to its scheduler (too late to fire on
   * time). A plain task has none running until it changes: one is started from the stored task
   * with the fire time handed back in its input (it applies the misfire policy, then registers
   * the task again). A task changed since has its change to start or tell its scheduler, which
   * registers the new version.
   */
  async returnFires(taskId: string, r: FiresReturned): Promise<void> {
    const tell = (h: WorkflowHandle) => h.signal(firesReturnedSignal, r);
    if (await this.signalScheduler(taskId, tell)) return;
    const row = await this.store.getTask(taskId);
    if (!row || row.deleted || !row.enabled || row.version !== r.version) return;
    try {
      await startHandedBack(this.opts, taskId, changeOf(row), r);
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      // Started meanwhile (a change): told as a running one would be.
      await this.signalScheduler(taskId, tell);
    }
  }

  /** Sends to the task's scheduler; false when none runs (not found), which callers decide about. */
  private async signalScheduler(taskId: string, send: (h: WorkflowHandle) => Promise<void>): Promise<boolean> {
    try {
      await send(this.opts.client.workflow.getHandle(schedulerWorkflowId(taskId)));
      return true;
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      return false;
    }
  }

  private async change(current: TaskRow, action: TaskAction, definition: TaskDefinition, enabled: boolean): Promise<TaskRow> {
    if (current.deleted) throw taskErrors.deleted(current.task_id);
    const row = await this.store.appendHistory({ taskId: current.task_id, expectedSeq: current.version, action, definition, enabled });
    await this.notify(row);
    return row;
  }

  /**
   * Tells the scheduler the stored state; starts it from that state when it is not running.
   * Also for a change stored whose scheduler was not reached (worker/follow-ups.ts).
   */
  async notify(row: TaskRow): Promise<void> {
    const change = changeOf(row);
    try {
      // Started from the stored change itself, which the `changed` signal then repeats (a running
      // scheduler takes it; a new one ignores it as not newer). Was started at version 0 so that
      // the signal applied: that woke every new scheduler once more and computed its first fire
      // time twice (two local activities per create).
      await signalWithStartScheduler(this.opts, row.task_id, change, changedSignal, change);
    } catch (err) {
      throw this.classify(err);
    }
  }

  private classify(err: unknown): DomainError {
    if (err instanceof DomainError) return err;
    return new DomainError(ErrorCode.Unavailable, `the task was stored, but its scheduler could not be reached: ${(err as Error).message}; send the change again (PATCH with the same fields) to retry`);
  }
}

const changeOf = (row: TaskRow): TaskChange => ({ version: row.version, definition: row.definition, enabled: row.enabled, deleted: row.deleted });
