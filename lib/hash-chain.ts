/**
 * The timeline hash chain: how an event's hash is computed and how a chain is verified.
 * The normative description for other languages is docs/hash-chain.md; golden vectors are in
 * test/vectors/hash-chain.json. Changing anything here changes every stored hash.
 *
 * Uses node:crypto, so it is for activities, the API and tools - not for workflow code, whose
 * sandbox has no node:crypto.
 */
import { createHash } from 'node:crypto';
import { canonicalize, CanonicalJsonError } from './domain/canonical-json';
import type { ChainEvent } from './domain/sessions';
import { intentChainId, type StoredTransition } from './domain/intents';

export type { ChainEvent };

export type UnhashedEvent = Omit<ChainEvent, 'hash'>;

/**
 * The exact string that is hashed: the RFC 8785 canonical JSON of these seven members and no
 * others, plus `occurred_at` when the event has one (docs/hash-chain.md §3: an event without
 * it hashes exactly as every event did before it existed, so old chains verify unchanged).
 * Members are picked explicitly so extra properties on a database row (recorded_at,
 * workflow_id, ...) or the stored `hash` itself never leak into the hash.
 */
export function hashInput(e: UnhashedEvent): string {
  return canonicalize({
    session_id: e.session_id,
    seq: e.seq,
    event_id: e.event_id,
    event_type: e.event_type,
    ts: e.ts,
    content: e.content,
    prev_hash: e.prev_hash,
    ...(e.occurred_at != null ? { occurred_at: e.occurred_at } : {}),
  });
}

/** Lowercase hex SHA-256 over the UTF-8 bytes of hashInput(e). */
export function computeEventHash(e: UnhashedEvent): string {
  return createHash('sha256').update(hashInput(e), 'utf8').digest('hex');
}

/**
 * An intent transition as a chain event (docs/hash-chain.md §9): the same seven members and
 * the same rule, with the chain id `intent:<event_id>` in `session_id`, the transition's own
 * UUID in `event_id`, and the type INTENT_CREATE for seq 1, INTENT_TRANSITION after it. So
 * an intent chain verifies with the very ChainVerifier that checks timelines.
 */
export function transitionChainEvent(t: Omit<StoredTransition, 'hash'> & { hash?: string }): UnhashedEvent & { hash: string } {
  return {
    session_id: intentChainId(t.event_id),
    seq: t.seq,
    event_id: t.transition_id,
    event_type: t.seq === 1 ? 'INTENT_CREATE' : 'INTENT_TRANSITION',
    ts: t.ts,
    content: t.content as unknown as ChainEvent['content'],
    prev_hash: t.prev_hash,
    hash: t.hash ?? '',
  };
}

export const computeTransitionHash = (t: Omit<StoredTransition, 'hash'>): string => computeEventHash(transitionChainEvent(t));

export const ChainBreakReason = {
  ContentChanged: 'content_changed',
  LinkBroken: 'link_broken',
  Gap: 'gap',
  Order: 'order',
  SessionMismatch: 'session_mismatch',
} as const;
export type ChainBreakReason = (typeof ChainBreakReason)[keyof typeof ChainBreakReason];

export interface ChainBreak {
  seq: number;
  reason: ChainBreakReason;
  detail: string;
}

export interface VerifyResult {
  ok: boolean;
  /** Events pushed and checked, including the bad one if there is a break. */
  checked: number;
  /** Last event that verified (null if none did). */
  head_seq: number | null;
  head_hash: string | null;
  first_bad_seq?: number;
  reason?: ChainBreakReason;
  detail?: string;
}

/** First 12 hex chars are plenty to tell hashes apart in a message. */
function short(h: string | null): string {
  if (h === null) return 'null';
  return typeof h === 'string' && h.length > 12 ? `${h.slice(0, 12)}…` : JSON.stringify(h);
}

/**
 * Streaming verifier: push events in seq order (e.g. page by page from the database); memory
 * use is constant. The first break is remembered and later pushes are ignored, because once a
 * link is broken nothing after it can be trusted relative to the start of the chain.
 *
 * Checks per event, in order: session_id, seq continuity, ts monotonicity, own hash, link to
 * the previous event. seq and ts must be JS numbers holding safe integers: pg returns bigint
 * columns as strings, and hashing "1" instead of 1 would give a different hash, so a wrong
 * type is treated as a caller bug (TypeError), not as tampering.
 */
export class ChainVerifier {
  private readonly sessionId: string;
  private checked = 0;
  private prev: { seq: number; ts: number; hash: string } | null = null;
  private broken: ChainBreak | null = null;

  constructor(sessionId: string) {
    this.sessionId = sessionId;
  }

  push(e: ChainEvent): ChainBreak | null {
    if (this.broken) return null;
    assertSafeInteger('seq', e.seq);
    assertSafeInteger('ts', e.ts);
    if (e.occurred_at != null) assertSafeInteger('occurred_at', e.occurred_at);
    this.checked++;
    const found = this.check(e);
    if (found) {
      this.broken = found;
      return found;
    }
    this.prev = { seq: e.seq, ts: e.ts, hash: e.hash };
    return null;
  }

  result(): VerifyResult {
    const head = {
      checked: this.checked,
      head_seq: this.prev ? this.prev.seq : null,
      head_hash: this.prev ? this.prev.hash : null,
    };
    if (!this.broken) return { ok: true, ...head };
    return {
      ok: false,
      ...head,
      first_bad_seq: this.broken.seq,
      reason: this.broken.reason,
      detail: this.broken.detail,
    };
  }

  private check(e: ChainEvent): ChainBreak | null {
    const brk = (reason: ChainBreakReason, detail: string): ChainBreak => ({ seq: e.seq, reason, detail });
    const prev = this.prev;

    if (e.session_id !== this.sessionId) {
      return brk(
        ChainBreakReason.SessionMismatch,
        `event seq ${e.seq} belongs to session ${JSON.stringify(e.session_id)}, expected ${JSON.stringify(this.sessionId)}`,
      );
    }

    const expectedSeq = prev ? prev.seq + 1 : 1;
    if (e.seq > expectedSeq) {
      const missing = e.seq - expectedSeq;
      return brk(
        ChainBreakReason.Gap,
        prev
          ? `expected seq ${expectedSeq} after ${prev.seq}, got ${e.seq} (${missing} missing)`
          : `chain starts at seq ${e.seq}, expected 1 (${missing} missing)`,
      );
    }
    if (e.seq < expectedSeq) {
      // After the first event: a repeated or earlier seq. As the first event: seq < 1.
      return brk(
        ChainBreakReason.Order,
        prev
          ? `seq ${e.seq} after seq ${prev.seq} (expected ${expectedSeq}): duplicate or out of order`
          : `chain starts at seq ${e.seq}, expected 1`,
      );
    }

    if (prev && e.ts < prev.ts) {
      return brk(ChainBreakReason.Order, `ts ${e.ts} is earlier than ts ${prev.ts} of seq ${prev.seq}`);
    }

    let recomputed: string;
    try {
      recomputed = computeEventHash(e);
    } catch (err) {
      // Stored fields that cannot even be canonicalised cannot match any honest hash.
      if (!(err instanceof CanonicalJsonError)) throw err;
      return brk(ChainBreakReason.ContentChanged, `fields cannot be canonicalised: ${err.message}`);
    }
    if (recomputed !== e.hash) {
      return brk(
        ChainBreakReason.ContentChanged,
        `fields no longer hash to the stored hash (stored ${short(e.hash)}, recomputed ${short(recomputed)})`,
      );
    }

    const expectedPrev = prev ? prev.hash : null;
    if (e.prev_hash !== expectedPrev) {
      return brk(
        ChainBreakReason.LinkBroken,
        prev
          ? `prev_hash ${short(e.prev_hash)} does not match hash ${short(expectedPrev)} of seq ${prev.seq}`
          : `first event must have prev_hash null, got ${short(e.prev_hash)}`,
      );
    }
    return null;
  }
}

function assertSafeInteger(name: string, v: unknown): void {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) {
    throw new TypeError(
      `ChainVerifier.push: ${name} must be a safe integer number, got ${typeof v} ${String(v)} (convert bigint columns first)`,
    );
  }
}

/** Verify a whole chain held in memory (or any iterable, consumed lazily). */
export function verifyChain(sessionId: string, events: Iterable<ChainEvent>): VerifyResult {
  const v = new ChainVerifier(sessionId);
  for (const e of events) {
    if (v.push(e)) break;
  }
  return v.result();
}
