/** Admission control: bounded writes in flight per process, per create, per session; refusals name the bound, send nothing, and say when to come back (Retry-After grows with the queue). */
import { AdaptiveBound, Admission, boundedRetryAfter, BusyRate, CompletionRate } from '../../api/admission';
import { DomainError, ErrorCode } from '../../lib/domain/errors';

const limits = { writesInFlightMax: 4, createsInFlightMax: 2, sessionWritesInFlightMax: 2 };

function gate() {
  let open!: () => void;
  const p = new Promise<void>((r) => (open = r));
  return { p, open };
}

async function refusalOf(p: Promise<unknown>): Promise<DomainError> {
  try {
    await p;
  } catch (e) {
    return e as DomainError;
  }
  throw new Error('expected a refusal');
}

test('beyond the per-session bound: 429 with Retry-After, the write is never started', async () => {
  const a = new Admission(limits);
  const g = gate();
  const held = [a.run('write', 's1', () => g.p), a.run('write', 's1', () => g.p)];
  let called = false;
  const e = await refusalOf(a.run('write', 's1', async () => void (called = true)));
  expect(called).toBe(false);
  expect(e.code).toBe(ErrorCode.RateLimited);
  expect(e.retryAfterS).toBe(1);
  expect(e.extra).toEqual({ may_be_stored: false });
  expect(e.message).toMatch(/SESSION_WRITES_IN_FLIGHT_MAX=2.*nothing was sent/);
  // Another session is not affected.
  await a.run('write', 's2', async () => undefined);
  g.open();
  await Promise.all(held);
  expect(a.inFlight).toEqual({ total: 0, creates: 0, keys: 0 });
  await a.run('write', 's1', async () => undefined);
});

test('beyond the process and create bounds: 503 naming the variable; slots come back after failures too', async () => {
  const a = new Admission(limits);
  const g = gate();
  const creates = [a.run('create', 'c1', () => g.p), a.run('create', 'c2', () => g.p)];
  expect((await refusalOf(a.run('create', 'c3', async () => undefined))).message).toMatch(/CREATES_IN_FLIGHT_MAX=2/);
  const writes = [a.run('write', 'w1', () => g.p), a.run('write', 'w2', () => g.p)];
  const e = await refusalOf(a.run('write', 'w3', async () => undefined));
  expect(e.code).toBe(ErrorCode.Unavailable);
  expect(e.message).toMatch(/4 writes in flight.*WRITES_IN_FLIGHT_MAX=4/);
  g.open();
  await Promise.all([...creates, ...writes]);
  await expect(a.run('write', 'w1', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  expect(a.inFlight).toEqual({ total: 0, creates: 0, keys: 0 });
});

/** A clock the test moves by hand. */
function fakeClock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

/** Holds `n` writes of `kind` in flight; `open` lets them finish. */
function hold(a: Admission, kind: 'create' | 'write', n: number, prefix: string) {
  const g = gate();
  const runs = Array.from({ length: n }, (_, i) => a.run(kind, `${prefix}${i}`, () => g.p));
  return { open: async () => (g.open(), await Promise.all(runs)) };
}

/** Ten waves of 4 creates, one wave a second, each create taking `ms`: 4/s completed for 10 s. */
async function createWaves(a: Admission, c: ReturnType<typeof fakeClock>, ms: number) {
  for (let s = 0; s < 10; s++) {
    const h = hold(a, 'create', 4, `c${s}_`);
    c.advance(ms);
    await h.open();
    c.advance(1000 - ms);
  }
}

test('Retry-After grows with the queue: writes in flight over the rate they completed at, bounded 1..30 s', async () => {
  const c = fakeClock();
  const a = new Admission({ writesInFlightMax: 100, createsInFlightMax: 100, sessionWritesInFlightMax: 100 }, c.now);
  // Before anything was measured: the least, 1 s.
  expect(a.retryAfterS('process', 100)).toBe(1);
  // 20 writes complete per second for 10 s: 20/s.
  for (let s = 0; s < 10; s++) {
    c.advance(1000);
    await hold(a, 'write', 20, `s${s}_`).open();
  }
  expect(a.retryAfterS('process', 100)).toBe(5); // 100 ahead at 20/s
  expect(a.retryAfterS('process', 10)).toBe(1); // half a second, rounded up to the least
  expect(a.retryAfterS('process', 10_000)).toBe(30); // 500 s, capped
  // The rate follows the load: 10 quiet seconds later nothing completed while writes wait: stuck, the maximum.
  c.advance(10_000);
  expect(a.retryAfterS('process', 100)).toBe(30);
});

test('a refusal carries the scaled Retry-After in its error and message; a per-session 429 waits about one write', async () => {
  const c = fakeClock();
  const a = new Admission({ writesInFlightMax: 1000, createsInFlightMax: 40, sessionWritesInFlightMax: 1 }, c.now);
  // Creates finish at 4/s (each takes 2.5 s) for 10 s.
  await createWaves(a, c, 2500);
  const h = hold(a, 'create', 40, 'full');
  const e = await refusalOf(a.run('create', 'one more', async () => undefined));
  expect(e.code).toBe(ErrorCode.Unavailable);
  // 40 ahead; creates can complete at 16/s (40 in flight, each taking 2.5 s: more than the
  // 4/s measured), turns come 1.25 × that fast: 20/s, so 2 s.
  expect(e.retryAfterS).toBe(2);
  expect(e.message).toMatch(/retry after 2 s/);
  // One session's writes drain in about one write's latency (2.5 s here): 3 s.
  const g = gate();
  const held = a.run('write', 'sess', () => g.p);
  const r = await refusalOf(a.run('write', 'sess', async () => undefined));
  expect(r.code).toBe(ErrorCode.RateLimited);
  expect(r.retryAfterS).toBe(3);
  g.open();
  await held;
  await h.open();
});

test('the completion rate is measured over the last window only', () => {
  const c = fakeClock(0);
  const r = new CompletionRate(c.now, 10);
  expect(r.perSecond()).toBeUndefined();
  for (let i = 0; i < 30; i++) r.record();
  c.advance(2000);
  expect(r.perSecond()).toBe(15); // 30 in the first 2 s
  c.advance(20_000);
  expect(r.perSecond()).toBe(0); // all of them left the window
  expect(boundedRetryAfter(Infinity)).toBe(30);
  expect(boundedRetryAfter(0.2)).toBe(1);
  expect(boundedRetryAfter(7.2)).toBe(8);
});

test('the create bound shrinks by a quarter (once a second at most) while creates are slow, to a floor, and grows back by one per fast create', () => {
  const c = fakeClock();
  const b = new AdaptiveBound(128, c.now, 16, 5000);
  expect(b.current).toBe(128);
  // A wave of slow creates completing together: one decrease.
  for (let i = 0; i < 50; i++) b.observe(8000);
  expect(b.current).toBe(96);
  for (let s = 0; s < 20; s++) {
    c.advance(1000);
    b.observe(8000);
  }
  expect(b.current).toBe(16);
  for (let i = 0; i < 10; i++) b.observe(300);
  expect(b.current).toBe(26);
  for (let i = 0; i < 500; i++) b.observe(300);
  expect(b.current).toBe(128);
});

test('slow creates make admission refuse earlier, naming the adapted bound', async () => {
  const c = fakeClock();
  const a = new Admission({ writesInFlightMax: 1000, createsInFlightMax: 20, sessionWritesInFlightMax: 10, createsInFlightFloor: 16 }, c.now);
  const g = gate();
  const slow = a.run('create', 'slow', () => g.p);
  c.advance(6000);
  g.open();
  await slow;
  expect(a.createsBound).toBe(16); // 20 × 0.75 = 15, floored at 16
  const h = hold(a, 'create', 16, 'x');
  const e = await refusalOf(a.run('create', 'one more', async () => undefined));
  expect(e.message).toMatch(/16 session creates in flight \(16 now: creates took over 5 s, at most CREATES_IN_FLIGHT_MAX=20\)/);
  await h.open();
});

test('the busy rate counts completions while work was continuously in flight, not the idle time before it', () => {
  const c = fakeClock(0);
  const r = new BusyRate(c.now, 5000);
  expect(r.perSecond()).toBeUndefined(); // nothing in flight
  c.advance(60_000); // a quiet minute
  r.started(0);
  r.started(1);
  c.advance(500);
  r.completed(1);
  expect(r.perSecond()).toBeUndefined(); // less than a second busy
  c.advance(1500);
  r.completed(0);
  expect(r.perSecond()).toBeUndefined(); // idle again: no measure, not a slow system
  c.advance(1000);
  r.started(0);
  for (let i = 0; i < 20; i++) {
    r.started(1);
    c.advance(100);
    r.completed(1);
  }
  expect(r.perSecond()).toBe(10); // 20 in 2 s busy
  c.advance(6000);
  expect(r.perSecond()).toBe(0); // still one in flight, nothing completed for a whole window: stuck
});

test('the create bound is capped by throughput × the latency target, so accepted creates do not queue behind a slow engine', async () => {
  const c = fakeClock();
  const a = new Admission({ writesInFlightMax: 1000, createsInFlightMax: 100, sessionWritesInFlightMax: 10, createsInFlightFloor: 16 }, c.now);
  expect(a.createsBound).toBe(100); // nothing measured: the configured bound
  // Creates kept in flight, completing at 6 per second (each fast: the latency bound alone would not shrink).
  const first = hold(a, 'create', 1, 'keep');
  for (let s = 0; s < 5; s++) {
    for (let i = 0; i < 6; i++) {
      c.advance(1000 / 6);
      await hold(a, 'create', 1, `s${s}_${i}`).open();
    }
  }
  expect(a.createsBound).toBe(30); // 6/s × 5 s
  const h = hold(a, 'create', 29, 'more'); // 30 in flight with the one kept
  // refusal() tells without counting; run() then refuses the same way and never calls the write.
  const told = a.refusal('create', 'x');
  expect(told?.message).toMatch(/30 session creates in flight \(30 now: creates complete at 6\.0\/s, so more would wait over 5 s; at most CREATES_IN_FLIGHT_MAX=100\)/);
  expect(a.inFlight.creates).toBe(30);
  let called = false;
  const e = await refusalOf(a.run('create', 'x', async () => void (called = true)));
  expect(called).toBe(false);
  expect(e.extra).toEqual({ may_be_stored: false });
  await h.open();
  await first.open();
  expect(a.refusal('create', 'x')).toBeUndefined();
});

test('refused creates get turns of their own: Retry-After spreads them at the rate creates can complete, up to 30 s', async () => {
  const c = fakeClock();
  const a = new Admission({ writesInFlightMax: 10_000, createsInFlightMax: 40, sessionWritesInFlightMax: 10, createsInFlightFloor: 16 }, c.now);
  // Creates finish at 4/s for 10 s, each taking 4 s (in waves: no busy-time measure, the window's rate).
  await createWaves(a, c, 4000);
  const h = hold(a, 'create', 40, 'full');
  const ras = Array.from({ length: 12 }, () => a.refusal('create', 'x')!.retryAfterS);
  // Creates can complete at 10/s (the bound, 40, at their 4 s latency; 4/s measured), turns
  // 1.25 × faster: 12.5/s. 40 ahead: the first turn in 3.2 s, then one every 0.08 s.
  expect(ras).toEqual([4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5]);
  for (let i = 0; i < 400; i++) a.refusal('create', 'x');
  expect(a.refusal('create', 'x')!.retryAfterS).toBe(30);
  await h.open();
});

test("the seed's load is never refused: 100 creates at once are admitted after slow creates and at a low measured rate", async () => {
  const c = fakeClock();
  // The defaults: CREATES_IN_FLIGHT_MAX=128, the floor LIMITS.createsInFlightFloor (100).
  const a = new Admission({ writesInFlightMax: 200, createsInFlightMax: 128, sessionWritesInFlightMax: 64 }, c.now);
  // A burst of slow creates (each 8 s, one wave a second) shrinks the latency bound as far as it goes...
  for (let s = 0; s < 10; s++) {
    const h = hold(a, 'create', 4, `slow${s}_`);
    c.advance(8000);
    await h.open();
  }
  expect(a.createsBound).toBe(100);
  // ...and creates completing at 2/s while most of the seed's 100 are in flight (Little's law
  // alone would allow 10) cap it no lower either: the rest of the 100 are admitted.
  const seed = hold(a, 'create', 95, 'seed');
  for (let i = 0; i < 10; i++) {
    c.advance(500);
    await hold(a, 'create', 1, `trickle${i}`).open();
  }
  expect(a.createsBound).toBe(100);
  const rest = hold(a, 'create', 5, 'rest');
  expect(a.inFlight.creates).toBe(100);
  // The 101st is refused as before: honest, at once, with Retry-After.
  const e = await refusalOf(a.run('create', 'one more', async () => undefined));
  expect(e.extra).toEqual({ may_be_stored: false });
  expect(e.retryAfterS).toBeGreaterThanOrEqual(1);
  await seed.open();
  await rest.open();
});
