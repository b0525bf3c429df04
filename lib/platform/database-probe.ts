/**
 * The one health probe of PostgreSQL: a trivial statement the server must answer. Shared
 * platform mechanics (issue 21): /readyz and OML's /api/health (lib/platform/dependency-checks.ts), a
 * stalled session write's diagnosis (clients/sessions.ts) and start-up's "is a server there"
 * (lib/db.ts serverAnswers) all ask it the same way, here.
 */
import type { Pool } from 'pg';

/** Resolves once the server has answered `SELECT 1` on a connection of `pool`; rejects with its error. */
export async function probeDatabase(pool: Pick<Pool, 'query'>): Promise<void> {
  await pool.query('SELECT 1');
}
