/**
 * C2SP tlog-cosignature, Ed25519 cosignature/v1 (signature type 0x04): a witness's
 * timestamped signature on a checkpoint, carried as one more signed-note signature line.
 *
 * Signed message: `cosignature/v1\ntime <POSIX seconds>\n` followed by the whole checkpoint
 * note text (with its final newline). Signature bytes: the 8-byte big-endian timestamp, then
 * the 64-byte Ed25519 signature. Key id: SHA-256(name ‖ 0x0A ‖ 0x04 ‖ public key)[:4].
 * Hand-written for the same reason as note.ts; Ed25519 itself is node:crypto.
 */
import { sign, verify } from 'node:crypto';
import {
  ed25519PrivateKey,
  ed25519PublicKey,
  ed25519RawPublic,
  formatSignerKey,
  formatVerifierKey,
  generateEd25519Seed,
  NoteError,
  parseSignerKey,
  parseVerifierKey,
  SIG_COSIGNATURE_V1,
  type NoteSignature,
  type NoteSigner,
  type NoteVerifier,
} from './note';

const MAX_TIMESTAMP = (1n << 63n) - 1n;

/** The bytes a cosignature/v1 signs for a checkpoint text at `timestamp` (POSIX seconds). */
export function cosignedMessage(timestamp: bigint, checkpointText: string): Buffer {
  if (timestamp < 0n || timestamp > MAX_TIMESTAMP) throw new RangeError('the cosignature timestamp is out of range');
  return Buffer.from(`cosignature/v1\ntime ${timestamp.toString()}\n${checkpointText}`, 'utf8');
}

/** The timestamp (POSIX seconds) inside a cosignature's signature bytes (after the key id). */
export function cosignatureTimestamp(sig: Buffer): number {
  if (sig.length !== 72) throw new NoteError('malformed', 'a cosignature/v1 is 8 timestamp bytes and a 64-byte signature');
  return Number(sig.readBigUInt64BE(0));
}

/** A cosignature/v1 verifier from a verifier key string of type 0x04. */
export function cosignatureVerifier(vkey: string): NoteVerifier {
  const k = parseVerifierKey(vkey);
  if (k.type !== SIG_COSIGNATURE_V1) throw new NoteError('bad-key', 'not a cosignature/v1 key (type 0x04)');
  const pub = ed25519PublicKey(k.key);
  return {
    name: k.name,
    keyId: k.keyId,
    verify: (text, sig) => {
      if (sig.length !== 72) return false;
      const ts = sig.readBigUInt64BE(0);
      if (ts > MAX_TIMESTAMP) return false;
      return verify(null, cosignedMessage(ts, text.toString('utf8')), pub, sig.subarray(8));
    },
  };
}

/** A cosignature/v1 signer from a signer key string of type 0x04; `now` gives POSIX milliseconds. */
export function cosignatureSigner(skey: string, now: () => number = Date.now): NoteSigner {
  const k = parseSignerKey(skey);
  if (k.type !== SIG_COSIGNATURE_V1) throw new NoteError('bad-key', 'not a cosignature/v1 key (type 0x04)');
  const priv = ed25519PrivateKey(k.key);
  return {
    name: k.name,
    keyId: k.keyId,
    sign: (text) => {
      const ts = BigInt(Math.floor(now() / 1000));
      const out = Buffer.alloc(72);
      out.writeBigUInt64BE(ts, 0);
      sign(null, cosignedMessage(ts, text.toString('utf8')), priv).copy(out, 8);
      return out;
    },
  };
}

/** A new cosigner key pair (type 0x04) for `name`. */
export function generateCosignerKey(name: string): { signerKey: string; verifierKey: string } {
  const seed = generateEd25519Seed();
  const pub = ed25519RawPublic(ed25519PrivateKey(seed));
  return { signerKey: formatSignerKey(name, SIG_COSIGNATURE_V1, seed), verifierKey: formatVerifierKey(name, SIG_COSIGNATURE_V1, pub) };
}

/** The timestamps of the verified cosignatures among `sigs`, by cosigner name. */
export function cosignatureTimes(sigs: readonly NoteSignature[], cosigners: readonly NoteVerifier[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of sigs) if (cosigners.some((c) => c.name === s.name && c.keyId === s.keyId)) out.set(s.name, cosignatureTimestamp(s.sig));
  return out;
}
