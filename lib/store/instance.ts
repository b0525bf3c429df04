/** The event database's identity (timekeeper_instance): sessions carry it so writers cannot stray. */
import type { Pool } from 'pg';

export async function databaseInstanceId(pool: Pool): Promise<string> {
  const { rows } = await pool.query('SELECT instance_id FROM timekeeper_instance');
  if (!rows[0]) throw new Error('timekeeper_instance is empty: run the migrations');
  return rows[0].instance_id as string;
}

/** Reads the identity once and caches it; a failed read (database down) is tried again next time. */
export function databaseInstanceReader(pool: Pool): () => Promise<string> {
  let instance: Promise<string> | undefined;
  return () =>
    (instance ??= databaseInstanceId(pool).catch((err) => {
      instance = undefined;
      throw err;
    }));
}
