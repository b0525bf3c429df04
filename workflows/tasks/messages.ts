/**
 * The task workflows' interface, defined once and imported by both sides (the workflows and
 * clients/tasks.ts): the scheduler's input, the `changed` signal every task change sends it,
 * its state query; the run workflow's input and result. Domain types live in lib/domain/tasks/index.ts.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ResultOutcome, ResultReport } from '../../lib/domain/tasks/results';
import type { SignalEvent } from '../../lib/domain/signals';
import type { SignalTriggerState } from '../../lib/domain/tasks/signal-triggers';
import type { AgentAnswer, Calendar, RunTrigger, TaskDefinition, Trigger } from '../../lib/domain/tasks';

/** The task's state after one change (its history row), as the scheduler follows it. */
export interface TaskChange {
  version: number;
  definition: TaskDefinition;
  enabled: boolean;
  deleted: boolean;
}

export interface RunQueues {
  default: string;
  core: string;
}

export interface SchedulerInput extends TaskChange {
  taskId: string;
  /** Fire times after this instant (exclusive) are still to come. */
  cursorMs: number;
  /** Interval `from_last_start`: when the previous run was started. */
  lastFireMs?: number;
  runQueues: RunQueues;
  /** Carried across continue-as-new. */
  firesBefore?: number;
  /** Delay and condition triggers: waiting runs, the condition's state, signal ids seen (carried across continue-as-new). */
  signalState?: SignalTriggerState;
  /**
   * The patches (SCHEDULER_PATCHES, workflows/tasks/scheduler.ts) its starter's code already
   * has, as RunInput.patches: no patch marker and no TemporalChangeVersion upsert (a visibility
   * write) per create. Absent in older schedulers, which ask patched() as before.
   */
  patches?: string[];
  /**
   * Started from the stored task while it may have a row on the shared fire schedule (a plain
   * cron or interval task fires from there with no scheduler until it changes, issue 15): the
   * scheduler counts the row as its own (takes it out when paused, deleted or no longer plain).
   * Not carried across continue-as-new (the scheduler's own `registered` is).
   */
  onSchedule?: boolean;
  /** Started by the shared fire schedule's hand-back (a fire time too late to be on time): what fires-returned would have said. */
  returned?: FiresReturned;
}

export interface SchedulerState {
  taskId: string;
  version: number;
  enabled: boolean;
  deleted: boolean;
  cursorMs: number;
  nextFireMs: number | null;
  running: string[];
  buffered: number | null;
  fires: number;
}

export interface RunInput {
  taskId: string;
  runId: string;
  definition: TaskDefinition;
  nominalMs: number;
  trigger: RunTrigger;
  /** Workflow id of the task's scheduler, told when the task auto-disables. */
  schedulerId: string;
  /** Why a signal-triggered run woke (the event, or the condition that held): the time context says it. */
  cause?: string;
  /** When its starter logged the start (`running`, attempt 1); absent in runs started before issue 15 (the run logs it). */
  startedMs?: number;
  /**
   * The patches (workflows/tasks/run.ts) its starter's code already has: the run takes their
   * path without a patch marker. Each marker of a new execution also upserts the
   * TemporalChangeVersion search attribute, a visibility write per run; absent in older runs,
   * which ask patched() as before.
   */
  patches?: string[];
}

/** One run to start (TaskClient.startRun: the scheduler's local activity, trigger, backfill). */
export interface RunStart {
  definition: TaskDefinition;
  runId: string;
  nominalMs: number;
  trigger: RunTrigger;
  /** Why a signal-triggered run woke, for its time context. */
  cause?: string;
}

/** What fireRun needs to answer the fire time after the one it fires (the scheduler's FIRE_ANSWERS_NEXT): taskFireTimes' question. */
export interface NextAsk {
  trigger: Trigger;
  calendar?: Calendar;
  afterMs: number;
  lastFireMs: number;
}

/** The scheduler's fire time for fireRun: the run to start under the task's overlap policy. */
export interface FireInput extends RunStart {
  taskId: string;
  /** buffer_one: this fire time may wait for the running run (no other one waits, or it is the one waiting). */
  mayWait: boolean;
  /** Answer the fire time after this one too (`next` of the outcome), so the scheduler needs no taskFireTimes. */
  next?: NextAsk;
}

/**
 * What fireRun did: started the run; found it started already (a retried start, a trigger of
 * the same id); skipped it (logged, with the reason); or, under buffer_one, left it waiting
 * with a wake asked for (task_run_wakes) when the running run finishes.
 */
export type FireOutcome = ({ outcome: 'started' | 'duplicate' | 'waiting' } | { outcome: 'skipped'; reason: string }) & {
  /** Asked for (FireInput.next): the fire time after this one, null when there is none. */
  next?: number | null;
};

/**
 * A task's row of the shared fire schedule handed back to its scheduler (schema/023): its
 * fire time came too late to be on time, so the scheduler applies the misfire policy from
 * this cursor and last start, then registers the task again.
 */
export interface FiresReturned {
  version: number;
  cursorMs: number;
  lastFireMs?: number;
}

/** The fire-shard workflow's input (workflows/tasks/fire-shard.ts). */
export interface FireShardInput {
  shard: number;
  /** Shard activities taken by earlier runs (carried across continue-as-new). */
  passesBefore?: number;
}

export interface RunResult {
  runId: string;
  status: 'success' | 'failed';
  attempts: number;
  reason?: string;
  answer?: AgentAnswer;
}

export interface RunState {
  runId: string;
  /** `waiting`: the agent said it reports its result later (POST /v1/runs/{run_id}/result). */
  status: 'running' | 'waiting' | 'retry' | 'success' | 'failed';
  attempt: number;
  lastError?: string;
  /** What the agent said when it will answer later (e.g. OpenClaw's run id). */
  waitingFor?: string;
}

/** Every change to a task (update, pause, resume, delete, auto-disable) reaches its scheduler through this. */
export const changedSignal = defineSignal<[TaskChange]>('changed');
/** A signal (POST /v1/signals, or a task run's outcome) for a task whose delay or condition trigger reads its name. */
export const signalEventSignal = defineSignal<[SignalEvent]>('event');
/** A run the scheduler asked to be woken for (task_run_wakes) has logged its finish: the run id. */
export const runFinishedSignal = defineSignal<[string]>('run-finished');
/** The shared fire schedule hands the task back: fire from this cursor (misfire policy), then register again. */
export const firesReturnedSignal = defineSignal<[FiresReturned]>('fires-returned');
export const schedulerStateQuery = defineQuery<SchedulerState>('state');
export const runStateQuery = defineQuery<RunState>('state');
/** An agent's result for a run that waits for it (POST /v1/runs/{run_id}/result); refusals come from the validator. */
export const resultUpdate = defineUpdate<ResultOutcome, [ResultReport]>('result');
