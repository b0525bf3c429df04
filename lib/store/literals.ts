/**
 * SQL literals for the statements a writer sends together with BEGIN or COMMIT
 * (lib/db.ts inTransaction: `opening`, `commitWith`). Those travel in one simple-protocol query
 * string, which cannot carry bind parameters, so every value is rendered here: strings through
 * the driver's escapeLiteral (quotes doubled, backslashes in E'' form), integers only when they
 * are safe integers, arrays as typed ARRAY[...] constructors. Each write then costs two round
 * trips instead of one per statement. Anything else is refused (a bug upstream, not input).
 */
import type { PoolClient } from 'pg';

/** The database clock in epoch milliseconds: the one clock every writer's timestamps and deadlines use. */
export const NOW_MS = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

export type Escaper = Pick<PoolClient, 'escapeLiteral'>;

/** Renders values as SQL literals for one client. */
export function literals(db: Escaper) {
  const text = (v: string | null | undefined): string => (v === null || v === undefined ? 'NULL' : db.escapeLiteral(v));
  return {
    text,
    int(n: number | null | undefined): string {
      if (n === null || n === undefined) return 'NULL';
      if (!Number.isSafeInteger(n)) throw new Error(`not an integer: ${n}`);
      return String(n);
    },
    /** A JSON value as jsonb, from its JSON text (what a bind parameter would have carried). */
    jsonb: (v: unknown): string => `${db.escapeLiteral(JSON.stringify(v))}::jsonb`,
    /** `ARRAY[...]::type[]`; an empty array keeps its type. */
    array: (xs: readonly string[], type: string): string => `ARRAY[${xs.map(text).join(', ')}]::${type}[]`,
    /** The statement that takes the transaction-scoped advisory lock named `key`. */
    xactLock: (key: string): string => `SELECT pg_advisory_xact_lock(hashtextextended(${text(key)}, 0))`,
  };
}
