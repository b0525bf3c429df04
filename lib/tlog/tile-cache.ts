/**
 * Tiles kept in memory across requests (LOG_TILE_CACHE_BYTES), in front of the store's reader.
 *
 * Why it is safe: a stored hash never changes (tlog_tiles is append-only; a tile only grows by
 * new strips), so a tile read once answers, as a prefix, every later need of up to as many
 * hashes; a need of more is read again and replaces the shorter copy. A full tile is never
 * read again while it stays cached. Why it pays: the upper tiles (level 1 and up: one per
 * 65,536 leaves) are in nearly every proof, and each is kept with its inner nodes
 * (lib/tlog/tree.ts tileRows), so a cached tile costs a lookup instead of a query and up to
 * 254 SHA-256 — before this cache most of a proof's CPU was that hashing.
 *
 * Bounded in bytes (the tile and its inner nodes), least recently used evicted first
 * (lru-cache's maxSize). 0 turns it off.
 */
import { LRUCache } from 'lru-cache';
import { tileCovers, tileKey, tileRows, TILE_ROWS_BYTES, type TileReader } from './tree';

export const DEFAULT_TILE_CACHE_BYTES = 64 * 1024 * 1024;

export function cachingTileReader(read: TileReader, maxBytes: number): TileReader {
  if (maxBytes <= 0) return read;
  const cache = new LRUCache<string, Buffer>({ maxSize: maxBytes, sizeCalculation: (tile) => tile.length + TILE_ROWS_BYTES });
  return async (needs) => {
    const out = new Map<string, Buffer>();
    const missing = needs.filter((need) => {
      const key = tileKey(need);
      const tile = cache.get(key);
      if (!tileCovers(tile, need)) return true;
      out.set(key, tile);
      return false;
    });
    if (missing.length === 0) return out;
    for (const [key, tile] of await read(missing)) {
      // The rows are computed here, once, for the tile the cache keeps.
      tileRows(tile);
      const had = cache.peek(key);
      if (!had || had.length < tile.length) cache.set(key, tile);
      out.set(key, tile);
    }
    return out;
  };
}
