/**
 * The raw PostgreSQL baseline of the timeline bench: single-row, autocommitted INSERTs into a
 * scratch table shaped like timeline_events (no triggers) in the same database, from a warm
 * pool, so an append rate can be put next to what PostgreSQL does alone. The table is dropped.
 */
import { performance } from 'node:perf_hooks';
import { Pool } from 'pg';
import { runPool, Series } from './measure';

export interface RawResult {
  clients: number;
  capNote: string;
  wallMs: number;
  insert: Series;
}

/**
 * PostgreSQL refuses connections past max_connections, and the running Timekeeper holds some
 * itself, so the client count is capped at what is free (leaving a small margin for others).
 */
async function freeConnectionSlots(admin: Pool): Promise<{ free: number; max: number }> {
  const { rows } = await admin.query(
    `SELECT current_setting('max_connections')::int AS max,
            current_setting('superuser_reserved_connections')::int AS reserved,
            (SELECT count(*)::int FROM pg_stat_activity WHERE backend_type = 'client backend') AS used`,
  );
  const { max, reserved, used } = rows[0];
  return { free: Math.max(1, max - reserved - used - 5), max };
}

export async function rawInsertBaseline(databaseUrl: string, concurrency: number, rows: number, runId: string): Promise<RawResult> {
  const table = `bench_raw_${runId.replace(/[^a-z0-9_]/gi, '_')}`.toLowerCase();
  const admin = new Pool({ connectionString: databaseUrl, max: 1, application_name: 'timekeeper-bench' });
  let pool: Pool | undefined;
  try {
    const { free, max } = await freeConnectionSlots(admin);
    const clients = Math.min(concurrency, free);
    const capNote = clients < concurrency ? ` (capped from ${concurrency}: max_connections=${max}, the rest are in use)` : '';
    // Shaped like timeline_events (text + bigint key, uuid, jsonb, two hashes) without its triggers.
    await admin.query(
      `CREATE TABLE ${table} (
         session_id text NOT NULL, seq bigint NOT NULL, event_id uuid NOT NULL UNIQUE, event_type text NOT NULL,
         ts bigint NOT NULL, content jsonb NOT NULL, prev_hash text, hash text NOT NULL,
         PRIMARY KEY (session_id, seq))`,
    );
    pool = new Pool({ connectionString: databaseUrl, max: clients, application_name: 'timekeeper-bench' });
    // Open every connection before timing, as Timekeeper's own pool is already warm.
    const warm = await Promise.all(Array.from({ length: clients }, () => pool!.connect()));
    warm.forEach((c) => c.release());

    const insert = new Series();
    const hash = 'ab'.repeat(32);
    const p = pool;
    const wallMs = await runPool(rows, clients, async (i) => {
      const t0 = performance.now();
      try {
        await p.query(
          `INSERT INTO ${table} (session_id, seq, event_id, event_type, ts, content, prev_hash, hash)
           VALUES ($1, $2, gen_random_uuid(), $3, $4, $5, $6, $7)`,
          [`raw_${i % 1000}`, Math.floor(i / 1000) + 1, i % 2 ? 'LLM_RESPONSE' : 'USER_INPUT', Date.now(), JSON.stringify({ input: `bench question ${i}` }), hash, hash],
        );
        insert.ok(performance.now() - t0);
      } catch (err) {
        const e = err as Error & { code?: string };
        insert.fail(e.code ?? e.message, e.message);
      }
    });
    return { clients, capNote, wallMs, insert };
  } finally {
    await pool?.end().catch(() => undefined);
    await admin.query(`DROP TABLE IF EXISTS ${table}`).catch((e: Error) => console.error(`could not drop ${table}: ${e.message}`));
    await admin.end().catch(() => undefined);
  }
}

