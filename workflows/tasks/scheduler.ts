/**
 * One durable scheduler per task (workflow id `task/<task_id>`): it sleeps on a durable timer
 * until the next fire time, then starts one run workflow for that fire time with id
 * `run/<task_id>/<nominal UTC time>` (REJECT_DUPLICATE: a fire time runs at most once, across
 * worker restarts, replays and duplicate triggers). It applies the overlap policy against the
 * runs it started, and the misfire policy when it wakes late (after downtime). Fire times come
 * from a local activity (croner lives outside the sandbox; the answers are in history).
 *
 * Since issue 15 (patch START_RUNS_BY_ACTIVITY) runs are not child workflows: the local
 * activity fireRun decides the overlap policy from the run log and starts the run, so a fire is
 * one workflow task; a buffer_one fire time waits for the signal run-finished, which a run
 * sends only when a wake was asked for (task_run_wakes). docs/architecture.md, "How a
 * scheduled task fires", has the design and the counts.
 *
 * Since patch SHARED_FIRES a plain cron or interval task (lib/domain/tasks/fire-shards.ts) does
 * not fire from here at all: the scheduler registers it on the shared fire schedule
 * (schema/023, local activity registerFires) and sleeps until the task changes; a fire shard
 * starts its runs. A fire time the shard finds too late is handed back (signal
 * fires-returned) and fired here under the misfire policy, then the task is registered again.
 *
 * Since stop 33 a plain task's create writes its row itself and starts no scheduler: one is
 * started from the stored task by its first change or a hand-back (SchedulerInput.onSchedule:
 * the row is its own; SchedulerInput.returned: the fire time handed back).
 *
 * Since patch ENDS_AT_REST a scheduler that has registered its plain task on the shared fire
 * schedule, with nothing of its own in flight, ends: the schedule fires the task, and the next
 * change or hand-back starts a scheduler again from the stored task (the row keeps the cursor,
 * the last start and the fires). A plain task therefore holds no workflow at rest, whether or
 * not it ever changed.
 */
import {
  ChildWorkflowHandle,
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  startChild,
} from '@temporalio/workflow';
import type { SignalActivities } from '../../activities/signals';
import type { TaskActivities } from '../../activities/tasks';
import { LIMITS } from '../../lib/domain/limits';
import { triggerSignalNames } from '../../lib/domain/tasks/conditions';
import { dueAt, nextWakeMs, signalStateFor, takeSignal } from '../../lib/domain/tasks/signal-triggers';
import type { SignalEvent } from '../../lib/domain/signals';
import { isSignalTrigger, runId as runIdOf, schedulerWorkflowId, type RunTrigger } from '../../lib/domain/tasks';
import { firesShared, misfireGraceMs, onTimeWindowMs } from '../../lib/domain/tasks/fire-shards';
import { RunStatusKey, TaskIdKey } from '../../lib/domain/platform/search-attributes';
import { FiresReturned, NextAsk, RunInput, SchedulerInput, SchedulerState, TaskChange, changedSignal, firesReturnedSignal, runFinishedSignal, schedulerStateQuery, signalEventSignal } from './messages';
import { taskRunWorkflow } from './run';
import { hasPatch } from '../platform/patches';

const { taskFireTimes } = proxyLocalActivities<TaskActivities>({ startToCloseTimeout: LIMITS.taskActivityTimeoutMs });
// Starting a run is a PostgreSQL insert and a Temporal start: retried while either is down (the fire time waits, then runs).
const { fireRun, watchRuns, registerFires, unregisterFires } = proxyLocalActivities<TaskActivities>({
  startToCloseTimeout: LIMITS.taskFireTimeoutMs,
  retry: { initialInterval: LIMITS.taskActivityRetryInitialMs, maximumInterval: LIMITS.taskFireRetryMaxMs },
});

/**
 * Issue 15: runs are started by the local activity fireRun (overlap decided from the run log),
 * not as child workflows. Histories from before it replay on the child-workflow path.
 */
export const START_RUNS_BY_ACTIVITY = 'task-runs-started-by-activity';
/** fireRun answers the fire time after the one it fired: one local activity per fire, not two (taskFireTimes). */
export const FIRE_ANSWERS_NEXT = 'task-fire-answers-next';
/** Plain cron and interval tasks fire from the shared fire schedule (schema/023), not from this workflow's timers. */
export const SHARED_FIRES = 'task-fires-shared';
/** A scheduler ends once its plain task is registered on the shared fire schedule (no workflow at rest). */
export const ENDS_AT_REST = 'task-scheduler-ends-at-rest';
/** The patches of this code, given to every scheduler it starts or continues (SchedulerInput.patches). */
export const SCHEDULER_PATCHES = [START_RUNS_BY_ACTIVITY, FIRE_ANSWERS_NEXT, SHARED_FIRES, ENDS_AT_REST];
const { signalsToCatchUp } = proxyLocalActivities<SignalActivities>({ startToCloseTimeout: LIMITS.taskActivityTimeoutMs });
const { recordSkipped, completeTask } = proxyActivities<TaskActivities>({
  startToCloseTimeout: LIMITS.taskActivityTimeoutMs,
  retry: { initialInterval: LIMITS.taskActivityRetryInitialMs, maximumInterval: LIMITS.taskActivityRetryMaxMs },
});

export async function taskSchedulerWorkflow(input: SchedulerInput): Promise<void> {
  /** The task as this scheduler knows it (definition, version, enabled, deleted) and its cursor: what continue-as-new carries over. */
  // What the starter says about the shared fire schedule is for this run's start only (not carried across continue-as-new).
  const { onSchedule, returned: handedBack, ...given } = input;
  const task: SchedulerInput = { ...given };
  let changed = false;
  let fires = 0;
  const running = new Map<string, ChildWorkflowHandle<typeof taskRunWorkflow>>();
  // Runs being started (startChild not yet answered) count as running: without this, a fire
  // that lands while a buffered run is starting would see no run and start a second one.
  let starting = 0;
  const busy = () => running.size + starting;
  let buffered: { nominalMs: number; trigger: RunTrigger; extra?: { runId?: string; cause?: string } } | undefined;
  /** Runs are started by fireRun (START_RUNS_BY_ACTIVITY): set at the first fire time that takes that path. */
  let viaActivity = false;
  /** fireRun answers the next fire time (FIRE_ANSWERS_NEXT): set at the first fire time that asks. */
  let asksNext = false;
  /**
   * The fire times fireRun answered (none or the next one) for the task at `version`: the loop's
   * taskFireTimes when no change came since (a change is the only other writer of the cursor and
   * last start, and always raises the version).
   */
  let known: { version: number; times: number[] } | undefined;
  /** run-finished signals since the buffered fire time was last tried (a run it waited for has logged its finish). */
  let wakes = 0;
  setHandler(runFinishedSignal, () => {
    wakes++;
  });
  let nextFireMs: number | null = null;
  /** Took the SHARED_FIRES path: set at the first plain schedule that asks. */
  let shared = false;
  /**
   * The task's row is on the shared fire schedule (at task.version), or may be (at an earlier
   * one): started from the stored task while a plain task fired from the schedule with no
   * scheduler (SchedulerInput.onSchedule), the row is this scheduler's to take out.
   */
  let registered = onSchedule === true;
  /** Started by the schedule's hand-back: that fire time, taken once by fireFromShard (before registering again). */
  let startedReturned = handedBack;
  /** The shared fire schedule handed the task back (a fire time too late to be on time). */
  let returned: FiresReturned | undefined;
  setHandler(firesReturnedSignal, (r: FiresReturned) => {
    if (registered && r.version === task.version) returned = r;
  });
  /** Signals not yet taken in (delay and condition triggers); a paused task drops them. */
  const inbox: SignalEvent[] = [];
  let signalsTaken = 0;
  setHandler(signalEventSignal, (e: SignalEvent) => {
    if (task.enabled && !task.deleted && isSignalTrigger(task.definition.trigger)) inbox.push(e);
  });

  setHandler(changedSignal, (c: TaskChange) => {
    if (c.version <= task.version) return;
    const resumed = c.enabled && !task.enabled;
    task.version = c.version;
    task.definition = c.definition;
    task.enabled = c.enabled;
    task.deleted = c.deleted;
    // A new definition or a resume counts from now: nothing missed while paused is made up.
    task.cursorMs = Math.max(task.cursorMs, Date.now());
    if (resumed) task.lastFireMs = undefined;
    changed = true;
  });
  setHandler(
    schedulerStateQuery,
    (): SchedulerState => ({
      taskId: task.taskId,
      version: task.version,
      enabled: task.enabled,
      deleted: task.deleted,
      cursorMs: task.cursorMs,
      nextFireMs,
      running: [...running.keys()],
      buffered: buffered?.nominalMs ?? null,
      fires: (task.firesBefore ?? 0) + fires,
    }),
  );

  /** A run other than the schedule's `run/<task>/<nominal>` (a delay run) names itself, and may say why it woke. */
  type RunExtra = { runId?: string; cause?: string };
  const skip = (runs: ({ nominalMs: number; reason: string; trigger: RunTrigger } & RunExtra)[]) =>
    runs.length
      ? recordSkipped({ taskId: task.taskId, runs: runs.map((r) => ({ nominalMs: r.nominalMs, reason: r.reason, trigger: r.trigger, runId: r.runId ?? runIdOf(task.taskId, r.nominalMs) })) })
      : Promise.resolve();

  async function start(nominalMs: number, trigger: RunTrigger, extra: RunExtra = {}): Promise<void> {
    const id = extra.runId ?? runIdOf(task.taskId, nominalMs);
    const d = task.definition;
    const args: RunInput = { taskId: task.taskId, runId: id, definition: d, nominalMs, trigger, schedulerId: schedulerWorkflowId(task.taskId), ...(extra.cause ? { cause: extra.cause } : {}) };
    starting++;
    try {
      const child = await startChild(taskRunWorkflow, {
        workflowId: id,
        taskQueue: d.priority === 'core' ? task.runQueues.core : task.runQueues.default,
        args: [args],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        typedSearchAttributes: [
          { key: TaskIdKey, value: task.taskId },
          { key: RunStatusKey, value: 'running' },
        ],
      });
      running.set(id, child);
      fires++;
      void child.result().then(onDone(id), onDone(id));
    } catch (err) {
      // Already started (a duplicate trigger, a backfill, or a manual start of this id): it runs once.
      if ((err as Error).name !== 'WorkflowExecutionAlreadyStartedError') throw err;
    } finally {
      starting--;
    }
  }

  const onDone = (id: string) => () => {
    running.delete(id);
    // On the fireRun path a buffered fire time is tried again on run-finished (or the recheck timer).
    if (buffered && busy() === 0 && !viaActivity) {
      const b = buffered;
      buffered = undefined;
      void start(b.nominalMs, b.trigger, b.extra);
    }
  };

  /**
   * The fireRun path: one local activity applies the overlap policy against the runs the log
   * says are running and starts the run; a buffer_one fire time it leaves waiting is kept here
   * and tried again when a run it waits for finishes (run-finished) or at the recheck.
   */
  async function fireByActivity(nominalMs: number, trigger: RunTrigger, extra: RunExtra, mayWait: boolean, next?: NextAsk): Promise<number | null | undefined> {
    const d = task.definition;
    const runId = extra.runId ?? runIdOf(task.taskId, nominalMs);
    const r = await fireRun({ taskId: task.taskId, runId, definition: d, nominalMs, trigger, mayWait, ...(extra.cause ? { cause: extra.cause } : {}), ...(next ? { next } : {}) });
    if (r.outcome === 'started') fires++;
    else if (r.outcome === 'waiting') buffered = { nominalMs, trigger, extra };
    return r.next;
  }

  /** The fire time waiting under buffer_one, tried again (it may wait again). */
  async function tryBuffered(): Promise<void> {
    wakes = 0;
    if (!buffered) return;
    const b = buffered;
    buffered = undefined;
    await fireByActivity(b.nominalMs, b.trigger, b.extra ?? {}, true);
  }

  /**
   * Waits up to `ms` for `until` (or a change); on the fireRun path a buffered fire time is
   * tried whenever a run it waits for finishes, and at least every taskBufferedRecheckMs (a
   * wake lost with a crashed worker). True when `until` held.
   */
  async function waitFor(until: () => boolean, ms: number | undefined): Promise<boolean> {
    const end = ms === undefined ? undefined : Date.now() + ms;
    for (;;) {
      if (!viaActivity || !buffered) return ms === undefined ? condition(until).then(() => true) : condition(until, Math.max(1, end! - Date.now()));
      const left = end === undefined ? LIMITS.taskBufferedRecheckMs : Math.min(end - Date.now(), LIMITS.taskBufferedRecheckMs);
      if (left <= 0) return false;
      const held = await condition(() => until() || wakes > 0, left);
      if (until()) return true;
      if (!held && end !== undefined && Date.now() >= end) return false;
      await tryBuffered();
    }
  }

  /** Waits (fireRun path) until the log says the task's runs have finished, or the task changes: a wake is asked for each open run. */
  async function runsFinished(): Promise<void> {
    while (!changed) {
      wakes = 0;
      if ((await watchRuns({ taskId: task.taskId })) === 0) return;
      await condition(() => changed || wakes > 0, LIMITS.taskBufferedRecheckMs);
    }
  }

  /**
   * The overlap policy decides whether this fire time starts a run now, later, or never. With
   * `next` (fireRun path) the answer is the fire time after it (null: none), else undefined.
   */
  async function fire(nominalMs: number, trigger: RunTrigger, extra: RunExtra = {}, next?: NextAsk): Promise<number | null | undefined> {
    if (viaActivity || hasPatch(input.patches, START_RUNS_BY_ACTIVITY)) {
      viaActivity = true;
      return fireByActivity(nominalMs, trigger, extra, !buffered, next);
    }
    await fireByChild(nominalMs, trigger, extra);
    return undefined;
  }

  /** The child-workflow path of histories from before START_RUNS_BY_ACTIVITY. */
  async function fireByChild(nominalMs: number, trigger: RunTrigger, extra: RunExtra): Promise<void> {
    const d = task.definition;
    if (busy() === 0) return start(nominalMs, trigger, extra);
    switch (d.overlap) {
      case 'allow':
        if (busy() < d.max_concurrency) return start(nominalMs, trigger, extra);
        return skip([{ nominalMs, trigger, ...extra, reason: `overlap allow: ${busy()} runs already running (max_concurrency ${d.max_concurrency})` }]);
      case 'buffer_one':
        if (!buffered) {
          buffered = { nominalMs, trigger, extra };
          return;
        }
        return skip([{ nominalMs, trigger, ...extra, reason: 'overlap buffer_one: a run is running and another is already waiting' }]);
      case 'cancel_previous':
        await Promise.all([...running.keys()].map((id) => getExternalWorkflowHandle(id).cancel().catch(() => undefined)));
        return start(nominalMs, trigger, extra);
      case 'skip':
      default:
        return skip([{ nominalMs, trigger, ...extra, reason: `overlap skip: the previous run (${[...running.keys()][0]}) is still running` }]);
    }
  }

  /**
   * Delay and condition triggers (lib/domain/tasks/signal-triggers.ts decides): take signals in,
   * sleep on a durable timer until the next waiting run or condition check, start what is
   * due; until the task changes. Pausing drops waiting runs (nothing is made up).
   */
  async function signalTriggerLoop(): Promise<void> {
    const t = task.definition.trigger;
    if (!isSignalTrigger(t)) return;
    const fresh = task.signalState === undefined;
    let st = signalStateFor(task.signalState, t);
    // Started afresh (first start, or the scheduler was lost): signals stored since this version take effect again.
    if (fresh) for (const e of await signalsToCatchUp({ taskId: task.taskId, version: task.version, names: triggerSignalNames(t) })) st = takeSignal(t, st, e, task.taskId);
    while (!changed) {
      task.signalState = st;
      const wake = nextWakeMs(st);
      nextFireMs = wake;
      if (inbox.length === 0) {
        if (wake === null) await waitFor(() => changed || inbox.length > 0, undefined);
        else await waitFor(() => changed || inbox.length > 0, Math.max(1, wake - Date.now()));
      }
      if (changed) break;
      for (const e of inbox.splice(0)) {
        st = takeSignal(t, st, e, task.taskId);
        signalsTaken++;
      }
      const due = dueAt(t, st, Date.now(), task.taskId);
      st = due.state;
      for (const p of due.start) await fire(p.nominalMs, p.trigger, { runId: p.runId, cause: p.cause });
      task.signalState = st;
      if (signalsTaken + fires >= LIMITS.schedulerSignalsPerRun && busy() === 0 && !buffered && inbox.length === 0) {
        await condition(allHandlersFinished);
        await continueAsNew<typeof taskSchedulerWorkflow>({ ...task, patches: SCHEDULER_PATCHES, firesBefore: (task.firesBefore ?? 0) + fires });
      }
    }
    // Paused, deleted or redefined: waiting runs are dropped, a new trigger starts afresh.
    task.signalState = task.enabled && !task.deleted ? st : { ...st, pending: [] };
  }

  /**
   * ENDS_AT_REST: whether this scheduler, its task just registered, can end. Only with nothing
   * of its own in flight (no run it started and tracks, no buffered fire time), and only once its
   * handlers have run: a change or a hand-back that arrives while it ends fails the completion
   * (Temporal refuses to close a workflow with a signal it has not seen), and the next workflow
   * task takes it here.
   */
  async function restsOnSchedule(): Promise<boolean> {
    if (busy() > 0 || buffered || !hasPatch(input.patches, ENDS_AT_REST)) return false;
    await condition(allHandlersFinished);
    return !changed && returned === undefined && busy() === 0 && !buffered;
  }

  /** Set by fireFromShard when the scheduler ends with its task registered (ENDS_AT_REST). */
  let atRest = false;

  /**
   * The SHARED_FIRES path: registers the task on the shared fire schedule and sleeps until it
   * changes (false) or a fire time is handed back (true: the loop fires it under the misfire
   * policy from the returned cursor, then registers again). Under ENDS_AT_REST it answers false
   * with `atRest` set instead of sleeping.
   */
  async function fireFromShard(): Promise<boolean> {
    // Started by the hand-back (no scheduler ran): its row waits, returned; the fire time is taken as a fires-returned signal would have brought it.
    const taken = startedReturned?.version === task.version ? startedReturned : undefined;
    startedReturned = undefined;
    returned = undefined;
    if (!taken) {
      nextFireMs = await registerFires({ taskId: task.taskId, version: task.version, definition: task.definition, cursorMs: task.cursorMs, lastFireMs: task.lastFireMs });
      registered = true;
      if (await restsOnSchedule()) {
        atRest = true;
        return false;
      }
      await condition(() => changed || returned !== undefined);
      if (changed) return false;
    }
    const r = taken ?? returned!;
    returned = undefined;
    task.cursorMs = Math.max(task.cursorMs, r.cursorMs);
    task.lastFireMs = r.lastFireMs;
    return true;
  }

  /** Takes the task off the shared fire schedule when it no longer fires from there (paused, deleted, another trigger). */
  async function leaveShard(): Promise<void> {
    if (!registered || (task.enabled && !task.deleted && firesShared(task.definition))) return;
    const was = await unregisterFires({ taskId: task.taskId, version: task.version });
    registered = false;
    // What the shard did meanwhile becomes this workflow's own again (the query, continue-as-new).
    if (was) {
      fires += was.fires;
      task.cursorMs = Math.max(task.cursorMs, was.cursorMs);
      if (task.enabled && was.lastFireMs !== undefined) task.lastFireMs = Math.max(task.lastFireMs ?? was.lastFireMs, was.lastFireMs);
    }
  }

  while (!task.deleted) {
    await leaveShard();
    if (!task.enabled) {
      nextFireMs = null;
      await condition(() => changed);
      changed = false;
      continue;
    }
    const d = task.definition;
    if (isSignalTrigger(d.trigger)) {
      await signalTriggerLoop();
      changed = false;
      continue;
    }
    if (firesShared(d) && (shared || hasPatch(input.patches, SHARED_FIRES))) {
      shared = true;
      if (!(await fireFromShard())) {
        // Ends with the task's row left on the schedule (no leaveShard: it fires from there).
        if (atRest) return;
        changed = false;
        continue;
      }
      known = undefined;
    }
    const answered = known?.version === task.version ? known.times : undefined;
    known = undefined;
    const [next] = answered ?? (await taskFireTimes({ trigger: d.trigger, calendar: d.calendar, afterMs: task.cursorMs, count: 1, lastFireMs: task.lastFireMs }));
    nextFireMs = next ?? null;
    if (next === undefined) {
      // Nothing left to fire (an `at` task after its run): wait for its runs, then complete.
      if (d.trigger.type === 'at') {
        if (viaActivity) await runsFinished();
        else await condition(() => changed || busy() === 0);
        if (changed) {
          changed = false;
          continue;
        }
        await completeTask({ taskId: task.taskId });
        task.enabled = false;
        continue;
      }
      await condition(() => changed);
      changed = false;
      continue;
    }
    const wait = next - Date.now();
    if (wait > 0 && (await waitFor(() => changed, wait))) {
      changed = false;
      continue;
    }

    // Awake at (or after) the fire time.
    const now = Date.now();
    const grace = misfireGraceMs(d);
    if (now - next <= onTimeWindowMs(d)) {
      const version = task.version;
      asksNext ||= hasPatch(input.patches, FIRE_ANSWERS_NEXT);
      const after = await fire(next, 'schedule', {}, asksNext ? { trigger: d.trigger, calendar: d.calendar, afterMs: next, lastFireMs: now } : undefined);
      task.cursorMs = next;
      task.lastFireMs = now;
      if (after !== undefined) known = { version, times: after === null ? [] : [after] };
    } else {
      // Woke late (the worker or the cluster was down): every fire time up to now is missed.
      const missed = await taskFireTimes({ trigger: d.trigger, calendar: d.calendar, afterMs: task.cursorMs, count: LIMITS.taskMisfireRunAllMax, untilMs: now, lastFireMs: task.lastFireMs });
      const late = missed.length ? missed : [next];
      const last = late[late.length - 1];
      const stillInGrace = late.filter((t) => now - t <= grace);
      if (d.misfire === 'run_all') {
        for (const t of late) await fire(t, 'misfire');
      } else if (d.misfire === 'run_latest') {
        await skip(late.slice(0, -1).map((t) => ({ nominalMs: t, trigger: 'misfire' as const, reason: 'misfire run_latest: only the latest missed fire time runs' })));
        await fire(last, 'misfire');
      } else {
        // skip: runs only what is still inside the grace window.
        await skip(late.filter((t) => !stillInGrace.includes(t)).map((t) => ({ nominalMs: t, trigger: 'misfire' as const, reason: 'misfire skip: missed while the scheduler was down' })));
        for (const t of stillInGrace) await fire(t, 'schedule');
      }
      task.cursorMs = Math.max(last, now);
      task.lastFireMs = now;
    }

    if (fires >= LIMITS.schedulerFiresPerRun && busy() === 0 && !buffered) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof taskSchedulerWorkflow>({ ...task, patches: SCHEDULER_PATCHES, firesBefore: (task.firesBefore ?? 0) + fires });
    }
  }
  await leaveShard();
  // Deleted: runs already started finish on their own (they were started with ABANDON); a
  // fire time still waiting under buffer_one will not run, and the log says so.
  if (buffered) {
    const b = buffered;
    buffered = undefined;
    await skip([{ nominalMs: b.nominalMs, trigger: b.trigger, ...b.extra, reason: 'overlap buffer_one: the task was deleted while this fire time waited' }]);
  }
  await condition(allHandlersFinished);
}
