/**
 * The key that seals task secrets (lib/task-secrets.ts): SECRETS_KEY (32 bytes, base64 or
 * hex) when set, otherwise `<TIMEKEEPER_DATA_DIR>/secrets.key`, generated on first start (mode
 * 0600) as the embedded PostgreSQL keeps its generated passwords. The file is created under a
 * temporary name and linked into place, so an API and a worker starting together (npm start's
 * worker child) both end up with the one key. In production, where API and worker run on
 * different hosts, set SECRETS_KEY on both.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config';
import { TaskSecrets } from './task-secrets';

export const SECRETS_KEY_FILE = 'secrets.key';

/** SECRETS_KEY's value as 32 bytes; anything else is a start-up error naming the variable. */
export function parseSecretsKey(raw: string): Buffer {
  const s = raw.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(s) ? Buffer.from(s, 'hex') : Buffer.from(s, 'base64');
  if (key.length !== 32) throw new Error('SECRETS_KEY must be 32 bytes, as 64 hex digits or base64 (e.g. `openssl rand -base64 32`)');
  return key;
}

/**
 * The contents of a key file, generated (32 random bytes, base64, mode 0600) when it does not
 * exist yet; concurrent first starts end up with one key. Also used for the log's signing key
 * (lib/tlog/log-key.ts).
 */
export function readOrCreateKeyFile(file: string): string {
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    fs.writeFileSync(tmp, randomBytes(32).toString('base64') + '\n', { mode: 0o600 });
    try {
      fs.linkSync(tmp, file); // fails if another process got there first: then its key is the one
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  }
  return fs.readFileSync(file, 'utf8');
}

function keyFile(dataDir: string): Buffer {
  return parseSecretsKey(readOrCreateKeyFile(path.join(dataDir, SECRETS_KEY_FILE)));
}

/** The sealer this process uses, from SECRETS_KEY or the key file. */
export function taskSecretsOf(c: Pick<Config, 'secretsKey' | 'dataDir'>): TaskSecrets {
  return new TaskSecrets(c.secretsKey !== undefined ? parseSecretsKey(c.secretsKey) : keyFile(c.dataDir));
}
