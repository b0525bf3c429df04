/**
 * Admission control: how many writes this API process has sent to Temporal and not yet
 * answered, in all, as creates, and per session. Beyond a bound a write is refused at once
 * (503 for the process, 429 for one session, both with `Retry-After`) before anything is
 * sent, so it is certainly not stored; a client retries it later. Without it, overload queued
 * writes until the write deadline and answered 503 for writes that were then stored (issue 9).
 * The bounds and their reasons are in lib/domain/limits.ts (TUNABLE).
 */
import { DomainError, ErrorCode } from '../lib/domain/errors';
import { LIMITS, TUNABLE } from '../lib/domain/limits';

export interface AdmissionLimits {
  writesInFlightMax: number;
  createsInFlightMax: number;
  sessionWritesInFlightMax: number;
}

export type WriteKind = 'create' | 'write';

export class Admission {
  private total = 0;
  private creates = 0;
  private readonly perKey = new Map<string, number>();

  constructor(private readonly limits: AdmissionLimits) {}

  /** Runs `fn` as one admitted write to `key` (a session id, or an intent's), or refuses it without calling `fn`. */
  async run<T>(kind: WriteKind, key: string, fn: () => Promise<T>): Promise<T> {
    this.admit(kind, key);
    try {
      return await fn();
    } finally {
      this.release(kind, key);
    }
  }

  /** Writes in flight now (for tests and diagnostics). */
  get inFlight(): { total: number; creates: number; keys: number } {
    return { total: this.total, creates: this.creates, keys: this.perKey.size };
  }

  private admit(kind: WriteKind, key: string): void {
    const l = this.limits;
    if (this.total >= l.writesInFlightMax) {
      throw refusal(ErrorCode.Unavailable, `this Timekeeper API process already has ${this.total} writes in flight, the most it sends to Temporal at once (${TUNABLE.writesInFlightMax.env}=${l.writesInFlightMax})`);
    }
    if (kind === 'create' && this.creates >= l.createsInFlightMax) {
      throw refusal(ErrorCode.Unavailable, `this Timekeeper API process already has ${this.creates} session creates in flight (${TUNABLE.createsInFlightMax.env}=${l.createsInFlightMax})`);
    }
    const n = this.perKey.get(key) ?? 0;
    if (kind === 'write' && n >= l.sessionWritesInFlightMax) {
      throw refusal(ErrorCode.RateLimited, `${key} already has ${n} writes in flight through this API process (${TUNABLE.sessionWritesInFlightMax.env}=${l.sessionWritesInFlightMax})`);
    }
    this.total++;
    if (kind === 'create') this.creates++;
    this.perKey.set(key, n + 1);
  }

  private release(kind: WriteKind, key: string): void {
    this.total--;
    if (kind === 'create') this.creates--;
    const n = (this.perKey.get(key) ?? 1) - 1;
    if (n > 0) this.perKey.set(key, n);
    else this.perKey.delete(key);
  }
}

function refusal(code: ErrorCode, why: string): DomainError {
  return new DomainError(code, `${why}; nothing was sent or stored: retry after ${LIMITS.retryAfterS} s`, [], { may_be_stored: false }, LIMITS.retryAfterS);
}
