/**
 * The intent workflow's interface: its input and result, and the Updates and Query that
 * callers send it, defined once and imported by both sides (the workflow and
 * clients/intents.ts). The domain types and rules live in lib/domain/intents/index.ts.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { BlockedInfo, IntentHead, IntentSettings, IntentStatus, StoredTransition, TransitionRequest } from '../../lib/domain/intents';

/** What one run hands the next on continue-as-new, or what a new run starts from (a PATCH after the workflow closed). */
export interface IntentCarried {
  head: IntentHead;
  /** Workflow time when the intent last entered `requested` from outside the open states: the time-to-live runs from here. */
  openedAtMs: number;
  /** When blocked: what the blocked data says about retrying, and since when. */
  blocked: BlockedInfo | null;
  blockedAtMs: number;
  run: number;
}

export interface IntentWorkflowInput {
  settings: IntentSettings;
  carried?: IntentCarried;
}

export interface IntentWorkflowResult {
  eventId: string;
  head: IntentHead;
  /**
   * `done`; `retention` when it stayed blocked without a retry for the retention period; `stale`
   * when a timer's move was refused as illegal because the stored intent had moved on without
   * this run (`head` is then what the run last knew, not the stored head).
   */
  closed: 'done' | 'retention' | 'stale';
}

export interface IntentState {
  eventId: string;
  status: IntentStatus | null;
  head: IntentHead | null;
  run: number;
  /** The next thing the workflow's timer will do, and when (epoch ms, workflow clock). */
  next: { action: 'expire' | 'retry' | 'close'; atMs: number } | null;
}

/** Resolves once the creating transition is stored; used with update-with-start by create. */
export const createdUpdate = defineUpdate<StoredTransition, []>('created');
/** One transition requested by the agent; returns it as stored. */
export const transitionUpdate = defineUpdate<StoredTransition, [TransitionRequest]>('transition');
export const stateQuery = defineQuery<IntentState>('state');
