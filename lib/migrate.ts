/**
 * Ordered SQL migrations from schema/, each applied once in its own transaction and
 * recorded in schema_migrations. Safe to run from several processes at once: an advisory
 * lock serialises them.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { databaseName, guardClient, quoteIdent, withDatabase } from './db';

export const SCHEMA_DIR = path.resolve(__dirname, '..', 'schema');
const MIGRATION_LOCK = 7_302_514_001; // arbitrary, fixed: one advisory lock key for all migrators

export interface Migration {
  version: string;
  name: string;
  sql: string;
  checksum: string;
}

export function loadMigrations(dir = SCHEMA_DIR): Migration[] {
  return fs
    .readdirSync(dir)
    .filter((f) => /^\d+_.+\.sql$/.test(f))
    .sort()
    .map((file) => {
      const sql = fs.readFileSync(path.join(dir, file), 'utf8');
      return {
        version: file.split('_')[0],
        name: file,
        sql,
        checksum: createHash('sha256').update(sql).digest('hex'),
      };
    });
}

/** Creates the database named in `url` when it does not exist yet. */
export async function ensureDatabase(url: string): Promise<void> {
  const name = databaseName(url);
  const admin = guardClient(new Client({ connectionString: withDatabase(url, 'postgres') }), 'migrate');
  await admin.connect();
  try {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) {
      try {
        await admin.query(`CREATE DATABASE ${quoteIdent(name)}`);
      } catch (err) {
        // Another process created it between our check and our CREATE.
        if ((err as { code?: string }).code !== '42P04') throw err;
      }
    }
  } finally {
    await admin.end();
  }
}

export interface MigrateOptions {
  /** Password to set on the runtime role timekeeper_app (production); none in local trust setups. */
  appPassword?: string;
  log?: (msg: string) => void;
}

/** Applies pending migrations; returns the names of those it applied. */
export async function migrate(url: string, opts: MigrateOptions = {}): Promise<string[]> {
  const log = opts.log ?? (() => undefined);
  await ensureDatabase(url);
  const client = guardClient(new Client({ connectionString: url }), 'migrate');
  await client.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY,
      name text NOT NULL,
      checksum text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Map<string, string>(
      (await client.query('SELECT version, checksum FROM schema_migrations')).rows.map((r) => [r.version, r.checksum]),
    );
    for (const m of loadMigrations()) {
      const seen = done.get(m.version);
      if (seen !== undefined) {
        if (seen !== m.checksum) throw new Error(`migration ${m.name} was changed after it was applied`);
        continue;
      }
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
          m.version,
          m.name,
          m.checksum,
        ]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${m.name} failed: ${(err as Error).message}`);
      }
      applied.push(m.name);
      log(`applied ${m.name}`);
    }
    if (opts.appPassword) {
      await client.query(`ALTER ROLE timekeeper_app PASSWORD ${client.escapeLiteral(opts.appPassword)}`);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await client.end();
  }
  return applied;
}
