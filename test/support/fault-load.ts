/**
 * Load as a demanding client makes it: every session appends continuously, one request at a
 * time, and retries a failed append with the same idempotency key as the errors advise. It
 * records what was acknowledged, when, and every refusal, so a fault test can check
 * exactly-once storage and measure how long each session was unwritable.
 */
import { TimekeeperApiError, TimekeeperClient } from '../../sdk/client';
import { SessionStore } from '../../lib/store/sessions';
import type { Pool } from 'pg';
import { sleep } from './wait';

export interface Ack {
  n: number;
  seq: number;
  eventId: string;
  at: number;
}

export interface SessionLoad {
  id: string;
  acks: Ack[];
  /** Appends tried (all attempts). */
  attempts: number;
}

export interface LoadErrors {
  /** "status message-prefix" → count */
  byKind: Map<string, number>;
  total: number;
}

export interface Load {
  sessions: SessionLoad[];
  errors: LoadErrors;
  /** Stops the appenders; resolves when each has finished its request in flight. */
  stop(): Promise<void>;
}


export function errorKind(err: unknown): string {
  if (err instanceof TimekeeperApiError) return `${err.status} ${String(err.problem?.detail ?? '').replace(/session \S+/g, 'session …').replace(/\d+ ms/g, 'N ms').slice(0, 90)}`;
  return `network ${(err as Error).message?.slice(0, 60)}`;
}

export function recordError(errors: LoadErrors, err: unknown): void {
  const k = errorKind(err);
  errors.byKind.set(k, (errors.byKind.get(k) ?? 0) + 1);
  errors.total++;
}

/** Starts one appender per session id (sessions must exist). `pauseMs` between appends of one session. */
export function startLoad(tk: TimekeeperClient, ids: string[], opts: { pauseMs?: number; retryMs?: number } = {}): Load {
  return startAppenders(
    ids,
    async (id, n) => {
      const body = { type: n % 2 ? 'USER_INPUT' : 'LLM_RESPONSE', content: { n }, idempotency_key: `k${n}` } as const;
      const r = await tk.append(id, body);
      return { seq: r.seq, eventId: r.event_id };
    },
    opts,
  );
}

/**
 * The same load on the engine's floor (bench/floor: a workflow whose Update does nothing), so a
 * fault's recovery can be set beside what Temporal itself needs to take writes again after the
 * same fault. An Update is not idempotent by key, so its "seq" is just the append's number.
 */
export function startFloorLoad(update: (id: string, n: number) => Promise<void>, ids: string[], opts: { retryMs?: number } = {}): Load {
  return startAppenders(
    ids,
    async (id, n) => {
      await update(id, n);
      return { seq: n, eventId: `${id}#${n}` };
    },
    opts,
  );
}

function startAppenders(ids: string[], appendOne: (id: string, n: number) => Promise<{ seq: number; eventId: string }>, opts: { pauseMs?: number; retryMs?: number }): Load {
  let stopping = false;
  const errors: LoadErrors = { byKind: new Map(), total: 0 };
  const sessions: SessionLoad[] = ids.map((id) => ({ id, acks: [], attempts: 0 }));
  const loops = sessions.map(async (s) => {
    for (let n = 1; !stopping; n++) {
      for (;;) {
        s.attempts++;
        try {
          const r = await appendOne(s.id, n);
          s.acks.push({ n, seq: r.seq, eventId: r.eventId, at: Date.now() });
          break;
        } catch (err) {
          if (err instanceof TimekeeperApiError && err.status < 500 && err.status !== 429) throw new Error(`append ${s.id}/${n} refused: ${err.status} ${JSON.stringify(err.problem)}`);
          recordError(errors, err);
          // Retry the same key until it is stored, even after a stop: the last append must land.
          const ra = err instanceof TimekeeperApiError ? Number(err.headers.get('retry-after')) : NaN;
          await sleep(Number.isFinite(ra) && ra > 0 ? Math.min(ra * 1000, 2000) : (opts.retryMs ?? 250));
        }
      }
      if (opts.pauseMs) await sleep(opts.pauseMs);
    }
  });
  return {
    sessions,
    errors,
    async stop() {
      stopping = true;
      await Promise.all(loops);
    },
  };
}

/**
 * Exactly-once: each session's chain holds its acknowledged appends once each, in order, with
 * gapless seqs, the acknowledged seq and event id, and verifies. Returns problems found.
 */
export async function checkStored(pool: Pool, load: Load): Promise<string[]> {
  const store = new SessionStore(pool);
  const problems: string[] = [];
  for (const s of load.sessions) {
    const events = await store.listEvents(s.id, { limit: 100_000 });
    const n = s.acks.length;
    const seqs = events.map((e) => e.seq);
    if (seqs.some((q, i) => q !== i + 1)) problems.push(`${s.id}: seqs have a gap`);
    // Appends this load made (a preload may have stored others, keyed otherwise).
    const keys = events.map((e) => e.idempotency_key).filter((k): k is string => !!k && /^k\d+$/.test(k));
    const want = Array.from({ length: n }, (_, i) => `k${i + 1}`);
    if (keys.length !== n || keys.some((k, i) => k !== want[i])) problems.push(`${s.id}: stored ${keys.length} appends, acknowledged ${n}`);
    for (const a of s.acks) {
      const e = events[a.seq - 1];
      if (!e || e.event_id !== a.eventId) problems.push(`${s.id}: ack n=${a.n} seq ${a.seq} is not what is stored`);
    }
    const v = await store.verify(s.id);
    if (!v.ok) problems.push(`${s.id}: verify failed`);
  }
  return problems;
}

/** For each session: ms from `t0` to its first acknowledgement after `t0` (Infinity if none). */
export function recoveryTimes(load: Load, t0: number): number[] {
  return load.sessions.map((s) => {
    const a = s.acks.find((x) => x.at >= t0);
    return a ? a.at - t0 : Infinity;
  });
}

/** Longest gap between consecutive acknowledgements of one session inside [from, to]. */
export function longestStall(load: Load, from: number, to: number): number[] {
  return load.sessions.map((s) => {
    let last = from;
    let worst = 0;
    for (const a of s.acks) {
      if (a.at < from) continue;
      if (a.at > to) break;
      worst = Math.max(worst, a.at - last);
      last = a.at;
    }
    return Math.max(worst, to - last);
  });
}

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return NaN;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
