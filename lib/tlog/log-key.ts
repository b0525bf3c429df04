/**
 * The log's identity: its origin (LOG_ORIGIN, default `timekeeper/<instance id>`) and its
 * Ed25519 signing key. The key comes from LOG_SIGNING_KEY_FILE when set (a signer key string
 * `PRIVATE+KEY+<name>+<id>+<base64>`, as Go's note.GenerateKey writes, or a 32-byte seed in
 * base64 or hex), otherwise from `<TIMEKEEPER_DATA_DIR>/log-signing.key`, a seed generated on
 * first start like data/secrets.key (lib/secrets-key.ts). A seed signs under the origin as key
 * name, as C2SP tlog-checkpoint advises. Only the worker (the builder) holds it; the API serves
 * the verifier key from the database (tlog_keys).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';
import { readOrCreateKeyFile } from '../secrets-key';
import type { CheckpointSigner } from '../store/tlog';
import { ed25519PrivateKey, ed25519RawPublic, formatSignerKey, formatVerifierKey, noteSigner, parseSignerKey, SIG_ED25519, signNote } from './note';

export const LOG_SIGNING_KEY_FILE = 'log-signing.key';

export const defaultLogOrigin = (instanceId: string): string => `timekeeper/${instanceId}`;

/** The signer key string a key file's contents stand for. */
export function signerKeyOf(contents: string, origin: string, source: string): string {
  const s = contents.trim();
  if (s.startsWith('PRIVATE+KEY+')) {
    parseSignerKey(s); // refuses a malformed key at start-up
    return s;
  }
  const seed = /^[0-9a-fA-F]{64}$/.test(s) ? Buffer.from(s, 'hex') : Buffer.from(s, 'base64');
  if (seed.length !== 32) throw new Error(`${source}: the log signing key must be a signer key string (PRIVATE+KEY+…) or a 32-byte Ed25519 seed in base64 or hex`);
  return formatSignerKey(origin, SIG_ED25519, seed);
}

/** The checkpoint signer of this process: the configured key file, or the generated one. */
export function logSignerOf(c: Pick<Config, 'logSigningKeyFile' | 'dataDir'>, origin: string): CheckpointSigner {
  const file = c.logSigningKeyFile;
  const contents = file ? fs.readFileSync(file, 'utf8') : readOrCreateKeyFile(path.join(c.dataDir, LOG_SIGNING_KEY_FILE));
  const skey = signerKeyOf(contents, origin, file ? 'LOG_SIGNING_KEY_FILE' : LOG_SIGNING_KEY_FILE);
  const parsed = parseSignerKey(skey);
  const signer = noteSigner(skey);
  const verifierKey = formatVerifierKey(parsed.name, SIG_ED25519, ed25519RawPublic(ed25519PrivateKey(parsed.key)));
  return { verifierKey, sign: (body) => signNote(body, signer) };
}
