/** `npm run migrate`: applies pending schema/ migrations to DATABASE_URL. */
import { loadConfig } from '../lib/config';
import { redact } from '../lib/bootstrap';
import { migrate } from '../lib/migrate';

async function main(): Promise<void> {
  const config = loadConfig();
  const applied = await migrate(config.databaseUrl, { appPassword: config.appDbPassword, log: (m) => console.log(`[migrate] ${m}`) });
  console.log(`[migrate] ${redact(config.databaseUrl)}: ${applied.length ? `applied ${applied.length}` : 'up to date'}`);
}

main().catch((err) => {
  console.error('[migrate] failed:', (err as Error).message);
  process.exit(1);
});
