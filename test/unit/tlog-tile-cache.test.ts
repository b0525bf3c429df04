/**
 * lib/tlog/tile-cache.ts and the tile rows of lib/tlog/tree.ts: proofs through the cache are
 * the same bytes as without it, a tile that grew is read again when a proof needs more of it,
 * a full tile is not, and the cache stays within its byte bound.
 */
import { cachingTileReader } from '../../lib/tlog/tile-cache';
import {
  consistencyProof,
  extend,
  HASH_SIZE,
  inclusionProof,
  leafHash,
  nodeFromTile,
  nodeHash,
  tileKey,
  tileStrips,
  TILE_ROWS_BYTES,
  TILE_WIDTH,
  type TileNeed,
  type TileReader,
} from '../../lib/tlog/tree';

/** Tiles in memory fed by extend + tileStrips as the builder writes them, counting what is read. */
class Tiles {
  tiles = new Map<string, Buffer>();
  size = 0;
  frontier: Buffer[] = [];
  reads: TileNeed[] = [];
  read: TileReader = async (needs) => {
    this.reads.push(...needs);
    // A fresh Buffer per read, as the database answers.
    return new Map(needs.filter((t) => this.tiles.has(tileKey(t))).map((t) => [tileKey(t), Buffer.from(this.tiles.get(tileKey(t))!)]));
  };
  grow(n: number): void {
    const leaves = Array.from({ length: n }, (_, i) => leafHash(Buffer.from(`leaf ${this.size + i}`)));
    const r = extend(this.size, this.frontier, leaves);
    for (const s of tileStrips(r.stored)) {
      const key = tileKey({ level: s.level, index: s.tile });
      this.tiles.set(key, Buffer.concat([this.tiles.get(key) ?? Buffer.alloc(0), s.hashes]));
    }
    this.size = r.size;
    this.frontier = r.frontier;
  }
}

const b64 = (hs: Buffer[]) => hs.map((h) => h.toString('base64'));

describe('tlog tile cache', () => {
  test('proofs through the cache are byte-identical to proofs straight from the tiles, while the tree grows', async () => {
    const t = new Tiles();
    const cached = cachingTileReader(t.read, 64 * 1024 * 1024);
    for (const step of [1, 255, 2, 300, 65_536 - 558, 1, 70_001]) {
      t.grow(step);
      for (const i of [0, 1, 255, 256, t.size - 1, Math.floor(t.size / 3)].filter((i) => i < t.size)) {
        expect(b64(await inclusionProof(i, t.size, cached))).toEqual(b64(await inclusionProof(i, t.size, t.read)));
      }
      for (const m of [1, 2, 256, t.size - 1, Math.floor(t.size / 2)].filter((m) => m >= 1 && m <= t.size)) {
        expect(b64(await consistencyProof(m, t.size, cached))).toEqual(b64(await consistencyProof(m, t.size, t.read)));
      }
    }
  });

  test('a cached partial tile is read again only when a proof needs more hashes than it had; a full tile never', async () => {
    const t = new Tiles();
    const cached = cachingTileReader(t.read, 64 * 1024 * 1024);
    t.grow(100);
    await inclusionProof(5, 100, cached);
    t.reads = [];
    await inclusionProof(7, 100, cached); // same tile, same size: from memory
    expect(t.reads).toEqual([]);
    t.grow(TILE_WIDTH); // tile 0/0 is full now, 0/1 partial
    await inclusionProof(7, t.size, cached);
    expect(t.reads.map(tileKey)).toContain('0/0'); // it grew: read again
    t.reads = [];
    t.grow(10);
    await inclusionProof(7, t.size, cached);
    expect(t.reads.map(tileKey)).not.toContain('0/0'); // full: kept
    expect(t.reads.map(tileKey)).toContain('0/1'); // the right edge grew
  });

  test('the cache holds at most its byte bound, least recently used out first', async () => {
    const t = new Tiles();
    t.grow(TILE_WIDTH * 4);
    const perTile = TILE_WIDTH * HASH_SIZE + TILE_ROWS_BYTES;
    const cached = cachingTileReader(t.read, 2 * perTile); // room for two full tiles
    const need = (index: number): TileNeed => ({ level: 0, index, hashes: TILE_WIDTH });
    await cached([need(0)]);
    await cached([need(1)]);
    await cached([need(0)]); // 0 is the most recent now
    await cached([need(2)]); // evicts 1
    t.reads = [];
    await cached([need(0)]);
    await cached([need(2)]);
    expect(t.reads).toEqual([]);
    await cached([need(1)]);
    expect(t.reads.map(tileKey)).toEqual(['0/1']);
  });

  test('a node from a tile\'s inner rows is the hash of its two children', async () => {
    const t = new Tiles();
    t.grow(TILE_WIDTH + 37); // one full tile and a partial one
    const tiles = await t.read([{ level: 0, index: 0, hashes: TILE_WIDTH }, { level: 0, index: 1, hashes: 37 }]);
    for (const [level, index] of [[1, 0], [3, 5], [7, 1], [5, 7], [2, 72], [1, 145]]) {
      const left = nodeFromTile({ level: level - 1, index: 2 * index }, tiles);
      const right = nodeFromTile({ level: level - 1, index: 2 * index + 1 }, tiles);
      expect(nodeFromTile({ level, index }, tiles).equals(nodeHash(left, right))).toBe(true);
    }
    // A node the partial tile does not cover yet is refused, not made up.
    expect(() => nodeFromTile({ level: 3, index: 36 }, tiles)).toThrow(/lacks the hashes/);
  });
});
