/**
 * Plays a database superuser who edits append-only rows: switches off a table's own triggers
 * (the append-only guards; never the internal foreign-key triggers, which DISABLE TRIGGER ALL
 * would also switch off and a later ENABLE of three named triggers would leave off for the
 * rest of the run), runs the edit, and puts every trigger back in exactly the mode it had
 * (the guards are ENABLE ALWAYS so that session_replication_role = replica cannot skip them).
 * All in one transaction: ALTER TABLE's lock keeps the app's own writes out while the guards
 * are off, and an edit that throws rolls the trigger changes back with it.
 */
import type { Pool, PoolClient } from 'pg';

const MODE_SQL: Record<string, string> = { O: 'ENABLE TRIGGER', A: 'ENABLE ALWAYS TRIGGER', R: 'ENABLE REPLICA TRIGGER', D: 'DISABLE TRIGGER' };

export async function asDatabaseAttacker(ownerPool: Pool, table: string, edit: (c: PoolClient) => Promise<void>): Promise<void> {
  const c = await ownerPool.connect();
  try {
    const { rows } = await c.query<{ tgname: string; tgenabled: string }>(
      'SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal',
      [table],
    );
    await c.query('BEGIN');
    try {
      await c.query(`ALTER TABLE ${table} DISABLE TRIGGER USER`);
      await edit(c);
      for (const r of rows) await c.query(`ALTER TABLE ${table} ${MODE_SQL[r.tgenabled]} ${r.tgname}`);
      await c.query('COMMIT');
    } catch (e) {
      await c.query('ROLLBACK');
      throw e;
    }
  } finally {
    c.release();
  }
}
