/**
 * The intent writer and its side effects. The intent workflow calls:
 *   - recordTransition (local activity): decides, inside one locked transaction, what a
 *     requested transition becomes (a new chained row, the answer to a retry, or a refusal
 *     checked against the stored state) and has the store insert it;
 *   - linkToSession: appends INTENT_TRANSITION to the intent's session through the session
 *     workflow (the SessionWriter the worker hands in), idempotent by the transition id;
 *   - wakeAgent: OpenClaw's POST /hooks/wake, the only HTTP call, retried with backoff by
 *     Temporal; the URL and token come from the worker's configuration, never from history.
 */
import { createHash } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import type { Pool } from 'pg';
import { CanonicalJsonError, canonicalize } from '../../lib/domain/canonical-json';
import { DomainError, ErrorCode, WakeFailure, type ErrorDetail } from '../../lib/domain/errors';
import {
  Actor,
  headerContent,
  headerProblem,
  intentErrors,
  transitionProblem,
  transitionRequestProblem,
  type IntentHead,
  type IntentHeader,
  type JsonObject,
  type StoredTransition,
  type TransitionContent,
  type TransitionRequest,
} from '../../lib/domain/intents';
import { LIMITS } from '../../lib/domain/limits';
import { EventType, type SessionWriter } from '../../lib/domain/sessions';
import { computeTransitionHash } from '../../lib/hash-chain';
import { logFor } from '../../lib/log';
import { metrics } from '../../lib/metrics';
import { failureFromDatabase } from '../../lib/platform/database-errors';
import { databaseInstanceReader } from '../../lib/store/instance';
import { IntentStore, type IntentWriteState, type IntentWriteTx } from '../../lib/store/intents';
import { isLookupNeeded } from '../../lib/db';

export interface RecordTransitionInput {
  eventId: string;
  databaseInstance: string;
  workflowId: string;
  runId: string;
  /** Present for the creating transition: the intents row to insert with it. */
  create?: IntentHeader;
  transition: TransitionRequest;
  actor: Actor;
  /**
   * The chain head the intent workflow holds (absent for a create, and from workflow code
   * before it was handed over): the transition is written on it without the lookup.
   */
  head?: IntentHead;
}

export type TransitionOutcome = { ok: true; transition: StoredTransition; deduplicated: boolean } | { ok: false; error: ErrorDetail };

export interface LinkInput {
  sessionId: string;
  transition: StoredTransition;
  action: string;
}

export interface WakeInput {
  /** Sent as the Idempotency-Key header: one wake per transition, however often delivery is retried. */
  transitionId: string;
  text: string;
}

export interface IntentActivityDeps {
  pool: Pool;
  sessions: SessionWriter;
  /** OpenClaw's wake hook; without a URL wakeAgent does nothing. */
  wake?: { url?: string; token?: string };
}

const refused = (e: DomainError): TransitionOutcome => ({ ok: false, error: e.toDetail() });

/** Thrown inside an on-head write the head alone would refuse: rolled back, then decided again with the lookup. */
const NEEDS_LOOKUP = new Error('the transition needs the lookup');

/** `$.content.intent.tags[1]` (where canonical JSON failed) → `tags.1`, the request field it came from. */
export function requestFieldOf(canonicalPath: string): string {
  const dotted = canonicalPath
    .replace(/\[(\d+)\]/g, '.$1')
    .replace(/\[("(?:[^"\\]|\\.)*")\]/g, (_m, k: string) => `.${JSON.parse(k) as string}`)
    .replace(/^\$\.?/, '');
  return dotted.replace(/^content\.(intent\.)?/, '') || 'body';
}

/**
 * A failure that no retry can change, as the non-retryable failure the workflow answers its
 * caller with (400 naming the field): the value cannot be canonicalised (so not hashed), or a
 * rule refused it. Today's poison pill was this error retried every ~10 s, forever.
 */
export function deterministicFailure(err: unknown): ApplicationFailure | undefined {
  if (err instanceof CanonicalJsonError) return DomainError.validation(requestFieldOf(err.path), `cannot be stored: ${err.message}`).toFailure();
  if (err instanceof DomainError) return err.toFailure();
  return undefined;
}

/** Lowercase hex SHA-256 of the data's canonical JSON: the session link names the data without copying it. */
export const dataDigest = (data: JsonObject): string => createHash('sha256').update(canonicalize(data), 'utf8').digest('hex');

export function createIntentActivities(deps: IntentActivityDeps) {
  const store = new IntentStore(deps.pool);
  const instanceId = databaseInstanceReader(deps.pool);

  async function recordTransition(input: RecordTransitionInput): Promise<TransitionOutcome> {
    const mine = await instanceId();
    if (mine !== input.databaseInstance) {
      throw new DomainError(
        ErrorCode.WriteFailed,
        `nothing was stored: this worker writes to event database ${mine}, but intent ${input.eventId} lives in ${input.databaseInstance}`,
      ).toFailure();
    }
    try {
      const out = await write(input);
      if (out.ok && !out.deduplicated) {
        metrics.intentTransitions.inc({ to: input.transition.to, actor: input.actor });
        logFor(input.transition.requestId, { component: 'intent-writer', workflow_id: input.workflowId }).info(
          { event_id: input.eventId, seq: out.transition.seq, from: out.transition.content.from, to: out.transition.content.to, actor: input.actor },
          'intent transition stored',
        );
        if (input.actor === Actor.System && out.transition.content.data?.error === 'expired') metrics.intentExpiries.inc();
      }
      return out;
    } catch (err) {
      throw failureFromDatabase(err, 'intent') ?? deterministicFailure(err) ?? err;
    }
  }

  /**
   * Most transitions are written on the chain head the intent workflow hands over, without the
   * lookup: the guard trigger and the transition id's unique index refuse anything the lookup
   * would have found (an earlier attempt of this request, a head another run moved), and such a
   * transition is then decided again with it. Creates, transitions from workflow code older
   * than the handed head, and transitions the head alone would refuse look up first.
   */
  async function write(input: RecordTransitionInput): Promise<TransitionOutcome> {
    const { transition: req } = input;
    // Checked again here, below every gate: a caller that skipped them gets a refusal, never a retry loop.
    const unstorable = transitionRequestProblem(req) ?? (input.create ? headerProblem(input.create) : null);
    if (unstorable) return refused(unstorable);
    const head = input.create ? undefined : input.head;
    if (!head) {
      metrics.intentWrites.inc({ path: 'lookup', reason: input.create ? 'create' : 'no_head' });
      return writeWithLookup(input);
    }
    try {
      const out = await store.writeOnHead(input.eventId, async (tx, nowMs) => {
        const o = decide(tx, input, { head, nowMs, prior: undefined, headerExists: true, dedupeHolders: [] });
        if (!o.ok) throw NEEDS_LOOKUP;
        return o;
      });
      metrics.intentWrites.inc({ path: 'on_head', reason: '' });
      return out;
    } catch (err) {
      if (err !== NEEDS_LOOKUP && !isLookupNeeded(err)) throw err;
      metrics.intentWrites.inc({ path: 'lookup', reason: err === NEEDS_LOOKUP ? 'refusal' : 'conflict' });
      return writeWithLookup(input);
    }
  }

  function writeWithLookup(input: RecordTransitionInput): Promise<TransitionOutcome> {
    const { eventId, transition: req } = input;
    const key = input.create?.dedupe_key;
    return store.write({ eventId, transitionId: req.transitionId, dedupeKey: key }, async (tx, state) => decide(tx, input, state));
  }

  /** What the requested transition becomes on this state: a new chained row (inserted with COMMIT), the answer to a retry, or a refusal. */
  function decide(tx: IntentWriteTx, input: RecordTransitionInput, { prior, head, nowMs, headerExists, dedupeHolders }: IntentWriteState): TransitionOutcome {
    const { eventId, transition: req } = input;
    const key = input.create?.dedupe_key;
    // An earlier attempt of this very request (activity retry, or a client retry through a new run).
    if (prior) {
      return prior.event_id === eventId
        ? { ok: true, transition: prior, deduplicated: true }
        : refused(DomainError.validation('transition_id', 'already used by another intent'));
    }
    if (input.create) {
      if (head || headerExists) return refused(intentErrors.exists(eventId));
      if (key && dedupeHolders[0]) return refused(intentErrors.duplicate(key, dedupeHolders[0]));
    } else {
      if (!head) return refused(intentErrors.notFound(eventId));
      // Checked against the stored state, whatever the caller believed it to be.
      const problem = transitionProblem(eventId, head.status, req.to);
      if (problem) return refused(problem);
    }
    const content: TransitionContent = {
      from: head?.status ?? null,
      to: req.to,
      note: req.note ?? null,
      data: req.data,
      actor: input.actor,
      ...(input.create ? { intent: headerContent(input.create) } : {}),
    };
    const unhashed = {
      event_id: eventId,
      seq: head ? head.seq + 1 : 1,
      transition_id: req.transitionId,
      ts: head ? Math.max(nowMs, head.ts) : nowMs,
      content,
      prev_hash: head ? head.hash : null,
    };
    const t: StoredTransition = { ...unhashed, hash: computeTransitionHash(unhashed) };
    // The intents row (created_ts = the first transition's ts) goes in with its first transition.
    if (input.create) tx.insertCreated(input.create, t, input);
    else tx.insertTransition(t, input);
    return { ok: true, transition: t, deduplicated: false };
  }

  /** INTENT_TRANSITION in the session's chain, with the transition id as its event id (a retry is answered, not doubled). */
  async function linkToSession(input: LinkInput): Promise<{ seq: number }> {
    const t = input.transition;
    try {
      const r = await deps.sessions.append({
        sessionId: input.sessionId,
        type: EventType.IntentTransition,
        system: true,
        eventId: t.transition_id,
        content: {
          event_id: t.event_id,
          action: input.action,
          seq: t.seq,
          from: t.content.from,
          to: t.content.to,
          note: t.content.note,
          actor: t.content.actor,
          data_sha256: dataDigest(t.content.data),
          transition_hash: t.hash,
        },
      });
      return { seq: r.event.seq };
    } catch (err) {
      // A refusal (unknown or archived session) will not change with retries; an outage may.
      if (err instanceof DomainError && err.code !== ErrorCode.Unavailable && err.code !== ErrorCode.ConcurrencyConflict) {
        throw ApplicationFailure.nonRetryable(err.message, err.code);
      }
      throw err;
    }
  }

  async function wakeAgent(input: WakeInput): Promise<{ sent: boolean; status?: number }> {
    const url = deps.wake?.url;
    if (!url) {
      metrics.intentWakes.inc({ outcome: 'off' });
      return { sent: false };
    }
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'idempotency-key': input.transitionId,
        ...(deps.wake?.token ? { authorization: `Bearer ${deps.wake.token}` } : {}),
      },
      body: JSON.stringify({ text: input.text, mode: 'now' }),
      signal: AbortSignal.timeout(LIMITS.wakeAttemptTimeoutMs),
    });
    await res.arrayBuffer().catch(() => undefined);
    if (res.ok) {
      metrics.intentWakes.inc({ outcome: 'sent' });
      return { sent: true, status: res.status };
    }
    const msg = `wake hook answered ${res.status}`;
    // A refusal of the request itself will not change with retries; overload and outages may.
    if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) {
      metrics.intentWakes.inc({ outcome: 'refused' });
      throw ApplicationFailure.nonRetryable(msg, WakeFailure.Refused);
    }
    metrics.intentWakes.inc({ outcome: 'failed' });
    throw ApplicationFailure.retryable(msg, WakeFailure.Failed);
  }

  return { recordTransition, linkToSession, wakeAgent };
}

export type IntentActivities = ReturnType<typeof createIntentActivities>;
