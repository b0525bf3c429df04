/**
 * The session timeline's domain: event types, stored shapes, and the rules every writer
 * and reader applies (ids, keys, content). One definition, used by the API contracts, the
 * session workflow's update validators, the writer activity and the store. Sandbox-safe.
 *
 * `expected_seq` (`expectedSeq` in code) is the one name for "the head this change was
 * decided on": an append is refused (wrong_expected_seq) unless the chain head is that seq.
 * The task store's history append takes the same name for a task's version (internal: no
 * client sends it), so there is no second name and no alias.
 */
import { canonicalize, type JsonValue } from '../canonical-json';
import { DomainError, ErrorCode } from '../errors';
import { LIMITS } from '../limits';
import { containsNul, utf8Length } from '../platform/text';

export type { JsonValue };

/** The seed's event types. */
export const EventType = {
  SessionCreate: 'SESSION_CREATE',
  UserInput: 'USER_INPUT',
  LlmResponse: 'LLM_RESPONSE',
  ToolCall: 'TOOL_CALL',
  ToolResult: 'TOOL_RESULT',
  SessionEnd: 'SESSION_END',
  /** An intent linked to this session changed state (written by the intent's workflow; content: event id, from, to, note, data digest). */
  IntentTransition: 'INTENT_TRANSITION',
  /** A scheduled task's run, appended by the task run workflow (system only, never by a client). */
  TaskRun: 'TASK_RUN',
} as const;
export type EventType = (typeof EventType)[keyof typeof EventType];

export const EVENT_TYPES: readonly EventType[] = Object.values(EventType);

/** Types only Timekeeper itself writes: SESSION_CREATE (the session workflow), and the ones other capabilities append. */
export const SYSTEM_EVENT_TYPES: readonly EventType[] = [EventType.SessionCreate, EventType.IntentTransition, EventType.TaskRun];

/** Types Timekeeper's own writers append through the session client with `system: true` (intent transitions, task runs). */
export const SYSTEM_APPENDED_TYPES: readonly EventType[] = [EventType.IntentTransition, EventType.TaskRun];

/** Types a caller may append. */
export const APPENDABLE_EVENT_TYPES: readonly EventType[] = EVENT_TYPES.filter((t) => !SYSTEM_EVENT_TYPES.includes(t));

export function isAppendableType(t: string): t is EventType {
  return (APPENDABLE_EVENT_TYPES as readonly string[]).includes(t);
}

/** A timeline as stored: archived once its last event is SESSION_END. */
export const TimelineStatus = { Open: 'open', Archived: 'archived' } as const;
export type TimelineStatus = (typeof TimelineStatus)[keyof typeof TimelineStatus];
export const TIMELINE_STATUSES = Object.values(TimelineStatus) as [TimelineStatus, ...TimelineStatus[]];

/** The fields the hash covers (see docs/hash-chain.md and lib/hash-chain.ts), plus the hash itself. */
export interface ChainEvent {
  session_id: string;
  /** 1-based, gapless per session. */
  seq: number;
  /** Lowercase UUID. */
  event_id: string;
  /** e.g. USER_INPUT. */
  event_type: string;
  /** Milliseconds since the Unix epoch, from the database clock; never decreases within a session. */
  ts: number;
  content: JsonValue;
  /** Hash of the previous event (64 lowercase hex), null for seq 1. */
  prev_hash: string | null;
  /**
   * When the event happened (ms since the epoch), as its writer said; absent or null when it
   * gave none. Hashed only when present, so chains written before it existed verify unchanged.
   */
  occurred_at?: number | null;
  /** Lowercase hex SHA-256 of hashInput(event). */
  hash: string;
}

/** One stored, chained event: a row of timeline_events (the hashed fields plus the key). */
export interface StoredEvent extends ChainEvent {
  idempotency_key: string | null;
}

/** A stored event without its content: what travels back through workflow history. */
export type EventHeader = Omit<StoredEvent, 'content'>;

/** The last event of a chain. */
export interface ChainHead {
  seq: number;
  hash: string;
  ts: number;
}

/** One event to append, as the API hands it to the session workflow and the workflow to its writer. */
export interface AppendRequest {
  /** Chosen by the caller (API) so that a retried request carries the same id. */
  eventId: string;
  type: string;
  content: JsonValue;
  /** Client-chosen key; a second append with the same key returns the first result. */
  idempotencyKey?: string;
  /** True when the client chose eventId itself (it then doubles as an idempotency key). */
  clientEventId?: boolean;
  /** Set only by Timekeeper's own writers (intent transitions, task runs), never from a request: allows SYSTEM_APPENDED_TYPES. */
  system?: boolean;
  /** Refuse the append (wrong_expected_seq) unless the chain head is this seq when it is written. */
  expectedSeq?: number;
  /** When the event happened (ms since the epoch), from the hook or client; stored and hashed as occurred_at. */
  occurredAt?: number;
  /** The HTTP request that asked for it (X-Request-Id), for the writer's log lines; never stored or hashed. */
  requestId?: string;
}

/** What an append returns. The content stays out: the caller sent it (see EventHeader). */
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

/** Fixed for a session when it is created (or resumed); carried across continue-as-new. */
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
  /** When the session began (ms since the epoch), from the creator: SESSION_CREATE's occurred_at. */
  createOccurredAt?: number;
}

export interface CreateSessionInput {
  sessionId: string;
  agentId?: string;
  channel?: string;
  metadata?: { [k: string]: JsonValue };
  idleTimeoutS?: number;
  /** When the session began (ms since the epoch), stored and hashed as SESSION_CREATE's occurred_at (same bounds as any event's). */
  occurredAt?: number;
}

export interface AppendInput {
  sessionId: string;
  type: string;
  content: JsonValue;
  idempotencyKey?: string;
  /** A client-chosen event id; it then doubles as an idempotency key. */
  eventId?: string;
  /** Append only if the chain head is this seq (optimistic concurrency). */
  expectedSeq?: number;
  /** When the event happened (ms since the epoch); see AppendRequest.occurredAt. */
  occurredAt?: number;
  /** Timekeeper's own writers only (see AppendRequest.system). */
  system?: boolean;
}

export interface EndInput {
  reason: string;
  idempotencyKey?: string;
  expectedSeq?: number;
  occurredAt?: number;
}

/**
 * Writing to session timelines, as other capabilities' activities need it: through the
 * session workflow, the single writer (implemented by clients/sessions.ts, handed to the
 * activities by the worker). Refusals are DomainErrors.
 */
export interface SessionWriter {
  create(input: CreateSessionInput): Promise<StoredEvent & { timeline_id: string }>;
  append(input: AppendInput): Promise<AppendResult>;
  end(sessionId: string, input: EndInput): Promise<AppendResult>;
}

export const sessionWorkflowId = (sessionId: string): string => `session/${sessionId}`;

/** The reason a SESSION_END's content gives (`{"reason": …}`), or "ended". */
export function endReasonOf(content: unknown): string {
  if (content && typeof content === 'object' && !Array.isArray(content)) {
    const r = (content as Record<string, unknown>).reason;
    if (typeof r === 'string') return r;
  }
  return 'ended';
}

// ---- rules -------------------------------------------------------------------------

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Same rule as the SQL CHECK on timeline_sessions.session_id. */
export const SESSION_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
export const SESSION_ID_RULE = 'must be 1-128 characters: letters, digits and . _ : - (starting with a letter or digit)';
export const IDEMPOTENCY_KEY_RE = new RegExp(`^[\\x21-\\x7e]{1,${LIMITS.idempotencyKeyMaxChars}}$`);
export const IDEMPOTENCY_KEY_RULE = `must be 1-${LIMITS.idempotencyKeyMaxChars} printable ASCII characters`;

// utf8Length and containsNul are shared text mechanics (./platform/text.ts); re-exported for the session rules' callers.
export { containsNul, utf8Length };

/**
 * Why a JSON value cannot be stored as `field` (event content, session metadata), or null.
 * PostgreSQL's jsonb cannot hold U+0000, so it is refused up front: a row the database
 * rejects would stall the session's writer.
 */
export function contentProblem(content: unknown, maxBytes: number, field = 'content'): DomainError | null {
  let text: string;
  try {
    text = canonicalize(content);
  } catch (err) {
    return DomainError.validation(field, (err as Error).message);
  }
  if (containsNul(content)) return DomainError.validation(field, 'must not contain the character U+0000');
  const bytes = utf8Length(text);
  if (bytes > maxBytes) return DomainError.field(ErrorCode.TooLarge, field, `is ${bytes} bytes of canonical JSON; the limit is ${maxBytes}`);
  return null;
}

/** Checks shared by the API (before calling Temporal) and the workflow's update validators. */
export function appendRequestProblem(req: AppendRequest, maxBytes: number): DomainError | null {
  if (typeof req.eventId !== 'string' || !UUID_RE.test(req.eventId)) return DomainError.validation('event_id', 'must be a lowercase UUID');
  const systemWrite = req.system === true && (SYSTEM_APPENDED_TYPES as readonly string[]).includes(req.type);
  if (typeof req.type !== 'string' || (!isAppendableType(req.type) && !systemWrite)) {
    return DomainError.validation('event_type', `must be one of ${APPENDABLE_EVENT_TYPES.join(', ')}`);
  }
  if (req.idempotencyKey !== undefined && (typeof req.idempotencyKey !== 'string' || !IDEMPOTENCY_KEY_RE.test(req.idempotencyKey))) {
    return DomainError.validation('idempotency_key', IDEMPOTENCY_KEY_RULE);
  }
  if (req.expectedSeq !== undefined && !(Number.isSafeInteger(req.expectedSeq) && req.expectedSeq >= 1)) {
    return DomainError.validation('expected_seq', 'must be an integer of at least 1');
  }
  return occurredAtFormatProblem(req.occurredAt) ?? contentProblem(req.content, maxBytes);
}

/** An occurred_at that is no time at all (not a whole, non-negative ms count), or null; its distance from ts is checked when it is stored (occurredAtProblem). */
export function occurredAtFormatProblem(occurredAt: number | undefined): DomainError | null {
  if (occurredAt !== undefined && !(Number.isSafeInteger(occurredAt) && occurredAt >= 0)) {
    return DomainError.validation('occurred_at', 'must be a time after 1970-01-01 (milliseconds since the epoch)');
  }
  return null;
}

/**
 * A retry must ask for the same event it refers to: same type, canonically equal content.
 * occurred_at is left out on purpose: a client that stamps the time when it sends (not when
 * the event happened) gives each retry another one, and the first stored event stands.
 */
export function sameRequest(e: StoredEvent, req: Pick<AppendRequest, 'type' | 'content'>): boolean {
  return e.event_type === req.type && canonicalize(e.content) === canonicalize(req.content);
}

/** Results go back through workflow history, where the content already is (in the request). */
export function header(e: StoredEvent): EventHeader {
  const { content: _content, ...rest } = e;
  return rest;
}

/**
 * Why an event that happened at `occurredAt` may not be stored at `ts` (both ms), or null:
 * further back than `maxPastS` or ahead by more than `maxFutureS` (lib/domain/limits.ts).
 */
export function occurredAtProblem(occurredAt: number, ts: number, bounds: OccurredAtBounds): DomainError | null {
  const aheadMs = occurredAt - ts;
  if (-aheadMs > bounds.maxPastS * 1000) {
    return DomainError.validation('occurred_at', `is ${Math.floor(-aheadMs / 1000)} s before the time the event is stored; at most ${bounds.maxPastS} s are allowed (EVENT_OCCURRED_AT_MAX_PAST_S)`);
  }
  if (aheadMs > bounds.maxFutureS * 1000) {
    return DomainError.validation('occurred_at', `is ${Math.ceil(aheadMs / 1000)} s after the time the event is stored; at most ${bounds.maxFutureS} s are allowed (EVENT_OCCURRED_AT_MAX_FUTURE_S)`);
  }
  return null;
}

/** How far occurred_at may lie from ts, in seconds (TUNABLE.occurredAtMaxPastS / occurredAtMaxFutureS). */
export interface OccurredAtBounds {
  maxPastS: number;
  maxFutureS: number;
}

export const headOf = (e: Pick<ChainEvent, 'seq' | 'hash' | 'ts'>): ChainHead => ({ seq: e.seq, hash: e.hash, ts: e.ts });

// ---- errors ------------------------------------------------------------------------

export const sessionErrors = {
  exists: (sessionId: string) => DomainError.field(ErrorCode.SessionExists, 'session_id', 'already initialised').withMessage(`session ${sessionId} already has a timeline`),
  archived: (sessionId: string) => DomainError.field(ErrorCode.SessionArchived, 'session_id', 'archived').withMessage(`session ${sessionId} is archived; nothing can be appended`),
  notFound: (sessionId: string) => DomainError.field(ErrorCode.NotFound, 'session_id', 'unknown session').withMessage(`session ${sessionId} has no timeline; initialise it first`),
  wrongExpectedSeq: (expected: number, head: ChainHead | null) =>
    new DomainError(
      ErrorCode.WrongExpectedSeq,
      `expected_seq is ${expected}, but the chain head is seq ${head?.seq ?? 0}; nothing was written`,
      [{ field: 'expected_seq', reason: `the chain head is seq ${head?.seq ?? 0}` }],
      { current_head: head ? { seq: head.seq, hash: head.hash, ts: head.ts } : null },
    ),
};
