/**
 * C2SP signed notes (https://c2sp.org/signed-note): Ed25519 keys, key ids, key strings,
 * signing a note text and opening a signed note with known verifiers.
 *
 * Hand-written on purpose: the format is a few dozen lines of text handling and there is no
 * maintained npm package for it; the cryptography is Node's own Ed25519 (node:crypto), nothing
 * hand-rolled. The rules follow the spec and Go's golang.org/x/mod/sumdb/note (the reference
 * implementation), which the tests run against this code (test/support/go-tlog):
 * - a note is valid UTF-8 with no control characters but newline; the text ends in a newline
 *   and is separated from the signature lines by the last blank line;
 * - a signature line is `— <name> <base64(4-byte key id ‖ signature)>`;
 * - signatures from unknown keys (name and id not both known) are ignored; a signature from a
 *   known key that does not verify rejects the whole note; no verified signature rejects it;
 * - at most 100 signature lines (the spec asks for at least 16), as Go does.
 *
 * Signature types other than Ed25519 (0x01) plug in through the NoteVerifier/NoteSigner
 * interfaces (lib/tlog/cosignature.ts adds cosignature/v1, type 0x04).
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';

/** Signature type bytes (signed-note §Signature types). */
export const SIG_ED25519 = 0x01;
export const SIG_COSIGNATURE_V1 = 0x04;

/** The most signature lines a note may carry before it is refused as malformed. */
export const MAX_SIGNATURES = 100;

const EM_DASH_PREFIX = '\u2014 ';

export class NoteError extends Error {
  constructor(
    /** malformed: not a signed note; unverified: no known key signed it; invalid-signature: a known key's signature is wrong. */
    readonly kind: 'malformed' | 'unverified' | 'invalid-signature' | 'bad-key',
    message: string,
  ) {
    super(message);
    this.name = 'NoteError';
  }
}

/** Something that checks signatures of one key: the (name, keyId) pair identifies it. */
export interface NoteVerifier {
  readonly name: string;
  readonly keyId: number;
  /** Whether `sig` (the signature bytes after the 4-byte key id) signs `text` (the note text). */
  verify(text: Buffer, sig: Buffer): boolean;
}

export interface NoteSigner {
  readonly name: string;
  readonly keyId: number;
  /** The signature bytes (without the key id) over `text`, the note text. */
  sign(text: Buffer): Buffer;
}

/** One signature line of a note, as parsed (not yet checked). */
export interface NoteSignature {
  name: string;
  keyId: number;
  /** The signature bytes after the key id. */
  sig: Buffer;
  /** The base64 field of the line as written. */
  base64: string;
}

export interface OpenedNote {
  /** The note text, including its final newline. */
  text: string;
  /** Signatures that verified with a known key, duplicates dropped, in note order. */
  verified: NoteSignature[];
  /** Signatures from unknown keys, kept so a relay can pass them on. */
  unknown: NoteSignature[];
}

/** Key names: non-empty, no Unicode space, no plus sign. */
export function isValidKeyName(name: string): boolean {
  return name.length > 0 && !/[\p{White_Space}+]/u.test(name) && isWellFormed(name);
}

/** key ID = SHA-256(key name ‖ 0x0A ‖ signature type ‖ public key)[:4], as a big-endian uint32. */
export function keyId(name: string, type: number, publicKey: Buffer): number {
  const h = createHash('sha256').update(name, 'utf8').update(Buffer.from([0x0a, type])).update(publicKey).digest();
  return h.readUInt32BE(0);
}

export const keyIdHex = (id: number): string => id.toString(16).padStart(8, '0');

/** Strict standard base64 (RFC 4648 §4, padded, canonical), or null. */
export function decodeBase64(s: string): Buffer | null {
  if (s.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return null;
  const b = Buffer.from(s, 'base64');
  return b.toString('base64') === s ? b : null;
}

const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** A Node public KeyObject from the 32 raw bytes of an Ed25519 public key. */
export function ed25519PublicKey(raw: Buffer): KeyObject {
  if (raw.length !== 32) throw new NoteError('bad-key', 'an Ed25519 public key is 32 bytes');
  return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
}

/** A Node private KeyObject from a 32-byte Ed25519 seed. */
export function ed25519PrivateKey(seed: Buffer): KeyObject {
  if (seed.length !== 32) throw new NoteError('bad-key', 'an Ed25519 private key seed is 32 bytes');
  return createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

/** The 32 raw public key bytes of an Ed25519 key (private or public KeyObject). */
export function ed25519RawPublic(key: KeyObject): Buffer {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  const der = pub.export({ format: 'der', type: 'spki' });
  return der.subarray(der.length - 32);
}

/** A fresh Ed25519 seed (32 bytes) from Node's CSPRNG-backed key generation. */
export function generateEd25519Seed(): Buffer {
  const { privateKey } = generateKeyPairSync('ed25519');
  const der = privateKey.export({ format: 'der', type: 'pkcs8' });
  return Buffer.from(der.subarray(der.length - 32));
}

/** The verifier key string `<name>+<hex id>+<base64(type ‖ public key)>`. */
export function formatVerifierKey(name: string, type: number, publicKey: Buffer): string {
  if (!isValidKeyName(name)) throw new NoteError('bad-key', `invalid key name ${JSON.stringify(name)}`);
  return `${name}+${keyIdHex(keyId(name, type, publicKey))}+${Buffer.concat([Buffer.from([type]), publicKey]).toString('base64')}`;
}

/** The signer key string, as Go's note.GenerateKey writes it: `PRIVATE+KEY+<name>+<hex id>+<base64(type ‖ seed)>`. */
export function formatSignerKey(name: string, type: number, seed: Buffer): string {
  const pub = ed25519RawPublic(ed25519PrivateKey(seed));
  if (!isValidKeyName(name)) throw new NoteError('bad-key', `invalid key name ${JSON.stringify(name)}`);
  return `PRIVATE+KEY+${name}+${keyIdHex(keyId(name, type, pub))}+${Buffer.concat([Buffer.from([type]), seed]).toString('base64')}`;
}

export interface ParsedKey {
  name: string;
  keyId: number;
  type: number;
  /** Public key bytes (verifier key) or private seed (signer key), without the type byte. */
  key: Buffer;
}

/** Parses `<name>+<hex id>+<base64(type ‖ key)>`; the id must match the key for public keys. */
export function parseVerifierKey(vkey: string): ParsedKey {
  // The base64 key may itself contain '+': cut at the first two only, as Go does.
  const parts = cutPlus(vkey, 2);
  if (!parts) throw new NoteError('bad-key', 'a verifier key is <name>+<hex id>+<base64 key>');
  const [name, hex, b64] = parts;
  const parsed = parseKeyParts(name, hex, b64);
  if (parsed.type !== SIG_ED25519 && parsed.type !== SIG_COSIGNATURE_V1) throw new NoteError('bad-key', `unsupported signature type 0x${parsed.type.toString(16)}`);
  if (parsed.key.length !== 32) throw new NoteError('bad-key', 'an Ed25519 public key is 32 bytes');
  if (keyId(name, parsed.type, parsed.key) !== parsed.keyId) throw new NoteError('bad-key', 'the key id does not match the key');
  return parsed;
}

/** Parses `PRIVATE+KEY+<name>+<hex id>+<base64(type ‖ seed)>`; the id must match the derived public key. */
export function parseSignerKey(skey: string): ParsedKey {
  const parts = cutPlus(skey, 4);
  if (!parts || parts[0] !== 'PRIVATE' || parts[1] !== 'KEY') throw new NoteError('bad-key', 'a signer key is PRIVATE+KEY+<name>+<hex id>+<base64 key>');
  const parsed = parseKeyParts(parts[2], parts[3], parts[4]);
  if (parsed.type !== SIG_ED25519 && parsed.type !== SIG_COSIGNATURE_V1) throw new NoteError('bad-key', `unsupported signature type 0x${parsed.type.toString(16)}`);
  const pub = ed25519RawPublic(ed25519PrivateKey(parsed.key));
  if (keyId(parsed.name, parsed.type, pub) !== parsed.keyId) throw new NoteError('bad-key', 'the key id does not match the key');
  return parsed;
}

/** Splits at the first `n` plus signs: n + 1 fields, the last one keeping any further '+'. */
function cutPlus(s: string, n: number): string[] | null {
  const out: string[] = [];
  let rest = s;
  for (let i = 0; i < n; i++) {
    const at = rest.indexOf('+');
    if (at < 0) return null;
    out.push(rest.slice(0, at));
    rest = rest.slice(at + 1);
  }
  return [...out, rest];
}

function parseKeyParts(name: string, hex: string, b64: string): ParsedKey {
  if (!isValidKeyName(name)) throw new NoteError('bad-key', `invalid key name ${JSON.stringify(name)}`);
  if (!/^[0-9a-f]{8}$/.test(hex)) throw new NoteError('bad-key', 'the key id is 8 lowercase hex digits');
  const raw = decodeBase64(b64);
  if (!raw || raw.length < 2) throw new NoteError('bad-key', 'the key is base64 of a type byte and key bytes');
  return { name, keyId: parseInt(hex, 16), type: raw[0], key: Buffer.from(raw.subarray(1)) };
}

/** An Ed25519 note verifier (type 0x01) from a verifier key string. */
export function noteVerifier(vkey: string): NoteVerifier {
  const k = parseVerifierKey(vkey);
  if (k.type !== SIG_ED25519) throw new NoteError('bad-key', 'not an Ed25519 note key (type 0x01)');
  const pub = ed25519PublicKey(k.key);
  return { name: k.name, keyId: k.keyId, verify: (text, sig) => sig.length === 64 && verify(null, text, pub, sig) };
}

/** An Ed25519 note signer (type 0x01) from a signer key string. */
export function noteSigner(skey: string): NoteSigner {
  const k = parseSignerKey(skey);
  if (k.type !== SIG_ED25519) throw new NoteError('bad-key', 'not an Ed25519 note key (type 0x01)');
  const priv = ed25519PrivateKey(k.key);
  return { name: k.name, keyId: k.keyId, sign: (text) => sign(null, text, priv) };
}

/** A new Ed25519 note key pair for `name`: the signer key (secret) and the verifier key. */
export function generateNoteKey(name: string): { signerKey: string; verifierKey: string } {
  const seed = generateEd25519Seed();
  const pub = ed25519RawPublic(ed25519PrivateKey(seed));
  return { signerKey: formatSignerKey(name, SIG_ED25519, seed), verifierKey: formatVerifierKey(name, SIG_ED25519, pub) };
}

/** Well-formed UTF-16 (no lone surrogates), so the UTF-8 encoding round-trips. */
function isWellFormed(s: string): boolean {
  return !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);
}

/** Text a note may carry: well-formed, no control characters but newline. */
function isValidNoteText(s: string): boolean {
  return isWellFormed(s) && !/[\u0000-\u0009\u000b-\u001f]/.test(s);
}

/** A signature line for a signature by (name, keyId). */
export function signatureLine(name: string, id: number, sig: Buffer): string {
  const b = Buffer.alloc(4 + sig.length);
  b.writeUInt32BE(id, 0);
  sig.copy(b, 4);
  return `${EM_DASH_PREFIX}${name} ${b.toString('base64')}\n`;
}

/**
 * Signs `text` with each signer and returns the signed note: the text, a blank line, one
 * signature line per signer. The text must be non-empty, end in a newline and be valid.
 */
export function signNote(text: string, ...signers: NoteSigner[]): string {
  assertSignableText(text);
  const bytes = Buffer.from(text, 'utf8');
  const lines = signers.map((s) => signatureLine(s.name, s.keyId, s.sign(bytes)));
  return `${text}\n${lines.join('')}`;
}

function assertSignableText(text: string): void {
  if (!text.endsWith('\n')) throw new NoteError('malformed', 'the note text must end in a newline');
  if (!isValidNoteText(text)) throw new NoteError('malformed', 'the note text must be UTF-8 without control characters other than newline');
}

/** Splits a signed note into its text and parsed signature lines without checking any signature. */
export function parseNote(note: string): { text: string; signatures: NoteSignature[] } {
  if (!isValidNoteText(note)) throw new NoteError('malformed', 'a note is UTF-8 without control characters other than newline');
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw new NoteError('malformed', 'no blank line before the signatures');
  const text = note.slice(0, split + 1);
  const sigBlock = note.slice(split + 2);
  if (sigBlock.length === 0 || !sigBlock.endsWith('\n')) throw new NoteError('malformed', 'the signature lines must end in a newline');
  const lines = sigBlock.slice(0, -1).split('\n');
  if (lines.length > MAX_SIGNATURES) throw new NoteError('malformed', `more than ${MAX_SIGNATURES} signatures`);
  const signatures = lines.map((line) => {
    if (!line.startsWith(EM_DASH_PREFIX)) throw new NoteError('malformed', 'a signature line starts with an em dash and a space');
    const rest = line.slice(EM_DASH_PREFIX.length);
    const space = rest.indexOf(' ');
    const name = space < 0 ? rest : rest.slice(0, space);
    const b64 = space < 0 ? '' : rest.slice(space + 1);
    const raw = decodeBase64(b64);
    if (!isValidKeyName(name) || !raw || raw.length < 5) throw new NoteError('malformed', 'a signature line is "— <name> <base64(key id ‖ signature)>"');
    return { name, keyId: raw.readUInt32BE(0), sig: Buffer.from(raw.subarray(4)), base64: b64 };
  });
  return { text, signatures };
}

/**
 * Opens a signed note: checks every signature whose (name, key id) a known verifier has,
 * ignores the others, and throws NoteError unless at least one known signature verified.
 */
export function openNote(note: string, known: readonly NoteVerifier[]): OpenedNote {
  const { text, signatures } = parseNote(note);
  const bytes = Buffer.from(text, 'utf8');
  const verified: NoteSignature[] = [];
  const unknown: NoteSignature[] = [];
  const seen = new Set<string>();
  for (const s of signatures) {
    const id = `${s.keyId}:${s.name}`;
    const v = known.find((k) => k.name === s.name && k.keyId === s.keyId);
    if (!v) {
      if (!unknown.some((u) => u.name === s.name && u.base64 === s.base64)) unknown.push(s);
      continue;
    }
    if (!v.verify(bytes, s.sig)) throw new NoteError('invalid-signature', `the signature by ${s.name}+${keyIdHex(s.keyId)} does not verify`);
    if (seen.has(id)) continue;
    seen.add(id);
    verified.push(s);
  }
  if (verified.length === 0) throw new NoteError('unverified', 'no signature from a known key');
  return { text, verified, unknown };
}
