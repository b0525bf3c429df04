/**
 * C2SP tlog-proof (c2sp.org/tlog-proof@v1): a record's offline-verifiable proof of inclusion,
 * the bundle `timekeeper export` attaches to every record.
 *
 *   c2sp.org/tlog-proof@v1
 *   [extra <base64>]
 *   index <leaf index>
 *   <inclusion proof hash, base64>   (zero or more, leaf's sibling first)
 *
 *   <the checkpoint note, verbatim, with the log's signature and the witnesses' cosignatures>
 *
 * verifyTlogProof checks all of it against a policy: the log's origin and verifier key, the
 * witnesses' cosigner keys and how many of them must have cosigned.
 */
import { parseCheckpoint, type Checkpoint } from './checkpoint';
import { cosignatureTimestamp, cosignatureVerifier } from './cosignature';
import { decodeBase64, NoteError, noteVerifier, openNote, parseNote } from './note';
import { leafHash, MAX_PROOF_HASHES, rootFromInclusionProof, ProofError } from './verify';

export const TLOG_PROOF_HEADER = 'c2sp.org/tlog-proof@v1';

export interface TlogProof {
  index: number;
  hashes: Buffer[];
  /** The signed (and cosigned) checkpoint note. */
  checkpoint: string;
  extra?: Buffer;
}

export function formatTlogProof(p: TlogProof): string {
  const extra = p.extra ? `extra ${p.extra.toString('base64')}\n` : '';
  return `${TLOG_PROOF_HEADER}\n${extra}index ${p.index}\n${p.hashes.map((h) => `${h.toString('base64')}\n`).join('')}\n${p.checkpoint}`;
}

export class TlogProofError extends Error {}

export function parseTlogProof(text: string): TlogProof {
  const blank = text.indexOf('\n\n');
  if (blank < 0) throw new TlogProofError('a tlog-proof has a blank line before its checkpoint');
  const lines = text.slice(0, blank).split('\n');
  const checkpoint = text.slice(blank + 2);
  if (lines[0] !== TLOG_PROOF_HEADER) throw new TlogProofError(`the first line is ${TLOG_PROOF_HEADER}`);
  let i = 1;
  let extra: Buffer | undefined;
  if (lines[i]?.startsWith('extra ')) {
    const e = decodeBase64(lines[i].slice(6));
    if (!e) throw new TlogProofError('the extra line is base64');
    extra = e;
    i++;
  }
  const m = /^index (0|[1-9][0-9]*)$/.exec(lines[i] ?? '');
  if (!m || !Number.isSafeInteger(Number(m[1]))) throw new TlogProofError('the index line is "index <decimal>"');
  const hashes = lines.slice(i + 1).map((l) => {
    const h = decodeBase64(l);
    if (!h || h.length !== 32) throw new TlogProofError('each proof line is the base64 of a 32-byte hash');
    return h;
  });
  if (hashes.length > MAX_PROOF_HASHES) throw new TlogProofError('too many proof lines');
  return { index: Number(m[1]), hashes, checkpoint, ...(extra ? { extra } : {}) };
}

export interface TrustPolicy {
  /** The log's origin; a checkpoint from another origin is refused. */
  origin?: string;
  /** The log's verifier key(s) (type 0x01). */
  logKeys: string[];
  /** Witness cosigner keys (type 0x04). */
  witnessKeys: string[];
  /** Cosignatures required from distinct witnesses among witnessKeys. */
  quorum: number;
}

export interface CheckedCheckpoint {
  checkpoint: Checkpoint;
  /** Witnesses (by key name) whose cosignature verified, with their timestamps (POSIX s). */
  cosigners: Array<{ name: string; timestamp: number }>;
  quorumMet: boolean;
}

/** Opens a checkpoint note under the policy: the log's signature must verify; cosignatures are counted. */
export function checkCheckpointNote(note: string, policy: TrustPolicy): CheckedCheckpoint {
  const logVerifiers = policy.logKeys.map(noteVerifier);
  const witnessVerifiers = policy.witnessKeys.map(cosignatureVerifier);
  const opened = openNote(note, [...logVerifiers, ...witnessVerifiers]);
  if (!opened.verified.some((s) => logVerifiers.some((v) => v.name === s.name && v.keyId === s.keyId))) {
    throw new NoteError('unverified', 'the checkpoint is not signed by the log key');
  }
  const checkpoint = parseCheckpoint(opened.text);
  if (policy.origin !== undefined && checkpoint.origin !== policy.origin) throw new TlogProofError(`the checkpoint is from ${checkpoint.origin}, not ${policy.origin}`);
  const cosigners = opened.verified
    .filter((s) => witnessVerifiers.some((v) => v.name === s.name && v.keyId === s.keyId))
    .map((s) => ({ name: s.name, timestamp: cosignatureTimestamp(s.sig) }));
  return { checkpoint, cosigners, quorumMet: new Set(cosigners.map((c) => c.name)).size >= policy.quorum };
}

export type ProofVerdict =
  | ({ ok: true; index: number } & CheckedCheckpoint)
  | { ok: false; index?: number; reason: 'malformed' | 'signature' | 'quorum' | 'inclusion'; detail: string };

/**
 * Verifies that `leafData` (a record's 32-byte chain hash) is at the proof's index in the
 * checkpointed tree, that the log signed the checkpoint and that enough witnesses cosigned it.
 * `checked` caches the checkpoint checks of an export (one note, many records).
 */
export function verifyTlogProof(text: string, leafData: Buffer, policy: TrustPolicy, checked = new Map<string, CheckedCheckpoint | Error>()): ProofVerdict {
  let p: TlogProof;
  try {
    p = parseTlogProof(text);
    parseNote(p.checkpoint);
  } catch (err) {
    return { ok: false, reason: 'malformed', detail: (err as Error).message };
  }
  let cp = checked.get(p.checkpoint);
  if (!cp) {
    try {
      cp = checkCheckpointNote(p.checkpoint, policy);
    } catch (err) {
      cp = err as Error;
    }
    checked.set(p.checkpoint, cp);
  }
  if (cp instanceof Error) return { ok: false, index: p.index, reason: 'signature', detail: cp.message };
  if (!cp.quorumMet) return { ok: false, index: p.index, reason: 'quorum', detail: `${cp.cosigners.length} of the required ${policy.quorum} witness cosignatures` };
  try {
    const root = rootFromInclusionProof(p.index, cp.checkpoint.size, leafHash(leafData), p.hashes);
    if (!root.equals(cp.checkpoint.rootHash)) return { ok: false, index: p.index, reason: 'inclusion', detail: `the record is not at index ${p.index} of the tree of size ${cp.checkpoint.size}` };
  } catch (err) {
    if (err instanceof ProofError) return { ok: false, index: p.index, reason: 'inclusion', detail: err.message };
    throw err;
  }
  return { ok: true, index: p.index, ...cp };
}
