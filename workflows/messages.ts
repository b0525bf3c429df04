/**
 * Everything the session workflow and its callers agree on: event types, message
 * definitions, payload shapes and error types. Imported by the workflow (so: no Node
 * built-ins, no I/O), the activities and the API client.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { JsonValue } from '../lib/canonical-json';
// Type only: erased from the workflow bundle, so node:crypto never reaches the sandbox.
import type { ChainEvent } from '../lib/hash-chain';

export type { JsonValue };

/** The seed's event types. New capabilities add theirs here. */
export const EventType = {
  SessionCreate: 'SESSION_CREATE',
  UserInput: 'USER_INPUT',
  LlmResponse: 'LLM_RESPONSE',
  ToolCall: 'TOOL_CALL',
  ToolResult: 'TOOL_RESULT',
  SessionEnd: 'SESSION_END',
} as const;
export type EventType = (typeof EventType)[keyof typeof EventType];

export const EVENT_TYPES: readonly EventType[] = Object.values(EventType);

/** Types a caller may append; SESSION_CREATE is written by the workflow itself. */
export const APPENDABLE_EVENT_TYPES: readonly EventType[] = EVENT_TYPES.filter((t) => t !== EventType.SessionCreate);

export function isAppendableType(t: string): t is EventType {
  return (APPENDABLE_EVENT_TYPES as readonly string[]).includes(t);
}

/** Failure types the workflow raises; the API maps each to an HTTP status. */
export const TimelineErrorType = {
  SessionArchived: 'SessionArchived',
  InvalidEventType: 'InvalidEventType',
  ContentTooLarge: 'ContentTooLarge',
  EventIdConflict: 'EventIdConflict',
  IdempotencyKeyReused: 'IdempotencyKeyReused',
  SessionExists: 'SessionExists',
  /** The database refused the write, or belongs to another Timekeeper; nothing was stored. */
  WriteFailed: 'WriteFailed',
} as const;
export type TimelineErrorType = (typeof TimelineErrorType)[keyof typeof TimelineErrorType];

/** One stored, chained event: a row of timeline_events (the hashed fields plus the key). */
export interface StoredEvent extends ChainEvent {
  idempotency_key: string | null;
}

export interface ChainHead {
  seq: number;
  hash: string;
  ts: number;
}

export interface AppendRequest {
  /** Chosen by the caller (API) so that a retried request carries the same id. */
  eventId: string;
  type: string;
  content: JsonValue;
  /** Client-chosen key; a second append with the same key returns the first result. */
  idempotencyKey?: string;
  /** True when the client chose eventId itself (it then doubles as an idempotency key). */
  clientEventId?: boolean;
}

/** A stored event without its content: what travels back through workflow history. */
export type EventHeader = Omit<StoredEvent, 'content'>;

/**
 * What an append update returns. The content stays out: the caller sent it, and leaving it
 * out keeps each event's content in history once (in the request) instead of three times.
 */
export interface AppendReceipt {
  event: EventHeader;
  /** True when this request matched an earlier one (same idempotency key or event id). */
  deduplicated: boolean;
}

/** An append as the API reports it: the receipt with the content put back. */
export interface AppendResult {
  event: StoredEvent;
  deduplicated: boolean;
}

export interface EndRequest {
  eventId: string;
  reason: string;
  content?: JsonValue;
  idempotencyKey?: string;
}

export interface SessionSettings {
  sessionId: string;
  timelineId: string;
  /** Event id of the SESSION_CREATE event, chosen by the caller. */
  createEventId: string;
  agentId?: string;
  channel?: string;
  metadata?: { [k: string]: JsonValue };
  /** End the session with reason "idle" after this many seconds without an append. Default: never. */
  idleTimeoutS?: number;
  /** Largest content accepted, in bytes of canonical JSON. */
  maxContentBytes: number;
  /** Appends per run before continue-as-new (the server refuses more than 2000). */
  updatesPerRun: number;
  /** instance_id of the event database the session lives in; writers refuse any other. */
  databaseInstance?: string;
}

/** What one run hands the next on continue-as-new. */
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

export const sessionWorkflowId = (sessionId: string): string => `session/${sessionId}`;

/** The reason a SESSION_END's content gives (`{"reason": …}`), or "ended". */
export function endReasonOf(content: unknown): string {
  if (content && typeof content === 'object' && !Array.isArray(content)) {
    const r = (content as Record<string, unknown>).reason;
    if (typeof r === 'string') return r;
  }
  return 'ended';
}

/** UTF-8 length without TextEncoder, which the workflow sandbox need not provide. */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const IDEMPOTENCY_KEY_RE = /^[\x21-\x7e]{1,200}$/;
export const SESSION_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export interface RequestProblem {
  field: string;
  reason: string;
  /** Failure type when raised by the workflow validator. */
  type: string;
}

/**
 * Why content cannot be stored, or null. PostgreSQL's jsonb cannot hold U+0000, so it is
 * refused up front: a row the database rejects would stall the session's writer.
 */
export function contentProblem(content: unknown, canonical: (v: unknown) => string, maxBytes: number): RequestProblem | null {
  let text: string;
  try {
    text = canonical(content);
  } catch (err) {
    return { field: 'content', reason: (err as Error).message, type: 'InvalidContent' };
  }
  if (containsNul(content)) {
    return { field: 'content', reason: 'must not contain the character U+0000', type: 'InvalidContent' };
  }
  const bytes = utf8Length(text);
  if (bytes > maxBytes) {
    return { field: 'content', reason: `is ${bytes} bytes of canonical JSON; the limit is ${maxBytes}`, type: TimelineErrorType.ContentTooLarge };
  }
  return null;
}

/** True when a string or key anywhere in a JSON value holds U+0000. */
export function containsNul(v: unknown): boolean {
  if (typeof v === 'string') return v.includes('\u0000');
  if (Array.isArray(v)) return v.some(containsNul);
  if (v && typeof v === 'object') return Object.entries(v).some(([k, x]) => k.includes('\u0000') || containsNul(x));
  return false;
}

/** Checks shared by the API (before calling Temporal) and the workflow's update validator. */
export function appendRequestProblem(req: AppendRequest, canonical: (v: unknown) => string, maxBytes: number): RequestProblem | null {
  if (typeof req.eventId !== 'string' || !UUID_RE.test(req.eventId)) {
    return { field: 'event_id', reason: 'must be a lowercase UUID', type: 'InvalidRequest' };
  }
  if (typeof req.type !== 'string' || !isAppendableType(req.type)) {
    return {
      field: 'event_type',
      reason: `must be one of ${APPENDABLE_EVENT_TYPES.join(', ')}`,
      type: TimelineErrorType.InvalidEventType,
    };
  }
  if (req.idempotencyKey !== undefined && (typeof req.idempotencyKey !== 'string' || !IDEMPOTENCY_KEY_RE.test(req.idempotencyKey))) {
    return { field: 'idempotency_key', reason: 'must be 1-200 printable ASCII characters', type: 'InvalidRequest' };
  }
  return contentProblem(req.content, canonical, maxBytes);
}
