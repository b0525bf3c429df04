/**
 * Measurement helpers shared by the benches (timeline, soak): latency series with
 * nearest-rank percentiles, a bounded-concurrency pool, and one way to time a call and
 * classify its failure (HTTP status and problem type, timeout, or network error code).
 */
import { performance } from 'node:perf_hooks';
import { TimekeeperApiError } from '../sdk/client';

/** A failure a target already classified: `kind` is the short label it is counted under. */
export class BenchFailure extends Error {
  constructor(
    readonly kind: string,
    message: string,
  ) {
    super(message);
  }
}

/** Latencies of successful calls plus the failures of one kind of call. */
export class Series {
  readonly ms: number[] = [];
  errors = 0;
  readonly samples: string[] = [];
  /** Failures counted by a short kind ("HTTP 503 unavailable", "ECONNRESET"), to see the mix at a glance. */
  readonly kinds = new Map<string, number>();

  ok(ms: number): void {
    this.ms.push(ms);
  }

  fail(kind: string, what: string): void {
    this.errors++;
    this.kinds.set(kind, (this.kinds.get(kind) ?? 0) + 1);
    if (this.samples.length < 5) this.samples.push(what.length > 300 ? what.slice(0, 300) + '…' : what);
  }

  /** Nearest-rank percentile, so p99 of 500 samples is an observed value, not an interpolation. */
  pct(p: number): number {
    if (this.ms.length === 0) return NaN;
    const sorted = [...this.ms].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
  }

  max(): number {
    return this.ms.length ? this.ms.reduce((a, b) => Math.max(a, b), -Infinity) : NaN;
  }
}

/** Runs fn over 0..n-1 with at most `concurrency` calls in flight; returns the wall time in ms. */
export async function runPool(n: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (next < n) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  return performance.now() - t0;
}

/** The last path segment of a problem-details `type`, e.g. "unavailable"; empty when there is none. */
export function problemType(body: unknown): string {
  const type = (body as { type?: unknown } | null)?.type;
  return typeof type === 'string' ? (type.split('/').pop() ?? '') : '';
}

export const text = (body: unknown) => (typeof body === 'string' ? body : JSON.stringify(body));

/**
 * Times `call` into `series`: its latency when it resolves, else its failure by kind. The
 * latency is the whole call (for HTTP: request, response and reading its body).
 */
export async function timed<R>(series: Series, label: string, call: () => Promise<R>): Promise<R | undefined> {
  const t0 = performance.now();
  try {
    const r = await call();
    series.ok(performance.now() - t0);
    return r;
  } catch (err) {
    if (err instanceof BenchFailure) series.fail(err.kind, `${label}: ${err.message}`);
    else if (err instanceof TimekeeperApiError) series.fail(`HTTP ${err.status} ${problemType(err.body)}`.trim(), `${label}: HTTP ${err.status} ${text(err.body)}`);
    else {
      // fetch reports a network failure as "fetch failed" with the socket error as its cause.
      const e = err as Error & { code?: string; cause?: Error & { code?: string } };
      const kind = e.name === 'TimeoutError' ? 'timeout' : (e.cause?.code ?? e.code ?? e.name ?? e.message);
      series.fail(kind, `${label}: ${e.message}${e.cause?.message ? ` (${e.cause.message})` : ''}`);
    }
    return undefined;
  }
}

export const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
export const rate = (count: number, ms: number) => (ms > 0 ? (count * 1000) / ms : NaN);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const LATENCY_HEADER = `  ${'call'.padEnd(8)} ${'ok'.padStart(6)} ${'err'.padStart(5)} ${'p50 ms'.padStart(8)} ${'p95 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'max ms'.padStart(8)}   phase wall / rate`;

/** One table row: count, errors, p50/p95/p99/max and, with a wall time, the rate. */
export function latencyRow(label: string, s: Series, wallMs?: number): string {
  const cells = [label.padEnd(8), String(s.ms.length).padStart(6), String(s.errors).padStart(5)];
  for (const v of [s.pct(50), s.pct(95), s.pct(99), s.max()]) cells.push(f1(v).padStart(8));
  cells.push(wallMs === undefined ? '' : `${(wallMs / 1000).toFixed(2).padStart(7)} s  ${f1(rate(s.ms.length, wallMs)).padStart(7)}/s`);
  return '  ' + cells.join(' ');
}
