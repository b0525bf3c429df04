/** PostgreSQL connection helpers shared by the worker, the API and the tools. */
import { Pool, PoolClient, PoolConfig, QueryResult, types } from 'pg';
import { LIMITS } from './domain/limits';
import { log } from './log';
import { probeDatabase } from './platform/database-probe';

// bigint columns (seq, ts) fit in a double for any realistic timeline; parse them as numbers
// so the hash input sees the same integers the writer hashed.
types.setTypeParser(types.builtins.INT8, (v) => Number(v));

export function createPool(connectionString: string, overrides: Partial<PoolConfig> = {}): Pool {
  const pool = new Pool({
    connectionString,
    max: LIMITS.dbPoolMax,
    idleTimeoutMillis: LIMITS.dbIdleMs,
    connectionTimeoutMillis: LIMITS.dbConnectTimeoutMs,
    application_name: 'timekeeper',
    // Every query here is short OLTP. PostgreSQL compiles a plan whose estimated cost crosses
    // jit_above_cost, and on a large table's estimates compiling cost more than running: the
    // pending query at 100,000 intents spent ~75 ms in JIT for ~15 ms of execution.
    options: '-c jit=off',
    ...overrides,
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', (err) => log().error({ component: 'db', err: err.message }, 'idle client error'));
  return pool;
}

/**
 * Runs `fn` in one transaction on one pooled connection; rolls back on any error.
 *
 * A checked-out client has no 'error' listener of the pool's (pg-pool only guards idle
 * ones), and an 'error' event without a listener kills the process: a connection lost
 * mid-transaction (a database restart) must fail this call, not the worker.
 */
/** What a transaction's body gets besides its client (see inTransaction's `opening`). */
export interface TxContext {
  /** The results of the `opening` statements, in order (empty without them). */
  opened: QueryResult[];
  /**
   * Sends `sql` (statements with literals only, escaped with the client's escapeLiteral) in the
   * same round trip as COMMIT; if it fails, the transaction rolls back and the call rejects.
   */
  commitWith(sql: string): void;
}

export async function inTransaction<T>(
  pool: Pool,
  fn: (c: PoolClient, tx: TxContext) => Promise<T>,
  opening?: (c: PoolClient) => string,
): Promise<T> {
  const client = await pool.connect();
  let lost: Error | undefined;
  const onError = (err: Error) => {
    lost = err;
  };
  client.on('error', onError);
  try {
    // `opening`: statements (literals only, escaped with the client's escapeLiteral) sent with
    // BEGIN in one simple-protocol round trip, and `commitWith` the last ones with COMMIT: on a
    // busy host every round trip is a wait.
    const begun = (await client.query(opening ? `BEGIN; ${opening(client)}` : 'BEGIN')) as QueryResult | QueryResult[];
    let tail: string | undefined;
    const out = await fn(client, {
      opened: Array.isArray(begun) ? begun.slice(1) : [],
      commitWith: (sql) => {
        tail = tail ? `${tail}; ${sql}` : sql;
      },
    });
    await client.query(tail ? `${tail}; COMMIT` : 'COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    lost ??= isConnectionError(err) ? (err as Error) : undefined;
    throw err;
  } finally {
    client.removeListener('error', onError);
    // A client whose connection failed is destroyed, not handed to the next caller.
    client.release(lost);
  }
}

/**
 * A write on a chain head the writer did not look up (SessionStore.writeOnHead,
 * IntentStore.writeOnHead) that the table refused because the head, an id or an idempotency
 * key was not what the writer assumed: the guard trigger's check_violation or a unique
 * index's unique_violation. The write must be decided again with the lookup.
 */
export function isLookupNeeded(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === '23514';
}

/**
 * PostgreSQL refused a value of the request itself (untranslatable_character 22P05: U+0000 in
 * jsonb; character_not_in_repertoire 22021: bytes that are not UTF-8): no retry can store it.
 */
export function isUnstorableValue(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '22P05' || code === '22021';
}

/** Connection-level failures (the server went away), as opposed to a refused statement. */
export function isConnectionError(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  if (typeof e?.code === 'string' && (/^(08|57P0|53)/.test(e.code) || ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE'].includes(e.code))) return true;
  // pg reports a pool checkout timeout and a dropped connection only in its message.
  return /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED|is not queryable/i.test(e?.message ?? '');
}

/** A single pg Client that reports connection loss through its next query instead of crashing the process. */
export function guardClient<C extends { on(event: 'error', fn: (err: Error) => void): unknown }>(client: C, label: string): C {
  client.on('error', (err: Error) => log().error({ component: 'db', client: label, err: err.message }, 'connection error'));
  return client;
}

/** The database name of a connection URL. */
export function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.replace(/^\//, '')) || 'postgres';
}

/** The same server, another database (used to reach the maintenance database `postgres`). */
export function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = '/' + encodeURIComponent(db);
  return u.toString();
}

/** True when a PostgreSQL server answers at this URL's host and port (auth errors count as answers). */
export async function serverAnswers(url: string, timeoutMs = 2000): Promise<boolean> {
  const pool = createPool(withDatabase(url, 'postgres'), { max: 1, connectionTimeoutMillis: timeoutMs });
  try {
    await probeDatabase(pool);
    return true;
  } catch (err) {
    const code = (err as { code?: string }).code;
    return code !== undefined && /^[0-9A-Z]{5}$/.test(code) && code !== '57P03';
  } finally {
    await pool.end().catch(() => undefined);
  }
}

export function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}
