/**
 * A tiny in-memory RFC 9162 tree for tests: MTH, inclusion paths (§2.1.3.1) and consistency
 * proofs (§2.1.4.1) by the RFC's recursive definitions. Slow on purpose (recomputes subtrees);
 * it stands in for the log's PostgreSQL tree where a test needs a producer, and is itself
 * cross-checked with Go's sumdb/tlog.
 */
import { EMPTY_ROOT, leafHash, nodeHash } from '../../lib/tlog/verify';

/** The largest power of two smaller than n (n > 1). */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

export class MemoryTree {
  readonly leaves: Buffer[] = [];

  append(data: Buffer): number {
    this.leaves.push(leafHash(data));
    return this.leaves.length - 1;
  }

  get size(): number {
    return this.leaves.length;
  }

  root(n = this.size): Buffer {
    return n === 0 ? EMPTY_ROOT : this.mth(0, n);
  }

  private mth(start: number, n: number): Buffer {
    if (n === 1) return this.leaves[start];
    const k = split(n);
    return nodeHash(this.mth(start, k), this.mth(start + k, n - k));
  }

  /** PATH(m, D[0:n]). */
  inclusion(m: number, n = this.size): Buffer[] {
    return this.path(m, 0, n);
  }

  private path(m: number, start: number, n: number): Buffer[] {
    if (n === 1) return [];
    const k = split(n);
    return m < k ? [...this.path(m, start, k), this.mth(start + k, n - k)] : [...this.path(m - k, start + k, n - k), this.mth(start, k)];
  }

  /** PROOF(m, D[0:n]). */
  consistency(m: number, n = this.size): Buffer[] {
    if (m === 0 || m === n) return [];
    return this.subproof(m, 0, n, true);
  }

  private subproof(m: number, start: number, n: number, b: boolean): Buffer[] {
    if (m === n) return b ? [] : [this.mth(start, n)];
    const k = split(n);
    return m <= k
      ? [...this.subproof(m, start, k, b), this.mth(start + k, n - k)]
      : [...this.subproof(m - k, start + k, n - k, false), this.mth(start, k)];
  }
}
