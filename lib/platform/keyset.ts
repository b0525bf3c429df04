/**
 * Keyset cursors for the lists ordered by (a time, an id): sessions, tasks, runs, intents; and
 * signals, whose key is their seq (in `time`; the id rides along).
 * A cursor is the last row's sort key and the order it was listed in, as base64url JSON
 * `[time, id, order]`; the next page is the rows strictly past that key in that order, so
 * rows inserted meanwhile neither shift nor repeat a page (an offset would). Opaque to
 * callers: they pass `next_cursor` back unchanged.
 *
 * `time` is an integer (milliseconds, or microseconds where the column is a timestamptz:
 * PostgreSQL keeps microseconds, and a key cut to milliseconds would skip rows between).
 */
import { DomainError } from '../domain/errors';

export interface Keyset<O extends string> {
  time: number;
  id: string;
  order: O;
}

export function encodeKeyset<O extends string>(k: Keyset<O>): string {
  return Buffer.from(JSON.stringify([k.time, k.id, k.order])).toString('base64url');
}

/**
 * The key in a cursor, or undefined when `c` is not one of ours. A two-element cursor (the
 * form before lists took an order) decodes with `legacyOrder`, the order it was issued in.
 */
export function decodeKeyset<O extends string>(c: string, orders: readonly O[], idOk: (id: string) => boolean, legacyOrder?: O): Keyset<O> | undefined {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(c, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(v) || (v.length !== 3 && !(v.length === 2 && legacyOrder))) return undefined;
  const [time, id, order = legacyOrder] = v as [unknown, unknown, unknown];
  // Both go to PostgreSQL as a bigint and an id: anything else would be a 500 there.
  if (!Number.isSafeInteger(time) || (time as number) < 0 || typeof id !== 'string' || !idOk(id)) return undefined;
  if (!orders.includes(order as O)) return undefined;
  return { time: time as number, id, order: order as O };
}

/**
 * The order a page is listed in: the cursor's, when there is one (a cursor continues the
 * listing it came from), else the requested one, else the default. A cursor from one order
 * with an explicit other `order` is refused naming `cursor`.
 */
export function pageOrder<O extends string>(requested: O | undefined, cursor: Keyset<O> | undefined, fallback: O): O {
  if (cursor && requested && cursor.order !== requested) {
    throw DomainError.validation('cursor', `was issued for order=${cursor.order}, not order=${requested}: start again without a cursor`);
  }
  return cursor?.order ?? requested ?? fallback;
}

/** The 400 for a cursor this endpoint did not issue. */
export const badCursor = (): DomainError => DomainError.validation('cursor', 'is not a cursor returned by this endpoint');

/** decodeKeyset for a request's `cursor`: the key, or the 400 naming `cursor` when it is not one of ours. */
export function parseCursor<O extends string>(c: string, orders: readonly O[], idOk: (id: string) => boolean, legacyOrder?: O): Keyset<O> {
  const k = decodeKeyset(c, orders, idOk, legacyOrder);
  if (!k) throw badCursor();
  return k;
}
