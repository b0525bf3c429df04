/**
 * Durable agent intents (operational memory, compatible with the OML Event Log's API; OML is
 * the Operational Memory Layer, an agent's two-phase log of what it means to do and what came
 * of it): states, the allowed transitions, field rules, stored shapes and intent errors. One
 * definition, used by the API contracts, the intent workflow's update validator, the writer
 * activity and the store. Sandbox-safe.
 */
import { canonicalize, type JsonValue } from '../canonical-json';
import { DomainError, ErrorCode } from '../errors';
import { LIMITS } from '../limits';
import { hostileTextProblem } from '../input-gate';
import { containsNul, utf8Length } from '../platform/text';

export type JsonObject = { [k: string]: JsonValue };

export const IntentStatus = { Requested: 'requested', InProgress: 'in-progress', Done: 'done', Blocked: 'blocked' } as const;
export type IntentStatus = (typeof IntentStatus)[keyof typeof IntentStatus];
export const INTENT_STATUSES = Object.values(IntentStatus) as [IntentStatus, ...IntentStatus[]];

/**
 * The state machine: `requested` → optional `in-progress` → `done` or `blocked`; `blocked`
 * may go back to `requested` (a retry) or straight to `done` (the work was redone and
 * succeeded: OML's recovery, seed 001); `done` is final. Nothing else. A PATCH that repeats
 * the transition that brought the intent to its current state (same status, note and data)
 * is answered as that transition (deduplicated, clients/intents.ts), not refused.
 */
export const NEXT_STATES: Readonly<Record<IntentStatus, readonly IntentStatus[]>> = {
  requested: [IntentStatus.InProgress, IntentStatus.Done, IntentStatus.Blocked],
  'in-progress': [IntentStatus.Done, IntentStatus.Blocked],
  blocked: [IntentStatus.Requested, IntentStatus.Done],
  done: [],
};

/** Open: still to be done (what GET /api/events/pending lists, and what the time-to-live watches). */
export const isOpen = (s: IntentStatus): boolean => s === IntentStatus.Requested || s === IntentStatus.InProgress;
export const isIntentStatus = (s: unknown): s is IntentStatus => typeof s === 'string' && (INTENT_STATUSES as string[]).includes(s);
export const canTransition = (from: IntentStatus, to: IntentStatus): boolean => NEXT_STATES[from].includes(to);

/** Who wrote a transition: the agent through the API, or the intent workflow itself (expiry, retry). */
export const Actor = { Agent: 'agent', System: 'system' } as const;
export type Actor = (typeof Actor)[keyof typeof Actor];

// ---- rules ---------------------------------------------------------------------------

/** OML suggests `{DOMAIN}-{YYYYMMDD}-{SEQ}`; the SQL CHECK on intents.event_id repeats this rule. */
export const INTENT_ID_RE = new RegExp(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,${LIMITS.intentIdMaxChars - 1}}$`);
export const INTENT_ID_RULE = `must be 1-${LIMITS.intentIdMaxChars} characters: letters, digits and . _ : - (starting with a letter or digit)`;
export const DOMAIN_RE = new RegExp(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,${LIMITS.intentDomainMaxChars - 1}}$`);
export const DOMAIN_RULE = `must be 1-${LIMITS.intentDomainMaxChars} characters: letters, digits and . _ : - (starting with a letter or digit)`;
export const DEDUPE_KEY_RE = new RegExp(`^[\\x21-\\x7e]{1,${LIMITS.idempotencyKeyMaxChars}}$`);
export const DEDUPE_KEY_RULE = `must be 1-${LIMITS.idempotencyKeyMaxChars} printable ASCII characters`;

export const intentWorkflowId = (eventId: string): string => `intent/${eventId}`;
/** The chain id an intent's transitions are hashed under (the `session_id` member of the hash input). */
export const intentChainId = (eventId: string): string => `intent:${eventId}`;

/** Why a JSON object cannot be stored as `field`, or null (same storability rules as session content). */
export function dataProblem(data: unknown, field = 'data', maxBytes: number = LIMITS.intentDataMaxBytes): DomainError | null {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return DomainError.validation(field, 'must be a JSON object');
  let text: string;
  try {
    text = canonicalize(data as JsonValue);
  } catch (err) {
    return DomainError.validation(field, (err as Error).message);
  }
  if (containsNul(data)) return DomainError.validation(field, 'must not contain the character U+0000');
  const bytes = utf8Length(text);
  if (bytes > maxBytes) return DomainError.field(ErrorCode.TooLarge, field, `is ${bytes} bytes of canonical JSON; the limit is ${maxBytes}`);
  return null;
}

/** ISO-8601 date-time with a zone (Z or ±hh:mm), as `retry_after` must be. Pure: Date.parse is deterministic. */
const ISO_INSTANT_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
export function parseInstant(s: unknown): number | undefined {
  if (typeof s !== 'string' || !ISO_INSTANT_RE.test(s)) return undefined;
  const ms = Date.parse(s);
  return Number.isFinite(ms) ? ms : undefined;
}

/** What a `blocked` transition's data says about retrying. */
export interface BlockedInfo {
  error: string;
  next_step: string;
  retry: boolean;
  /** Epoch ms of data.retry_after, when given. */
  retryAtMs?: number;
}

/** The rules for a `blocked` transition's data: `error` and `next_step` (strings), optional `retry` (boolean) and `retry_after` (ISO-8601). */
export function blockedProblem(data: JsonObject): DomainError | null {
  for (const f of ['error', 'next_step'] as const) {
    const v = data[f];
    if (typeof v !== 'string' || v.length === 0) return DomainError.validation(`data.${f}`, 'is required for status blocked (a non-empty string)');
  }
  if (data.retry !== undefined && typeof data.retry !== 'boolean') return DomainError.validation('data.retry', 'must be a boolean');
  if (data.retry_after !== undefined && parseInstant(data.retry_after) === undefined) {
    return DomainError.validation('data.retry_after', 'must be an ISO-8601 date-time with a time zone, e.g. 2023-10-27T12:05:00Z');
  }
  return null;
}

export function blockedInfo(data: JsonObject): BlockedInfo {
  return {
    error: String(data.error ?? ''),
    next_step: String(data.next_step ?? ''),
    retry: data.retry === true,
    retryAtMs: parseInstant(data.retry_after),
  };
}

/** A transition as the client asks for it (PATCH, or the status of a create). */
export interface TransitionRequest {
  /** Chosen by the caller (API) before the first attempt, so a retried request carries the same id. */
  transitionId: string;
  to: IntentStatus;
  note?: string;
  data: JsonObject;
  /** The HTTP request that asked for it (X-Request-Id), for the writer's log lines; never stored or hashed. */
  requestId?: string;
}

/** Checks a transition's own fields (not its legality from a state). */
export function transitionRequestProblem(req: TransitionRequest): DomainError | null {
  if (!isIntentStatus(req.to)) return DomainError.validation('status', `must be one of ${INTENT_STATUSES.join(', ')}`);
  if (req.note !== undefined && (typeof req.note !== 'string' || req.note.length > LIMITS.intentNoteMaxChars)) {
    return DomainError.validation('note', `must be a string of at most ${LIMITS.intentNoteMaxChars} characters`);
  }
  const hostile = hostileTextProblem({ note: req.note, data: req.data });
  if (hostile) return DomainError.validation(hostile.field, hostile.reason);
  const p = dataProblem(req.data);
  if (p) return p;
  return req.to === IntentStatus.Blocked ? blockedProblem(req.data) : null;
}

/** The refusal of an illegal transition: 409 naming the current state and the allowed next states. */
export function transitionProblem(eventId: string, from: IntentStatus, to: IntentStatus): DomainError | null {
  if (canTransition(from, to)) return null;
  const allowed = NEXT_STATES[from];
  return new DomainError(
    ErrorCode.InvalidTransition,
    `intent ${eventId} is ${from}; it cannot become ${to} (allowed next: ${allowed.length ? allowed.join(', ') : 'none, it is final'})`,
    [{ field: 'status', reason: `cannot go from ${from} to ${to}` }],
    { current_status: from, allowed_next: [...allowed] },
  );
}

// ---- stored shapes -----------------------------------------------------------------------

/** Fixed when the intent is created: the intents row, and part of the first transition's hashed content. */
export interface IntentHeader {
  event_id: string;
  domain: string;
  action: string;
  tags: string[];
  session_id: string | null;
  dedupe_key: string | null;
  /** The time-to-live in force (the request's, the domain's or the global default). */
  ttl_s: number;
  /** The agent the intent belongs to (API keys bound to agents see only theirs); absent or null: no owner. */
  agent_id?: string | null;
}

/** The text rules for a header (it is hashed with the first transition): a buggy caller of IntentClient is refused, not retried. */
export function headerProblem(h: IntentHeader): DomainError | null {
  const hostile = hostileTextProblem({ event_id: h.event_id, domain: h.domain, action: h.action, tags: h.tags, session_id: h.session_id, dedupe_key: h.dedupe_key, agent_id: h.agent_id ?? null });
  return hostile ? DomainError.validation(hostile.field, hostile.reason) : null;
}

/** The header as the first transition's content records it (the event id is the chain's own). */
export function headerContent(h: IntentHeader): Omit<IntentHeader, 'event_id'> {
  // The owner only when there is one: an intent without one hashes exactly as before owners existed.
  return { domain: h.domain, action: h.action, tags: h.tags, session_id: h.session_id, dedupe_key: h.dedupe_key, ttl_s: h.ttl_s, ...(h.agent_id ? { agent_id: h.agent_id } : {}) };
}

/** What a transition's hash covers besides the chain fields (see docs/hash-chain.md §9). */
export interface TransitionContent {
  from: IntentStatus | null;
  to: IntentStatus;
  note: string | null;
  data: JsonObject;
  actor: Actor;
  /** Only on seq 1: the intent's header, so it is under the chain too. */
  intent?: Omit<IntentHeader, 'event_id'>;
}

/** One stored transition: a row of intent_transitions. */
export interface StoredTransition {
  event_id: string;
  seq: number;
  transition_id: string;
  /** Milliseconds since the epoch, database clock; never decreases within an intent. */
  ts: number;
  content: TransitionContent;
  prev_hash: string | null;
  hash: string;
}

/** The head of an intent's chain, as the workflow carries it. */
export interface IntentHead {
  seq: number;
  hash: string;
  ts: number;
  status: IntentStatus;
}

export const headOfTransition = (t: StoredTransition): IntentHead => ({ seq: t.seq, hash: t.hash, ts: t.ts, status: t.content.to });

/** Fixed for an intent's workflow when it is created; carried across runs. */
export interface IntentSettings {
  header: IntentHeader;
  /** The creating transition's id and fields; absent for a run started from a stored head. */
  create?: TransitionRequest;
  /** Close the workflow after the intent stayed blocked (without an automatic retry) this long. */
  retentionS: number;
  /** instance_id of the event database; the writer refuses any other. */
  databaseInstance: string;
  /**
   * Keep the `IntentStatus` search attribute current on every transition. Absent means true:
   * runs started before it was a setting did, and their histories replay with the upserts.
   */
  statusSearchAttribute?: boolean;
  /**
   * The patches (INTENT_PATCHES, workflows/intents/workflow.ts) its starter's code already has:
   * the run takes their paths without patched(), so it records no patch marker and no
   * TemporalChangeVersion upsert (an event and a visibility write per run). Absent in runs
   * started before it, which ask patched() as their histories did.
   */
  patches?: string[];
}

// ---- errors ----------------------------------------------------------------------------

export const intentErrors = {
  notFound: (eventId: string) => DomainError.field(ErrorCode.NotFound, 'event_id', 'unknown intent').withMessage(`intent ${eventId} not found`),
  exists: (eventId: string) =>
    new DomainError(ErrorCode.IntentExists, `intent ${eventId} already exists; choose a new event_id or PATCH its status`, [{ field: 'event_id', reason: 'already exists' }], {
      event_id: eventId,
    }),
  /** A dedupe_key that already belongs to a done (or still open) intent. */
  duplicate: (key: string, existing: { event_id: string; status: IntentStatus; result: JsonObject | null }) =>
    new DomainError(
      ErrorCode.DuplicateIntent,
      existing.status === IntentStatus.Done
        ? `dedupe_key ${key} belongs to intent ${existing.event_id}, which is already done; nothing was written`
        : `dedupe_key ${key} belongs to intent ${existing.event_id}, which is still ${existing.status}: resume that one; nothing was written`,
      [{ field: 'dedupe_key', reason: `already used by ${existing.event_id} (${existing.status})` }],
      { existing: { event_id: existing.event_id, status: existing.status, result: existing.result } },
    ),
};
