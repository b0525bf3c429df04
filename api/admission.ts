/**
 * Admission control: how many writes this API process has sent to Temporal and not yet
 * answered, in all, as creates, and per session. Beyond a bound a write is refused at once
 * (503 for the process, 429 for one session, both with `Retry-After`) before anything is
 * sent, so it is certainly not stored; a client retries it later. Without it, overload queued
 * writes until the write deadline and answered 503 for writes that were then stored (issue 9).
 * The bounds and their reasons are in lib/domain/limits.ts (TUNABLE).
 *
 * The create bound adapts in two ways. It follows measured latency (AIMD, as TCP's
 * congestion window): a create that took longer than `LIMITS.createLatencyTargetMs` shrinks
 * it by a quarter (at most once a second, down to the floor), a faster one
 * widens it by one (up to CREATES_IN_FLIGHT_MAX). That signal comes late (a create's latency
 * is known when it ends), so the bound is also capped by Little's law: creates in flight at
 * most the rate they have been completing at while creates were continuously in flight, times
 * the latency target. A create admitted then has at most about 5 s of creates ahead of it;
 * when Temporal or the worker slows down, fewer creates are accepted, not slower ones (issue 9:
 * a bound that had grown back by one per fast create let retry waves in that took 10-11 s).
 *
 * Neither ever goes below `LIMITS.createsInFlightFloor` (100): the load the product is sized
 * for, the seed's 100 sessions created at once, is never refused, however slow the machine has
 * been (issue 17: with a floor of 16, a few creates over 5 s on a loaded 2-core machine shrank
 * the bound to 77 and 19 of the seed's 100 inits were refused). Beyond it, up to
 * CREATES_IN_FLIGHT_MAX, the bound adapts as above.
 *
 * `Retry-After` grows with the queue: a refused client is told how long the writes already
 * in flight take to drain at the rate this process has been completing them, so 1,000
 * clients refused at once do not all come back a second later to be refused again.
 */
import { DomainError, ErrorCode } from '../lib/domain/errors';
import { LIMITS, TUNABLE } from '../lib/domain/limits';

export interface AdmissionLimits {
  writesInFlightMax: number;
  createsInFlightMax: number;
  sessionWritesInFlightMax: number;
  /** Creates always admitted (while the process bound allows); default `LIMITS.createsInFlightFloor`, at most createsInFlightMax. */
  createsInFlightFloor?: number;
}

export type WriteKind = 'create' | 'write';

/** Milliseconds now; injectable so tests can drive the rate estimate. */
export type Clock = () => number;

/**
 * Completions per second over the last `LIMITS.retryAfterWindowS` seconds, in one-second
 * buckets (constant memory, constant time per write).
 */
export class CompletionRate {
  private readonly counts: number[];
  private readonly seconds: number[];

  constructor(
    private readonly now: Clock,
    private readonly windowS = LIMITS.retryAfterWindowS,
    private readonly since = now(),
  ) {
    this.counts = new Array<number>(windowS).fill(0);
    this.seconds = new Array<number>(windowS).fill(-1);
  }

  record(): void {
    const s = Math.floor(this.now() / 1000);
    const i = s % this.windowS;
    if (this.seconds[i] !== s) {
      this.seconds[i] = s;
      this.counts[i] = 0;
    }
    this.counts[i]++;
  }

  /** Completions per second, or undefined while the window is not yet full and nothing completed (no measure yet). */
  perSecond(): number | undefined {
    const now = this.now();
    const s = Math.floor(now / 1000);
    let n = 0;
    for (let i = 0; i < this.windowS; i++) if (s - this.seconds[i] < this.windowS) n += this.counts[i];
    const spanS = Math.min(this.windowS, Math.max(1, (now - this.since) / 1000));
    if (n === 0 && spanS < this.windowS) return undefined;
    return n / spanS;
  }
}

/** Additive-increase, multiplicative-decrease bound on creates in flight, driven by their latency. */
export class AdaptiveBound {
  private value: number;
  private lastDecrease = -Infinity;

  constructor(
    private readonly max: number,
    private readonly now: Clock,
    private readonly floor = Math.min(max, LIMITS.createsInFlightFloor),
    private readonly targetMs = LIMITS.createLatencyTargetMs,
  ) {
    this.value = max;
  }

  get current(): number {
    return Math.floor(this.value);
  }

  /** One completed create that took `ms`. */
  observe(ms: number): void {
    if (ms <= this.targetMs) {
      this.value = Math.min(this.max, this.value + 1);
      return;
    }
    const now = this.now();
    // Once a second at most: the creates admitted together complete together, and one slow
    // wave must not collapse the bound to the floor.
    if (now - this.lastDecrease < 1000) return;
    this.lastDecrease = now;
    this.value = Math.max(this.floor, this.value * 0.75);
  }
}

/**
 * Completions per second while the work was continuously in flight (at least one in flight
 * since `busySince`), over the last `windowMs`: the throughput the system delivers under load,
 * which is what Little's law needs. Idle time is not counted, so a quiet minute before a burst
 * does not read as a slow system. Memory: the completion times of one window.
 */
export class BusyRate {
  private busySince: number | undefined;
  private readonly done: number[] = [];

  constructor(
    private readonly now: Clock,
    private readonly windowMs = LIMITS.createRateWindowMs,
  ) {}

  /** One more in flight; `before` were in flight already. */
  started(before: number): void {
    if (before === 0 || this.busySince === undefined) this.busySince = this.now();
  }

  /** One completed; `after` are still in flight. */
  completed(after: number): void {
    const now = this.now();
    this.done.push(now);
    this.prune(now);
    if (after === 0) this.busySince = undefined;
  }

  /**
   * Completions per second over the busy part of the window; undefined while nothing is in
   * flight or before there is a measure (less than a second busy, or nothing completed yet
   * within `stuckMs`); 0 when nothing completed for `stuckMs` of busy time.
   */
  perSecond(stuckMs = LIMITS.createLatencyTargetMs): number | undefined {
    if (this.busySince === undefined) return undefined;
    const now = this.now();
    this.prune(now);
    const from = Math.max(this.busySince, now - this.windowMs);
    const spanMs = now - from;
    let n = 0;
    for (let i = this.done.length - 1; i >= 0 && this.done[i] >= from; i--) n++;
    if (n === 0) return spanMs >= stuckMs ? 0 : undefined;
    if (spanMs < 1000) return undefined;
    return n / (spanMs / 1000);
  }

  private prune(now: number): void {
    let k = 0;
    while (k < this.done.length && this.done[k] < now - this.windowMs) k++;
    if (k > 0) this.done.splice(0, k);
  }
}

/** Seconds to wait before retrying, bounded to LIMITS.retryAfterS..LIMITS.retryAfterMaxS. */
export function boundedRetryAfter(seconds: number): number {
  if (!Number.isFinite(seconds)) return LIMITS.retryAfterMaxS;
  return Math.min(LIMITS.retryAfterMaxS, Math.max(LIMITS.retryAfterS, Math.ceil(seconds)));
}

export class Admission {
  private total = 0;
  private creates = 0;
  private readonly perKey = new Map<string, number>();
  private readonly writeRate: CompletionRate;
  private readonly createRate: CompletionRate;
  private readonly createBound: AdaptiveBound;
  private readonly createThroughput: BusyRate;
  /** The create bound never goes below this. */
  private readonly createFloor: number;
  /** When the next refused create's turn comes (ms); see createRetryAfterS. */
  private nextCreateTurn = -Infinity;
  /** Exponentially weighted mean time a write spends in flight (ms); undefined before the first. */
  private latencyMs: number | undefined;
  /** The same for creates alone. */
  private createLatencyMs: number | undefined;

  constructor(
    private readonly limits: AdmissionLimits,
    private readonly now: Clock = Date.now,
  ) {
    this.writeRate = new CompletionRate(now);
    this.createRate = new CompletionRate(now);
    this.createFloor = Math.min(limits.createsInFlightMax, limits.createsInFlightFloor ?? LIMITS.createsInFlightFloor);
    this.createBound = new AdaptiveBound(limits.createsInFlightMax, now, this.createFloor);
    this.createThroughput = new BusyRate(now);
  }

  /** Runs `fn` as one admitted write to `key` (a session id, or an intent's), or refuses it without calling `fn`. */
  async run<T>(kind: WriteKind, key: string, fn: () => Promise<T>): Promise<T> {
    this.admit(kind, key);
    const started = this.now();
    try {
      return await fn();
    } finally {
      this.release(kind, key, this.now() - started);
    }
  }

  /** Writes in flight now (for tests and diagnostics). */
  get inFlight(): { total: number; creates: number; keys: number } {
    return { total: this.total, creates: this.creates, keys: this.perKey.size };
  }

  /** The create bound now: adapted to latency, capped by throughput × latency target, at most CREATES_IN_FLIGHT_MAX. */
  get createsBound(): number {
    return this.createLimit().bound;
  }

  /** The create bound in force and, when throughput caps it, the throughput (creates/s). */
  private createLimit(): { bound: number; perSecond?: number } {
    const aimd = this.createBound.current;
    const rate = this.createThroughput.perSecond();
    if (rate === undefined) return { bound: aimd };
    const little = Math.max(Math.min(aimd, this.createFloor), Math.floor((rate * LIMITS.createLatencyTargetMs) / 1000));
    return little < aimd ? { bound: little, perSecond: rate } : { bound: aimd };
  }

  /**
   * The refusal a write of `kind` would get now, or undefined when it would be admitted
   * (nothing is counted): lets a route refuse before it reads the request body.
   */
  refusal(kind: WriteKind, key: string): DomainError | undefined {
    try {
      this.check(kind, key);
      return undefined;
    } catch (e) {
      return e as DomainError;
    }
  }

  /**
   * Retry-After for a refusal now: the time the `queued` writes ahead take to drain at the
   * measured rate (for a create, its own turn after them: createRetryAfterS); 1 s before
   * anything was measured; the maximum when nothing completed in the whole window (the
   * writes in flight are stuck, not slow). A create's answer moves its turn along: call it
   * once per refusal sent.
   */
  retryAfterS(kind: 'process' | 'create' | 'session', queued: number): number {
    if (kind === 'session') return boundedRetryAfter((this.latencyMs ?? 0) / 1000);
    if (kind === 'create') return this.createRetryAfterS(queued);
    const rate = this.writeRate.perSecond();
    if (rate === undefined) return LIMITS.retryAfterS;
    return boundedRetryAfter(rate > 0 ? queued / rate : Infinity);
  }

  /**
   * Retry-After of a refused create: a turn of its own, after the creates in flight have
   * drained and after the turns already handed out, one per 1/rate seconds. Refused clients
   * then come back spread at the rate creates complete instead of all in the same second to
   * be refused again (each refusal costs the API and the client CPU the worker needs).
   * The rate is what creates can complete at: the busy-time throughput (else the last
   * window's) or the latency-adapted bound over the creates' recent latency (1 s to the
   * latency target; the target before any create completed), whichever is higher, and turns
   * come `LIMITS.createTurnRateFactor` faster than that: a client back a little early is
   * refused again cheaply, one back late leaves the worker idle (handing turns out at the
   * measured rate alone made that rate the arrival rate, and the throughput fell to it).
   */
  private createRetryAfterS(queued: number): number {
    const busy = this.createThroughput.perSecond();
    if (busy === 0) return LIMITS.retryAfterMaxS; // nothing completed for a while: stuck
    const measured = busy ?? this.createRate.perSecond() ?? 0;
    // What the latency-adapted bound completes per second at the creates' recent latency (at least 1 s, at most the target).
    const latencyS = Math.min(LIMITS.createLatencyTargetMs, Math.max(1000, this.createLatencyMs ?? LIMITS.createLatencyTargetMs)) / 1000;
    // The latency bound, not the throughput cap: the cap follows the arrivals, and turns drawn from it would thin them further.
    const rate = Math.max(measured, this.createBound.current / latencyS) * LIMITS.createTurnRateFactor;
    const now = this.now();
    const turn = Math.max(now + (queued / rate) * 1000, this.nextCreateTurn);
    this.nextCreateTurn = Math.min(turn + 1000 / rate, now + LIMITS.retryAfterMaxS * 1000);
    return boundedRetryAfter((turn - now) / 1000);
  }

  private admit(kind: WriteKind, key: string): number {
    const n = this.check(kind, key);
    if (kind === 'create') this.createThroughput.started(this.creates);
    this.total++;
    if (kind === 'create') this.creates++;
    this.perKey.set(key, n + 1);
    return n;
  }

  /** Throws the refusal for a write of `kind` to `key` now; returns the writes in flight to `key`. */
  private check(kind: WriteKind, key: string): number {
    const l = this.limits;
    if (this.total >= l.writesInFlightMax) {
      throw refusal(ErrorCode.Unavailable, `this Timekeeper API process already has ${this.total} writes in flight, the most it sends to Temporal at once (${TUNABLE.writesInFlightMax.env}=${l.writesInFlightMax})`, this.retryAfterS('process', this.total));
    }
    if (kind === 'create') {
      const { bound: createsMax, perSecond } = this.createLimit();
      if (this.creates >= createsMax) {
        const target = `${LIMITS.createLatencyTargetMs / 1000} s`;
        const max = `at most ${TUNABLE.createsInFlightMax.env}=${l.createsInFlightMax}`;
        const bound =
          perSecond !== undefined
            ? `${createsMax} now: creates complete at ${perSecond.toFixed(1)}/s, so more would wait over ${target}; ${max}`
            : createsMax < l.createsInFlightMax
              ? `${createsMax} now: creates took over ${target}, ${max}`
              : `${TUNABLE.createsInFlightMax.env}=${l.createsInFlightMax}`;
        throw refusal(ErrorCode.Unavailable, `this Timekeeper API process already has ${this.creates} session creates in flight (${bound})`, this.retryAfterS('create', this.creates));
      }
    }
    const n = this.perKey.get(key) ?? 0;
    if (kind === 'write' && n >= l.sessionWritesInFlightMax) {
      throw refusal(ErrorCode.RateLimited, `${key} already has ${n} writes in flight through this API process (${TUNABLE.sessionWritesInFlightMax.env}=${l.sessionWritesInFlightMax})`, this.retryAfterS('session', n));
    }
    return n;
  }

  private release(kind: WriteKind, key: string, ms: number): void {
    this.total--;
    this.writeRate.record();
    if (kind === 'create') {
      this.creates--;
      this.createRate.record();
      this.createThroughput.completed(this.creates);
      this.createLatencyMs = ewma(this.createLatencyMs, ms);
      this.createBound.observe(ms);
    }
    this.latencyMs = ewma(this.latencyMs, ms);
    const n = (this.perKey.get(key) ?? 1) - 1;
    if (n > 0) this.perKey.set(key, n);
    else this.perKey.delete(key);
  }
}

function ewma(mean: number | undefined, ms: number): number {
  return mean === undefined ? ms : mean + LIMITS.retryAfterLatencyWeight * (ms - mean);
}

function refusal(code: ErrorCode, why: string, retryAfterS: number): DomainError {
  return new DomainError(code, `${why}; nothing was sent or stored: retry after ${retryAfterS} s`, [], { may_be_stored: false }, retryAfterS);
}
