/** How the session workflow cuts its queue into write batches (workflows/sessions/batching.ts). */
import { LIMITS } from '../../lib/domain/limits';
import { takeBatch } from '../../workflows/sessions/batching';

const items = (...sizes: number[]) => sizes.map((bytes, i) => ({ id: i, bytes }));
const ids = (xs: { id: number }[]) => xs.map((x) => x.id);

test('takes at most maxEvents items from the front, in order, and removes them from the queue', () => {
  const q = items(1, 1, 1, 1, 1, 1, 1);
  expect(ids(takeBatch(q, 3, 100))).toEqual([0, 1, 2]);
  expect(ids(q)).toEqual([3, 4, 5, 6]);
  expect(ids(takeBatch(q, 3, 100))).toEqual([3, 4, 5]);
  expect(ids(takeBatch(q, 3, 100))).toEqual([6]);
  expect(q).toEqual([]);
  expect(takeBatch(q, 3, 100)).toEqual([]);
});

test('stops before the item that would pass the byte bound; the bound itself is allowed', () => {
  const q = items(40, 60, 1, 5);
  expect(ids(takeBatch(q, 10, 100))).toEqual([0, 1]); // 40 + 60 = 100 exactly
  expect(ids(q)).toEqual([2, 3]);
  const r = items(40, 61, 1);
  expect(ids(takeBatch(r, 10, 100))).toEqual([0]);
  expect(ids(takeBatch(r, 10, 100))).toEqual([1, 2]);
});

test('does not skip ahead to a smaller item that would still fit', () => {
  const q = items(50, 80, 10);
  expect(ids(takeBatch(q, 10, 100))).toEqual([0]);
  expect(ids(q)).toEqual([1, 2]);
});

test('a single item larger than the byte bound goes alone, whether first or later in the queue', () => {
  const q = items(500, 1, 1);
  expect(ids(takeBatch(q, 10, 100))).toEqual([0]);
  expect(ids(takeBatch(q, 10, 100))).toEqual([1, 2]);
  const r = items(1, 500, 1);
  expect(ids(takeBatch(r, 10, 100))).toEqual([0]);
  expect(ids(takeBatch(r, 10, 100))).toEqual([1]);
  expect(ids(takeBatch(r, 10, 100))).toEqual([2]);
});

test('zero-byte items (SESSION_CREATE, idle end) only count against the event bound', () => {
  const q = items(...Array(7).fill(0));
  expect(takeBatch(q, 5, 0)).toHaveLength(5);
  expect(takeBatch(q, 5, 0)).toHaveLength(2);
});

test('defaults are the design limits', () => {
  const q = items(...Array(LIMITS.appendBatchEvents + 5).fill(1));
  expect(takeBatch(q)).toHaveLength(LIMITS.appendBatchEvents);
  expect(q).toHaveLength(5);
  const half = Math.floor(LIMITS.appendBatchBytes / 2);
  const big = items(half, half, 1);
  expect(ids(takeBatch(big))).toEqual([0, 1]);
  expect(ids(big)).toEqual([2]);
});

test('every item comes out exactly once, in order, with every batch within both bounds', () => {
  // Deterministic pseudo-random sizes, some above the byte bound.
  let x = 7;
  const sizes = Array.from({ length: 500 }, () => ((x = (x * 1103515245 + 12345) % 2 ** 31), x % 130));
  const q = items(...sizes);
  const out: number[] = [];
  let batches = 0;
  while (q.length) {
    const b = takeBatch(q, 9, 120);
    batches++;
    expect(b.length).toBeGreaterThanOrEqual(1);
    expect(b.length).toBeLessThanOrEqual(9);
    if (b.length > 1) expect(b.reduce((n, i) => n + i.bytes, 0)).toBeLessThanOrEqual(120);
    out.push(...ids(b));
  }
  expect(out).toEqual(sizes.map((_, i) => i));
  expect(batches).toBeLessThan(sizes.length);
});
