/**
 * The log's Merkle tree (RFC 6962 / RFC 9162 §2.1): hashing, tree heads and proof GENERATION
 * over hashes kept in C2SP tlog-tiles order. Pure: the caller reads tiles (lib/store/tlog.ts).
 *
 * Hand-written on purpose: the maintained JavaScript libraries (sigstore's) only VERIFY
 * proofs, and the Go reference (golang.org/x/mod/sumdb/tlog) is not callable from Node. The
 * proof shapes follow RFC 9162 §2.1.3.1 (PATH) and §2.1.4.1 (SUBPROOF) literally, and the unit
 * tests check them against a brute-force tree and lib/tlog/verify.ts.
 *
 * Storage model (as tlog-tiles): the stored hashes are the complete nodes at levels 0, 8,
 * 16, … (tile height 8). A tile (L, N) holds the level-8L node hashes N·256 … N·256+255; a
 * partial tile holds a prefix. Any complete node (level ℓ, index k) is computed from the
 * 2^(ℓ mod 8) stored hashes below it in one tile. A tile's inner nodes (its rows 1…7) are
 * computed once per tile Buffer (tileRows, at most 254 hashes) and kept with it: a tile the
 * caller keeps in memory (lib/tlog/tile-cache.ts) answers any of its nodes by lookup, and a
 * proof over 10^7 leaves hashes only the tiles it had to read.
 */
import { hash } from 'node:crypto';
import { EMPTY_ROOT, HASH_SIZE, leafHash, nodeHash } from './verify';

// The hashing is the verifier's (one definition of leaf and node hashes for both sides).
export { EMPTY_ROOT, HASH_SIZE, leafHash, nodeHash };

export const TILE_HEIGHT = 8;
export const TILE_WIDTH = 1 << TILE_HEIGHT;

/** A complete subtree: 2^level leaves starting at leaf index·2^level. */
export interface NodeId {
  level: number;
  index: number;
}

/** A tile of tlog-tiles: level-(8·level) hashes tile·256 …; only whole tiles are addressed here. */
export interface TileId {
  level: number;
  index: number;
}

/** Largest power of two strictly less than n (n ≥ 2). Multiplication, not bit operations: sizes pass 2^31. */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** Largest power of two at most n (n ≥ 1). */
function pow2AtMost(n: number): number {
  let k = 1;
  while (k * 2 <= n) k *= 2;
  return k;
}

/**
 * The complete nodes, left to right, whose right fold (h = last; h = H(node, h) leftwards)
 * is MTH(D[lo:hi]) as RFC 9162 §2.1.1 splits it. lo must be aligned as the recursion makes it
 * (a multiple of the largest power of two ≤ hi − lo), which every range of a proof is.
 */
export function rangeNodes(lo: number, hi: number): NodeId[] {
  const out: NodeId[] = [];
  while (hi - lo > 0) {
    const n = hi - lo;
    const k = pow2AtMost(n);
    const level = Math.log2(k);
    out.push({ level, index: lo / k });
    lo += k;
  }
  return out;
}

/** Folds rangeNodes' hashes into the range's MTH. */
export function foldRange(hashes: Buffer[]): Buffer {
  if (hashes.length === 0) return EMPTY_ROOT;
  let h = hashes[hashes.length - 1];
  for (let i = hashes.length - 2; i >= 0; i--) h = nodeHash(hashes[i], h);
  return h;
}

/** A leaf range [lo, hi) whose MTH is one proof hash. */
export interface Range {
  lo: number;
  hi: number;
}

function checkSize(name: string, v: number): void {
  if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`${name} must be a non-negative safe integer`);
}

/** RFC 9162 §2.1.3.1 PATH(m, D[0:n]): the ranges whose MTHs are the inclusion proof, leaf upwards. */
export function inclusionRanges(m: number, n: number): Range[] {
  checkSize('leaf_index', m);
  checkSize('tree_size', n);
  if (m >= n) throw new RangeError('leaf_index must be less than tree_size');
  const out: Range[] = [];
  const path = (m: number, lo: number, hi: number): void => {
    const size = hi - lo;
    if (size <= 1) return;
    const k = splitPoint(size);
    if (m < k) {
      path(m, lo, lo + k);
      out.push({ lo: lo + k, hi });
    } else {
      path(m - k, lo + k, hi);
      out.push({ lo, hi: lo + k });
    }
  };
  path(m, 0, n);
  return out;
}

/** RFC 9162 §2.1.4.1 PROOF(m, D[0:n]) = SUBPROOF(m, D[0:n], true), as ranges. */
export function consistencyRanges(m: number, n: number): Range[] {
  checkSize('from', m);
  checkSize('to', n);
  if (m > n) throw new RangeError('from must not be greater than to');
  const out: Range[] = [];
  if (m === 0 || m === n) return out;
  const sub = (m: number, lo: number, hi: number, b: boolean): void => {
    const size = hi - lo;
    if (m === size) {
      if (!b) out.push({ lo, hi });
      return;
    }
    const k = splitPoint(size);
    if (m <= k) {
      sub(m, lo, lo + k, b);
      out.push({ lo: lo + k, hi });
    } else {
      sub(m - k, lo + k, hi, false);
      out.push({ lo, hi: lo + k });
    }
  };
  sub(m, 0, n, true);
  return out;
}

/** The tile, and the positions in it, a node's hash is computed from. */
export function nodeSource(node: NodeId): { tile: TileId; from: number; to: number } {
  const tileLevel = Math.floor(node.level / TILE_HEIGHT);
  const r = node.level - tileLevel * TILE_HEIGHT;
  const first = node.index * 2 ** r; // first stored hash (level 8·tileLevel) under the node
  const tileIndex = Math.floor(first / TILE_WIDTH);
  const from = first - tileIndex * TILE_WIDTH;
  return { tile: { level: tileLevel, index: tileIndex }, from, to: from + 2 ** r };
}

/** A tile a caller needs, and how many of its hashes (from the start) it needs. */
export interface TileNeed extends TileId {
  hashes: number;
}

/**
 * Tiles as the store returns them: the hashes present so far (a partial tile is a prefix; a
 * reader may answer with a longer prefix than needed, or leave out a tile it does not have).
 */
export type TileReader = (tiles: TileNeed[]) => Promise<Map<string, Buffer>>;

export const tileKey = (t: TileId): string => `${t.level}/${t.index}`;

/** Where row r (1…7) of a tile's inner nodes starts in tileRows' buffer, in hashes: rows 1…r−1 before it. */
const rowStart = (r: number): number => TILE_WIDTH - (2 * TILE_WIDTH) / 2 ** r;
/** The size of tileRows' buffer: rows 1…7 of a full tile (128 + 64 + … + 2 = 254 hashes). */
export const TILE_ROWS_BYTES = rowStart(TILE_HEIGHT) * HASH_SIZE;

// Keyed by the tile Buffer itself: a tile kept in memory is hashed once, a tile read for one
// proof is collected with its rows.
const rowsOf = new WeakMap<Buffer, Buffer>();

/**
 * A tile's inner nodes: row r (1…7) holds the level-(8L + r) node hashes over the tile's
 * stored hashes, ⌊width / 2^r⌋ of them (only complete nodes: a partial tile's rows are shorter),
 * at rowStart(r). Computed once per Buffer, one-shot hashing over one reused input buffer.
 */
export function tileRows(tile: Buffer): Buffer {
  let rows = rowsOf.get(tile);
  if (rows) return rows;
  rows = Buffer.allocUnsafe(TILE_ROWS_BYTES);
  const input = Buffer.alloc(1 + 2 * HASH_SIZE, 1);
  const width = tile.length / HASH_SIZE;
  let below = tile;
  let belowAt = 0;
  for (let r = 1; r < TILE_HEIGHT; r++) {
    const at = rowStart(r) * HASH_SIZE;
    const count = Math.floor(width / 2 ** r);
    for (let i = 0; i < count; i++) {
      below.copy(input, 1, belowAt + 2 * i * HASH_SIZE, belowAt + (2 * i + 2) * HASH_SIZE);
      (hash('sha256', input, 'buffer') as Buffer).copy(rows, at + i * HASH_SIZE);
    }
    below = rows;
    belowAt = at;
  }
  rowsOf.set(tile, rows);
  return rows;
}

/** A complete node's hash from its tile: a stored hash, or one of the tile's inner nodes. */
export function nodeFromTile(node: NodeId, tiles: Map<string, Buffer>): Buffer {
  const src = nodeSource(node);
  const tile = tiles.get(tileKey(src.tile));
  if (!tile || tile.length < src.to * HASH_SIZE) {
    throw new Error(`tile ${tileKey(src.tile)} lacks the hashes of node level ${node.level} index ${node.index}`);
  }
  const r = Math.log2(src.to - src.from);
  if (r === 0) return Buffer.from(tile.subarray(src.from * HASH_SIZE, src.to * HASH_SIZE));
  const at = (rowStart(r) + src.from / 2 ** r) * HASH_SIZE;
  return Buffer.from(tileRows(tile).subarray(at, at + HASH_SIZE));
}

/** The tiles some nodes come from, each with the hashes the nodes need. */
function tilesFor(nodes: NodeId[]): TileNeed[] {
  const wanted = new Map<string, TileNeed>();
  for (const n of nodes) {
    const { tile, to } = nodeSource(n);
    const key = tileKey(tile);
    const w = wanted.get(key);
    if (!w) wanted.set(key, { ...tile, hashes: to });
    else w.hashes = Math.max(w.hashes, to);
  }
  return [...wanted.values()];
}

/** Reads every tile the ranges need in one call and returns each range's MTH. */
export async function rangeHashes(ranges: Range[], read: TileReader): Promise<Buffer[]> {
  const nodes = ranges.map((r) => rangeNodes(r.lo, r.hi));
  const tiles = await read(tilesFor(nodes.flat()));
  return nodes.map((ns) => foldRange(ns.map((n) => nodeFromTile(n, tiles))));
}

/** The leaf hash at one index, from its level-0 tile. */
export async function leafAt(index: number, read: TileReader): Promise<Buffer> {
  checkSize('leaf_index', index);
  const leaf = { level: 0, index };
  return nodeFromTile(leaf, await read(tilesFor([leaf])));
}

/** Whether a tile read so far has the hashes a caller needs. */
export const tileCovers = (tile: Buffer | undefined, need: TileNeed): tile is Buffer => tile !== undefined && tile.length >= need.hashes * HASH_SIZE;

/** A reader that keeps the tiles it has read (for several proofs, or a proof and its leaf, over one tree). */
export function cachedReader(read: TileReader): TileReader {
  const cache = new Map<string, Buffer>();
  return async (needs) => {
    const missing = needs.filter((t) => !tileCovers(cache.get(tileKey(t)), t));
    if (missing.length > 0) for (const [k, v] of await read(missing)) cache.set(k, v);
    return new Map(needs.filter((t) => cache.has(tileKey(t))).map((t) => [tileKey(t), cache.get(tileKey(t))!]));
  };
}

export async function treeHead(size: number, read: TileReader): Promise<Buffer> {
  checkSize('tree_size', size);
  return (await rangeHashes([{ lo: 0, hi: size }], read))[0];
}

export async function inclusionProof(leafIndex: number, treeSize: number, read: TileReader): Promise<Buffer[]> {
  return rangeHashes(inclusionRanges(leafIndex, treeSize), read);
}

export async function consistencyProof(from: number, to: number, read: TileReader): Promise<Buffer[]> {
  return rangeHashes(consistencyRanges(from, to), read);
}

/** New stored hashes at one tile level, starting at that level's hash index `start`. */
export interface StoredRun {
  level: number;
  start: number;
  hashes: Buffer[];
}

/**
 * Extends a tree of `size` leaves by new leaf hashes. `frontier` is the hashes of
 * rangeNodes(0, size) (the tree's right edge). Returns the stored hashes that became complete
 * (per tile level, contiguous from that level's current count), the new frontier and the root.
 */
export function extend(size: number, frontier: Buffer[], leafHashes: Buffer[]): { size: number; frontier: Buffer[]; root: Buffer; stored: StoredRun[] } {
  const stack: { level: number; hash: Buffer }[] = rangeNodes(0, size).map((n, i) => ({ level: n.level, hash: frontier[i] }));
  if (stack.length !== frontier.length) throw new Error('frontier does not match the tree size');
  const runs = new Map<number, StoredRun>();
  const store = (level: number, index: number, hash: Buffer): void => {
    if (level % TILE_HEIGHT !== 0) return;
    const L = level / TILE_HEIGHT;
    let run = runs.get(L);
    if (!run) runs.set(L, (run = { level: L, start: index, hashes: [] }));
    run.hashes.push(hash);
  };
  let n = size;
  for (const lh of leafHashes) {
    store(0, n, lh);
    let top = { level: 0, hash: lh };
    let idx = n; // index of `top` at its level
    while (stack.length > 0 && stack[stack.length - 1].level === top.level) {
      const left = stack.pop()!;
      top = { level: top.level + 1, hash: nodeHash(left.hash, top.hash) };
      idx = Math.floor(idx / 2);
      store(top.level, idx, top.hash);
    }
    stack.push(top);
    n++;
  }
  const newFrontier = stack.map((s) => s.hash);
  return { size: n, frontier: newFrontier, root: foldRange(newFrontier), stored: [...runs.values()].sort((a, b) => a.level - b.level) };
}

/** The frontier (right edge) of a stored tree, for extend. */
export async function frontierOf(size: number, read: TileReader): Promise<Buffer[]> {
  const nodes = rangeNodes(0, size);
  const tiles = await read(tilesFor(nodes));
  return nodes.map((n) => nodeFromTile(n, tiles));
}

/** Splits stored runs into per-tile strips: (tile level, tile index, offset in tile, hashes). */
export function tileStrips(runs: StoredRun[]): { level: number; tile: number; offset: number; hashes: Buffer }[] {
  const out: { level: number; tile: number; offset: number; hashes: Buffer }[] = [];
  for (const r of runs) {
    let i = 0;
    while (i < r.hashes.length) {
      const idx = r.start + i;
      const tile = Math.floor(idx / TILE_WIDTH);
      const offset = idx - tile * TILE_WIDTH;
      const take = Math.min(TILE_WIDTH - offset, r.hashes.length - i);
      out.push({ level: r.level, tile, offset, hashes: Buffer.concat(r.hashes.slice(i, i + take)) });
      i += take;
    }
  }
  return out;
}
