/**
 * `npm start` on a machine where no PostgreSQL answers and DATABASE_URL is unset: the
 * bootstrap starts an embedded PostgreSQL under the data folder, migrates it, and the
 * runtime role can log in and use it (it needs a password there, unlike local trust auth).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { preparePostgres, PreparedPostgres } from '../../lib/bootstrap';
import { loadConfig } from '../../lib/config';
import { createPool } from '../../lib/db';
import { freePort } from '../../lib/temporal-server';

let pg: PreparedPostgres | undefined;
let base: string;
afterAll(async () => {
  await pg?.stop();
  if (base) fs.rmSync(base, { recursive: true, force: true });
});

test('falls back to an embedded PostgreSQL that the SELECT/INSERT-only role can use', async () => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-boot-'));
  fs.chmodSync(base, 0o755); // like a home or project folder; the data folder itself does not exist yet
  const nobodyListens = await freePort();
  const config = {
    ...loadConfig({}),
    databaseUrl: `postgres://postgres@127.0.0.1:${nobodyListens}/timekeeper`,
    databaseUrlIsDefault: true,
    dataDir: path.join(base, 'data'),
  };
  pg = await preparePostgres(config, () => undefined, await freePort());
  expect(pg.embedded).toBe(true);
  expect(new URL(pg.appUrl).username).toBe('timekeeper_app');

  const app = createPool(pg.appUrl, { max: 1 });
  try {
    const { rows } = await app.query('SELECT count(*)::int AS n FROM timekeeper_instance');
    expect(rows[0].n).toBe(1);
    await expect(app.query('DELETE FROM timekeeper_instance')).rejects.toThrow(/permission denied/);
  } finally {
    await app.end();
  }
});
