/**
 * RFC 9162 Merkle tree hashing and proof verification, as pure functions:
 * - leaf hash  SHA-256(0x00 ‖ data), interior node hash SHA-256(0x01 ‖ left ‖ right) (§2.1.1);
 * - inclusion proof verification (§2.1.3.2);
 * - consistency proof verification (§2.1.4.2).
 * The algorithms are transcribed step by step from the RFC (no maintained npm package
 * implements them over plain Buffers); tests cross-check them with Go's sumdb/tlog.
 * Indices and sizes are bigint inside so that trees beyond 2^32 leaves shift correctly.
 */
import { createHash } from 'node:crypto';

export const HASH_SIZE = 32;

/** The longest proof a tree of up to 2^63 leaves can need (one hash per level, plus one for consistency). */
export const MAX_PROOF_HASHES = 64;

export function leafHash(data: Buffer): Buffer {
  return createHash('sha256').update(Buffer.from([0x00])).update(data).digest();
}

export function nodeHash(left: Buffer, right: Buffer): Buffer {
  return createHash('sha256').update(Buffer.from([0x01])).update(left).update(right).digest();
}

/** The root of the empty tree: SHA-256 of the empty string. */
export const EMPTY_ROOT = createHash('sha256').digest();

const lsb = (x: bigint): boolean => (x & 1n) === 1n;

/** The RFC's "if LSB(fn) is not set, right-shift fn and sn equally until either LSB(fn) is set or fn is 0". */
function climbLeftEdge(fn: bigint, sn: bigint): [bigint, bigint] {
  while (!lsb(fn) && fn !== 0n) {
    fn >>= 1n;
    sn >>= 1n;
  }
  return [fn, sn];
}

function checkHashes(hashes: readonly Buffer[]): void {
  if (hashes.length > MAX_PROOF_HASHES) throw new ProofError(`a proof has at most ${MAX_PROOF_HASHES} hashes`);
  for (const h of hashes) if (h.length !== HASH_SIZE) throw new ProofError('every proof hash is 32 bytes');
}

export class ProofError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProofError';
  }
}

/** The root an inclusion proof implies, or a ProofError (RFC 9162 §2.1.3.2 steps 1-5). */
export function rootFromInclusionProof(leafIndex: number, treeSize: number, leaf: Buffer, proof: readonly Buffer[]): Buffer {
  checkHashes(proof);
  if (leaf.length !== HASH_SIZE) throw new ProofError('the leaf hash is 32 bytes');
  if (!Number.isSafeInteger(leafIndex) || !Number.isSafeInteger(treeSize) || leafIndex < 0 || leafIndex >= treeSize) {
    throw new ProofError('the leaf index must be below the tree size');
  }
  let fn = BigInt(leafIndex);
  let sn = BigInt(treeSize) - 1n;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0n) throw new ProofError('the inclusion proof is too long');
    if (lsb(fn) || fn === sn) {
      r = nodeHash(p, r);
      [fn, sn] = climbLeftEdge(fn, sn);
    } else {
      r = nodeHash(r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  if (sn !== 0n) throw new ProofError('the inclusion proof is too short');
  return r;
}

/** Whether `proof` proves that the leaf with hash `leaf` is at `leafIndex` in the tree of `treeSize` with `root`. */
export function verifyInclusion(leafIndex: number, treeSize: number, leaf: Buffer, proof: readonly Buffer[], root: Buffer): boolean {
  try {
    return rootFromInclusionProof(leafIndex, treeSize, leaf, proof).equals(root);
  } catch (e) {
    if (e instanceof ProofError) return false;
    throw e;
  }
}

/**
 * Whether `proof` proves that the tree of size `first` with root `firstRoot` is a prefix of
 * the tree of size `second` with root `secondRoot` (RFC 9162 §2.1.4.2). Equal sizes need an
 * empty proof and equal roots; size 0 is a prefix of every tree, with an empty proof.
 */
export function verifyConsistency(first: number, second: number, firstRoot: Buffer, secondRoot: Buffer, proof: readonly Buffer[]): boolean {
  try {
    checkHashes(proof);
  } catch {
    return false;
  }
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(second) || first < 0 || first > second) return false;
  if (first === second) return proof.length === 0 && firstRoot.equals(secondRoot);
  if (first === 0) return proof.length === 0;
  if (proof.length === 0) return false;
  const m = BigInt(first);
  const path = (m & (m - 1n)) === 0n ? [firstRoot, ...proof] : [...proof];
  let fn = m - 1n;
  let sn = BigInt(second) - 1n;
  while (lsb(fn)) {
    fn >>= 1n;
    sn >>= 1n;
  }
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0n) return false;
    if (lsb(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      [fn, sn] = climbLeftEdge(fn, sn);
    } else {
      sr = nodeHash(sr, c);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return fr.equals(firstRoot) && sr.equals(secondRoot) && sn === 0n;
}
