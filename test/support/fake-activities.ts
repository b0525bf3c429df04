/**
 * An in-memory stand-in for the session writer (activities/sessions/index.ts `appendEvents`), so
 * workflow-level tests exercise the session workflow's own logic: it assigns seqs and
 * hashes like the real writer, deduplicates by event id and idempotency key, refuses after
 * SESSION_END and on a wrong expected_seq, records every call, and can be scripted per
 * session to delay, block, fail a whole call or refuse single items.
 */
import type { AppendEventsInput, AppendOutcome } from '../../activities/sessions';
import { DomainError, ErrorCode } from '../../lib/domain/errors';
import { AppendRequest, EventType, StoredEvent, header, headOf, sameRequest, sessionErrors } from '../../lib/domain/sessions';
import { computeEventHash } from '../../lib/hash-chain';

/** One call of appendEvents as the fake saw it (the call number counts attempts too). */
export interface FakeCall {
  n: number;
  sessionId: string;
  workflowId: string;
  runId: string;
  create: boolean;
  items: AppendRequest[];
  at: number;
}

export interface SessionScript {
  /** Runs first in every call for the session: await to delay or block, throw to fail the call (nothing is stored). */
  beforeCall?: (call: FakeCall) => void | Promise<void>;
  /** Refuses one item, for its caller alone, with this error. */
  refuse?: (item: AppendRequest, call: FakeCall) => DomainError | undefined;
}

/** A promise the test resolves when it chooses. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

export class FakeSessionWriter {
  readonly calls: FakeCall[] = [];
  private readonly chains = new Map<string, StoredEvent[]>();
  private readonly scripts = new Map<string, SessionScript>();
  private clock = 1_700_000_000_000;

  /** What the worker registers. */
  readonly activities = { appendEvents: (input: AppendEventsInput) => this.appendEvents(input) };

  script(sessionId: string, s: SessionScript): void {
    this.scripts.set(sessionId, s);
  }

  callsFor(sessionId: string): FakeCall[] {
    return this.calls.filter((c) => c.sessionId === sessionId);
  }

  /** Calls after the one that wrote SESSION_CREATE. */
  appendCallsFor(sessionId: string): FakeCall[] {
    return this.callsFor(sessionId).filter((c) => !c.create);
  }

  events(sessionId: string): StoredEvent[] {
    return [...(this.chains.get(sessionId) ?? [])];
  }

  async appendEvents(input: AppendEventsInput): Promise<AppendOutcome[]> {
    const call: FakeCall = {
      n: this.calls.length + 1,
      sessionId: input.sessionId,
      workflowId: input.workflowId,
      runId: input.runId,
      create: input.create !== undefined,
      items: input.items.map((i) => ({ ...i })),
      at: Date.now(),
    };
    this.calls.push(call);
    const script = this.scripts.get(input.sessionId) ?? {};
    await script.beforeCall?.(call);

    const chain = this.chains.get(input.sessionId) ?? [];
    // Like the real writer: a create for a session that already has another timeline is refused.
    const storedTimeline = (chain[0]?.content as { timeline_id?: string } | undefined)?.timeline_id;
    if (input.create && chain.length > 0 && storedTimeline !== input.create.timelineId) {
      return input.items.map(() => ({ ok: false, error: sessionErrors.exists(input.sessionId).toDetail() }));
    }
    const written: StoredEvent[] = [];
    const all = () => [...chain, ...written];
    const outcomes = input.items.map((item): AppendOutcome => {
      const prior = all().find((e) => e.event_id === item.eventId);
      if (prior) {
        return sameRequest(prior, item)
          ? { ok: true, result: { event: header(prior), deduplicated: item.clientEventId === true } }
          : { ok: false, error: new DomainError(ErrorCode.EventIdConflict, `event_id ${item.eventId} is already used`).toDetail() };
      }
      const sameKey = item.idempotencyKey ? all().find((e) => e.idempotency_key === item.idempotencyKey) : undefined;
      if (sameKey) {
        return sameRequest(sameKey, item)
          ? { ok: true, result: { event: header(sameKey), deduplicated: true } }
          : { ok: false, error: new DomainError(ErrorCode.IdempotencyKeyReused, `idempotency_key ${item.idempotencyKey} reused`).toDetail() };
      }
      const refusal = script.refuse?.(item, call);
      if (refusal) return { ok: false, error: refusal.toDetail() };
      const head = all().at(-1);
      if (head?.event_type === EventType.SessionEnd) return { ok: false, error: sessionErrors.archived(input.sessionId).toDetail() };
      if (item.expectedSeq !== undefined && item.expectedSeq !== (head?.seq ?? 0)) {
        return { ok: false, error: sessionErrors.wrongExpectedSeq(item.expectedSeq, head ? headOf(head) : null).toDetail() };
      }
      const unhashed = {
        session_id: input.sessionId,
        seq: (head?.seq ?? 0) + 1,
        event_id: item.eventId,
        event_type: item.type,
        ts: ++this.clock,
        content: item.content,
        prev_hash: head?.hash ?? null,
      };
      const event: StoredEvent = { ...unhashed, hash: computeEventHash(unhashed), idempotency_key: item.idempotencyKey ?? null };
      written.push(event);
      return { ok: true, result: { event: header(event), deduplicated: false } };
    });
    this.chains.set(input.sessionId, [...chain, ...written]);
    return outcomes;
  }
}
