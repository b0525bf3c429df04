/** PostgreSQL connection helpers shared by the worker, the API and the tools. */
import { Pool, PoolConfig, types } from 'pg';

// bigint columns (seq, ts) fit in a double for any realistic timeline; parse them as numbers
// so the hash input sees the same integers the writer hashed.
types.setTypeParser(types.builtins.INT8, (v) => Number(v));

export function createPool(connectionString: string, overrides: Partial<PoolConfig> = {}): Pool {
  const pool = new Pool({
    connectionString,
    max: 20,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
    application_name: 'timekeeper',
    ...overrides,
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', (err) => console.error('[db] idle client error:', err.message));
  return pool;
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
    await pool.query('SELECT 1');
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
