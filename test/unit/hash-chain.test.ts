import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JsonValue } from '../../lib/domain/canonical-json';
import {
  ChainBreakReason,
  ChainVerifier,
  computeEventHash,
  hashInput,
  verifyChain,
  type ChainEvent,
  type UnhashedEvent,
} from '../../lib/hash-chain';

const vectors: { session_id: string; events: Array<ChainEvent & { canonical: string }> } = JSON.parse(
  readFileSync(join(__dirname, '../vectors/hash-chain.json'), 'utf8'),
);

const SID = 'unit-session';

/** Recompute hash and links from `from` (0-based index) on, as a forger with write access would. */
function relink(events: ChainEvent[], from = 0): ChainEvent[] {
  const out = events.map((e) => ({ ...e }));
  for (let i = from; i < out.length; i++) {
    out[i].prev_hash = i === 0 ? null : out[i - 1].hash;
    const { hash: _ignored, ...unhashed }: ChainEvent = out[i];
    const input: UnhashedEvent = unhashed;
    out[i].hash = computeEventHash(input);
  }
  return out;
}

function makeChain(n: number, sessionId = SID): ChainEvent[] {
  const events: ChainEvent[] = [];
  for (let seq = 1; seq <= n; seq++) {
    events.push({
      session_id: sessionId,
      seq,
      event_id: `00000000-0000-4000-8000-${seq.toString(16).padStart(12, '0')}`,
      event_type: seq === 1 ? 'SESSION_CREATE' : 'USER_INPUT',
      ts: 1_700_000_000_000 + seq * 1000,
      content: { n: seq, text: `message ${seq}` },
      prev_hash: null,
      hash: '',
    });
  }
  return relink(events);
}

describe('hash chain: golden vectors', () => {
  it('has the 4-event vector chain', () => {
    expect(vectors.session_id).toBe('vector-session');
    expect(vectors.events.map((e) => e.event_type)).toEqual(['SESSION_CREATE', 'USER_INPUT', 'LLM_RESPONSE', 'SESSION_END']);
  });

  it.each(vectors.events.map((e) => [e.seq, e] as const))('event %i: canonical string and hash', (_seq, e) => {
    const { hash, canonical, ...unhashed } = e;
    expect(hashInput(unhashed)).toBe(canonical);
    expect(computeEventHash(unhashed)).toBe(hash);
    // The rule spelled out: SHA-256 over the UTF-8 bytes of the canonical string.
    expect(createHash('sha256').update(Buffer.from(canonical, 'utf8')).digest('hex')).toBe(hash);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('verifies the vector chain', () => {
    const last = vectors.events[vectors.events.length - 1];
    expect(verifyChain('vector-session', vectors.events)).toEqual({
      ok: true,
      checked: 4,
      head_seq: 4,
      head_hash: last.hash,
    });
  });
});

describe('hashInput', () => {
  it('hashes exactly the seven members, ignoring extra row fields and the stored hash', () => {
    const [e] = makeChain(1);
    const row = { ...e, hash: 'f'.repeat(64), recorded_at: '2025-01-01T00:00:00Z', workflow_id: 'wf' };
    expect(hashInput(row)).toBe(hashInput(e));
    expect(Object.keys(JSON.parse(hashInput(row))).sort()).toEqual(
      ['content', 'event_id', 'event_type', 'prev_hash', 'seq', 'session_id', 'ts'],
    );
  });

  it('writes prev_hash as JSON null for the first event', () => {
    expect(hashInput(makeChain(1)[0])).toContain('"prev_hash":null');
  });
});

describe('ChainVerifier', () => {
  it('accepts an intact chain', () => {
    const chain = makeChain(5);
    expect(verifyChain(SID, chain)).toEqual({ ok: true, checked: 5, head_seq: 5, head_hash: chain[4].hash });
  });

  it('accepts an empty chain', () => {
    expect(verifyChain(SID, [])).toEqual({ ok: true, checked: 0, head_seq: null, head_hash: null });
  });

  it('accepts equal timestamps', () => {
    const chain = makeChain(3);
    chain[2].ts = chain[1].ts;
    expect(verifyChain(SID, relink(chain)).ok).toBe(true);
  });

  it('detects changed content at that seq', () => {
    const chain = makeChain(5);
    chain[2].content = { n: 3, text: 'edited' };
    const r = verifyChain(SID, chain);
    expect(r).toMatchObject({ ok: false, checked: 3, first_bad_seq: 3, reason: 'content_changed', head_seq: 2, head_hash: chain[1].hash });
    expect(r.detail).toMatch(/fields no longer hash to the stored hash/);
  });

  it('detects a changed ts as changed content', () => {
    const chain = makeChain(4);
    chain[1].ts += 1; // still >= previous ts, so only the hash notices
    expect(verifyChain(SID, chain)).toMatchObject({ ok: false, first_bad_seq: 2, reason: ChainBreakReason.ContentChanged });
  });

  it('detects a rewritten middle event (own hash recomputed) as a broken link at the next seq', () => {
    const chain = makeChain(5);
    chain[2].content = { n: 3, text: 'forged' };
    const { hash: _old, ...unhashed } = chain[2];
    chain[2].hash = computeEventHash(unhashed);
    const r = verifyChain(SID, chain);
    expect(r).toMatchObject({ ok: false, checked: 4, first_bad_seq: 4, reason: 'link_broken', head_seq: 3, head_hash: chain[2].hash });
    expect(r.detail).toContain('seq 3');
  });

  it('cannot detect a rewrite of the whole tail with recomputed hashes (needs an external anchor)', () => {
    const chain = makeChain(5);
    const originalHead = chain[4].hash;
    chain[2].content = { n: 3, text: 'forged' };
    const forged = relink(chain, 2);
    const r = verifyChain(SID, forged);
    expect(r.ok).toBe(true);
    expect(r.head_hash).not.toBe(originalHead); // only comparing against a held head hash reveals it
  });

  it('detects a missing event as a gap', () => {
    const chain = makeChain(5);
    chain.splice(2, 1); // drop seq 3
    const r = verifyChain(SID, chain);
    expect(r).toMatchObject({ ok: false, checked: 3, first_bad_seq: 4, reason: 'gap', head_seq: 2 });
    expect(r.detail).toBe('expected seq 3 after 2, got 4 (1 missing)');
  });

  it('reports a chain that does not start at seq 1 as a gap', () => {
    const chain = makeChain(3).slice(1);
    expect(verifyChain(SID, chain)).toMatchObject({ ok: false, checked: 1, first_bad_seq: 2, reason: 'gap', head_seq: null, head_hash: null });
  });

  it('detects swapped events (positions exchanged, hashes re-forged) as order via ts', () => {
    // A forger exchanges events 3 and 4 in the timeline: they take each other's seq and the
    // chain is re-hashed from there, so only the timestamps betray the reordering.
    const chain = makeChain(5);
    const swapped = [chain[0], chain[1], { ...chain[3], seq: 3 }, { ...chain[2], seq: 4 }, chain[4]];
    const r = verifyChain(SID, relink(swapped, 2));
    expect(r).toMatchObject({ ok: false, checked: 4, first_bad_seq: 4, reason: 'order', head_seq: 3 });
    expect(r.detail).toMatch(/ts .* is earlier than ts .* of seq 3/);
  });

  it('detects swapped events delivered out of order: first as a gap (seq jumps ahead)', () => {
    // Per the check order, 1,2,4,3 breaks at 4 (seq > prev+1 is a gap), before 3 could be an order error.
    const chain = makeChain(5);
    const r = verifyChain(SID, [chain[0], chain[1], chain[3], chain[2], chain[4]]);
    expect(r).toMatchObject({ ok: false, first_bad_seq: 4, reason: 'gap' });
  });

  it('detects a repeated or earlier seq as order', () => {
    const chain = makeChain(4);
    const r = verifyChain(SID, [chain[0], chain[1], chain[2], chain[1]]);
    expect(r).toMatchObject({ ok: false, checked: 4, first_bad_seq: 2, reason: 'order', head_seq: 3 });
    expect(r.detail).toBe('seq 2 after seq 3 (expected 4): duplicate or out of order');
  });

  it('detects decreasing ts even when all hashes are valid', () => {
    const chain = makeChain(4);
    chain[2].ts = chain[1].ts - 1;
    const r = verifyChain(SID, relink(chain));
    expect(r).toMatchObject({ ok: false, checked: 3, first_bad_seq: 3, reason: 'order', head_seq: 2 });
    expect(r.detail).toBe(`ts ${chain[1].ts - 1} is earlier than ts ${chain[1].ts} of seq 2`);
  });

  it('detects an event of another session', () => {
    const chain = makeChain(3);
    const other = makeChain(3, 'other-session');
    const r = verifyChain(SID, [chain[0], other[1], chain[2]]);
    expect(r).toMatchObject({ ok: false, checked: 2, first_bad_seq: 2, reason: 'session_mismatch', head_seq: 1 });
    expect(r.detail).toContain('"other-session"');
    expect(verifyChain('other-session', chain)).toMatchObject({ first_bad_seq: 1, reason: 'session_mismatch', checked: 1 });
  });

  it('detects a first event with a non-null prev_hash (hash consistent) as link_broken', () => {
    const [first] = makeChain(1);
    first.prev_hash = 'a'.repeat(64);
    const { hash: _old, ...unhashed } = first;
    first.hash = computeEventHash(unhashed);
    const r = verifyChain(SID, [first]);
    expect(r).toMatchObject({ ok: false, checked: 1, first_bad_seq: 1, reason: 'link_broken', head_seq: null, head_hash: null });
    expect(r.detail).toMatch(/first event must have prev_hash null/);
  });

  it('reports the session check before seq, and seq before hash', () => {
    const chain = makeChain(3);
    const bad = { ...chain[2], session_id: 'x', seq: 9, hash: '0'.repeat(64) };
    expect(verifyChain(SID, [chain[0], chain[1], bad]).reason).toBe('session_mismatch');
    expect(verifyChain(SID, [chain[0], chain[1], { ...bad, session_id: SID }]).reason).toBe('gap');
  });

  it('treats content that cannot be canonicalised as changed content', () => {
    const chain = makeChain(2);
    (chain[1].content as { [k: string]: JsonValue }).n = NaN;
    expect(verifyChain(SID, chain)).toMatchObject({ ok: false, first_bad_seq: 2, reason: 'content_changed' });
  });

  it('streams: push returns the break once, then ignores further events', () => {
    const chain = makeChain(5);
    chain[1].content = 'tampered';
    const v = new ChainVerifier(SID);
    expect(v.push(chain[0])).toBeNull();
    const brk = v.push(chain[1]);
    expect(brk).toMatchObject({ seq: 2, reason: 'content_changed' });
    expect(v.push(chain[2])).toBeNull();
    expect(v.push(chain[3])).toBeNull();
    expect(v.result()).toMatchObject({ ok: false, checked: 2, first_bad_seq: 2, head_seq: 1, head_hash: chain[0].hash });
  });

  it('verifyChain stops consuming the iterable at the first break', () => {
    const chain = makeChain(5);
    chain[1].content = 'tampered';
    let pulled = 0;
    function* rows(): Generator<ChainEvent> {
      for (const e of chain) {
        pulled++;
        yield e;
      }
    }
    expect(verifyChain(SID, rows()).first_bad_seq).toBe(2);
    expect(pulled).toBe(2);
  });

  it('throws a TypeError for bigint columns left as strings (caller bug, not tampering)', () => {
    const [first] = makeChain(1);
    const v = new ChainVerifier(SID);
    expect(() => v.push({ ...first, seq: '1' as unknown as number })).toThrow(TypeError);
    expect(() => v.push({ ...first, ts: 1.5 })).toThrow(/ts must be a safe integer/);
    expect(v.result()).toEqual({ ok: true, checked: 0, head_seq: null, head_hash: null });
  });

  it('exports the break reasons', () => {
    expect(ChainBreakReason).toEqual({
      ContentChanged: 'content_changed',
      LinkBroken: 'link_broken',
      Gap: 'gap',
      Order: 'order',
      SessionMismatch: 'session_mismatch',
    });
  });
});
