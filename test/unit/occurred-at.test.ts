/**
 * Event time (occurred_at): the hash rule (docs/hash-chain.md §3: hashed only when present, so
 * chains from before it verify unchanged), its golden vectors, the bound against ts, and the
 * API field that reads RFC 3339.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { occurredAt } from '../../api/contract';
import { occurredAtProblem } from '../../lib/domain/sessions';
import { ChainBreakReason, computeEventHash, hashInput, verifyChain, type ChainEvent } from '../../lib/hash-chain';

type Vector = ChainEvent & { canonical: string };
const load = (f: string): { session_id: string; events: Vector[] } => JSON.parse(readFileSync(join(__dirname, '../vectors', f), 'utf8'));
const withTime = load('hash-chain-occurred-at.json');
const old = load('hash-chain.json');

describe('occurred_at: golden vectors', () => {
  it.each(withTime.events.map((e) => [e.seq, e] as const))('event %i: canonical string and hash', (_seq, e) => {
    const { canonical, hash, ...event } = e;
    expect(hashInput(event)).toBe(canonical);
    expect(computeEventHash(event)).toBe(hash);
    expect(createHash('sha256').update(Buffer.from(canonical, 'utf8')).digest('hex')).toBe(hash);
  });

  it('puts occurred_at in the canonical form exactly when the event has one (null counts as none)', () => {
    for (const e of withTime.events) expect(e.canonical.includes('"occurred_at":')).toBe(e.occurred_at != null);
    expect(withTime.events.some((e) => e.occurred_at === null)).toBe(true);
    expect(withTime.events.some((e) => !('occurred_at' in e))).toBe(true);
  });

  it('verifies although occurred_at is earlier than ts and goes backwards', () => {
    const [, , call, result] = withTime.events;
    expect(result.occurred_at!).toBeLessThan(call.occurred_at!);
    expect(verifyChain(withTime.session_id, withTime.events)).toEqual({ ok: true, checked: 5, head_seq: 5, head_hash: withTime.events[4].hash });
  });
});

describe('occurred_at: the hash rule', () => {
  it('leaves chains written before occurred_at existed exactly as they were', () => {
    for (const e of old.events) {
      const { canonical, hash, ...event } = e;
      expect(hashInput({ ...event, occurred_at: null })).toBe(canonical);
      expect(hashInput({ ...event, occurred_at: undefined })).toBe(canonical);
      expect(computeEventHash({ ...event, occurred_at: null })).toBe(hash);
    }
    expect(verifyChain(old.session_id, old.events.map((e) => ({ ...e, occurred_at: null }))).ok).toBe(true);
  });

  it('detects a changed, added or removed occurred_at as content_changed at that event', () => {
    const changed = withTime.events.map((e, i) => (i === 1 ? { ...e, occurred_at: e.occurred_at! + 1 } : e));
    const removed = withTime.events.map((e, i) => (i === 2 ? { ...e, occurred_at: null } : e));
    const added = withTime.events.map((e, i) => (i === 0 ? { ...e, occurred_at: e.ts } : e));
    expect(verifyChain(withTime.session_id, changed)).toMatchObject({ ok: false, first_bad_seq: 2, reason: ChainBreakReason.ContentChanged });
    expect(verifyChain(withTime.session_id, removed)).toMatchObject({ ok: false, first_bad_seq: 3, reason: ChainBreakReason.ContentChanged });
    expect(verifyChain(withTime.session_id, added)).toMatchObject({ ok: false, first_bad_seq: 1, reason: ChainBreakReason.ContentChanged });
  });

  it('refuses a non-integer occurred_at as a caller bug, like seq and ts', () => {
    const [first] = withTime.events;
    expect(() => verifyChain(withTime.session_id, [{ ...first, occurred_at: '1764613680000' as unknown as number }])).toThrow(TypeError);
  });
});

describe('occurred_at: the bound against ts', () => {
  const bounds = { maxPastS: 3600, maxFutureS: 60 };
  const ts = 1_764_613_762_500;
  it('allows the past up to maxPastS and the future up to maxFutureS, both inclusive', () => {
    expect(occurredAtProblem(ts, ts, bounds)).toBeNull();
    expect(occurredAtProblem(ts - 3600_000, ts, bounds)).toBeNull();
    expect(occurredAtProblem(ts + 60_000, ts, bounds)).toBeNull();
  });
  it('refuses beyond either, naming occurred_at, the distance and the variable', () => {
    const past = occurredAtProblem(ts - 3600_001, ts, bounds)!;
    expect(past.toDetail()).toMatchObject({ code: 'validation_error' });
    expect(past.errors).toEqual([{ field: 'occurred_at', reason: expect.stringContaining('EVENT_OCCURRED_AT_MAX_PAST_S') }]);
    const future = occurredAtProblem(ts + 61_000, ts, bounds)!;
    expect(future.errors).toEqual([{ field: 'occurred_at', reason: expect.stringMatching(/61 s after .*at most 60 s .*EVENT_OCCURRED_AT_MAX_FUTURE_S/) }]);
  });
});

describe('occurred_at: the API field', () => {
  it('reads RFC 3339 with Z or an offset as milliseconds since the epoch', () => {
    expect(occurredAt.parse('2026-12-01T18:27:59.120Z')).toBe(Date.UTC(2026, 11, 1, 18, 27, 59, 120));
    expect(occurredAt.parse('2026-12-01T19:27:59.120+01:00')).toBe(Date.UTC(2026, 11, 1, 18, 27, 59, 120));
    expect(occurredAt.parse('2026-12-01T18:27:59Z')).toBe(Date.UTC(2026, 11, 1, 18, 27, 59));
    // Finer than a millisecond: cut, not rounded.
    expect(occurredAt.parse('2026-12-01T18:27:59.120999Z')).toBe(Date.UTC(2026, 11, 1, 18, 27, 59, 120));
  });
  it.each(['2026-12-01T18:27:59', '2026-12-01 18:27:59Z', '2026-02-30T00:00:00Z', '2026-12-01T18:27:59+0100', '1764613680000', '1969-12-31T23:59:59Z', ''])('refuses %j', (v) => {
    expect(occurredAt.safeParse(v).success).toBe(false);
  });
});
