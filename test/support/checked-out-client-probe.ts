/**
 * Child process for database-restart.test.ts: opens a transaction through inTransaction and
 * holds it while the parent kills PostgreSQL. Prints the outcome and exits 0, unless the lost
 * connection kills the process (an 'error' event without a listener), which the parent sees.
 */
import { createPool, inTransaction } from '../../lib/db';

async function main(): Promise<void> {
  const pool = createPool(process.argv[2], { max: 2, connectionTimeoutMillis: 2000 });
  try {
    await inTransaction(pool, async (c) => {
      await c.query('SELECT 1');
      process.stdout.write('in-transaction\n');
      // Hold the checked-out connection, idle between statements, while the server dies.
      await new Promise((r) => setTimeout(r, 4000));
      await c.query('SELECT 1');
    });
    process.stdout.write('committed\n');
  } catch (err) {
    process.stdout.write(`rejected: ${(err as Error).message}\n`);
  }
  await pool.end().catch(() => undefined);
}

void main();
