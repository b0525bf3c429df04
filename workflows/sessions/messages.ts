/**
 * The session workflow's interface: its input and result, and the Updates and Query that
 * callers send it, defined once and imported by both sides (the workflow and
 * clients/sessions.ts). The domain types and rules live in lib/domain/sessions/index.ts.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { JsonValue } from '../../lib/domain/canonical-json';
import type { AppendReceipt, AppendRequest, ChainHead, EventHeader, SessionSettings, StoredEvent } from '../../lib/domain/sessions';

export interface EndRequest {
  eventId: string;
  reason: string;
  content?: JsonValue;
  idempotencyKey?: string;
  /** As on AppendRequest. */
  expectedSeq?: number;
  /** As on AppendRequest. */
  occurredAt?: number;
}

/** What one run hands the next on continue-as-new (or a resume hands a new run). */
export interface CarriedState {
  head: ChainHead;
  createEvent: StoredEvent;
  lastActivityMs: number;
  run: number;
  appendsBefore: number;
}

export interface SessionWorkflowInput {
  settings: SessionSettings;
  carried?: CarriedState;
}

export interface SessionWorkflowResult {
  sessionId: string;
  reason: string;
  head: ChainHead;
  endEvent: EventHeader;
}

/** The workflow's own view: `ending` while SESSION_END is queued but not yet stored. */
export const SessionStatus = { Open: 'open', Ending: 'ending', Archived: 'archived' } as const;
export type SessionStatus = (typeof SessionStatus)[keyof typeof SessionStatus];

export interface SessionState {
  sessionId: string;
  status: SessionStatus;
  head: ChainHead | null;
  run: number;
  appendsThisRun: number;
  appendsTotal: number;
  queued: number;
}

/** Appends one event; returns it as stored (seq, ts, prev_hash, hash). */
export const appendUpdate = defineUpdate<AppendReceipt, [AppendRequest]>('append');
/** Appends SESSION_END, archives the timeline and lets the workflow complete. */
export const endUpdate = defineUpdate<AppendReceipt, [EndRequest]>('end');
/** Resolves once SESSION_CREATE is stored; used with update-with-start by init. */
export const createdUpdate = defineUpdate<StoredEvent, []>('created');
export const stateQuery = defineQuery<SessionState>('state');
