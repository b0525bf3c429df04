/**
 * The golden vectors of docs/hash-chain.md §10 (test/vectors/tlog.json), made from fixed
 * seeds so that they can be regenerated and compared: a log key, a witness key, an 8-leaf
 * tree, proofs, a signed and a cosigned checkpoint.
 */
import { createHash } from 'node:crypto';
import { formatCheckpoint } from '../../lib/tlog/checkpoint';
import { cosignatureSigner } from '../../lib/tlog/cosignature';
import { ed25519PrivateKey, ed25519RawPublic, formatSignerKey, formatVerifierKey, noteSigner, signNote, SIG_COSIGNATURE_V1, SIG_ED25519 } from '../../lib/tlog/note';
import { MemoryTree } from './tlog-memory-tree';

const sha = (s: string): Buffer => createHash('sha256').update(s).digest();

export const VECTOR_ORIGIN = 'timekeeper.example/log';
export const VECTOR_WITNESS = 'witness.example/w1';
export const VECTOR_TIME_MS = 1_767_225_600_000; // 2026-01-01T00:00:00Z

export function makeVectors() {
  const logSeed = sha('timekeeper golden log key');
  const witnessSeed = sha('timekeeper golden witness key');
  const keys = {
    log_signer: formatSignerKey(VECTOR_ORIGIN, SIG_ED25519, logSeed),
    log_verifier: formatVerifierKey(VECTOR_ORIGIN, SIG_ED25519, ed25519RawPublic(ed25519PrivateKey(logSeed))),
    witness_signer: formatSignerKey(VECTOR_WITNESS, SIG_COSIGNATURE_V1, witnessSeed),
    witness_verifier: formatVerifierKey(VECTOR_WITNESS, SIG_COSIGNATURE_V1, ed25519RawPublic(ed25519PrivateKey(witnessSeed))),
  };
  const tree = new MemoryTree();
  const leafData: string[] = [];
  for (let i = 0; i < 8; i++) {
    const d = sha(`record ${i}`); // stands for a record's 32-byte chain hash
    leafData.push(d.toString('hex'));
    tree.append(d);
  }
  const checkpoint7 = formatCheckpoint({ origin: VECTOR_ORIGIN, size: 7, rootHash: tree.root(7), extensions: [] });
  const checkpoint8 = formatCheckpoint({ origin: VECTOR_ORIGIN, size: 8, rootHash: tree.root(8), extensions: [] });
  const signed8 = signNote(checkpoint8, noteSigner(keys.log_signer));
  const cosigned8 = signNote(checkpoint8, noteSigner(keys.log_signer), cosignatureSigner(keys.witness_signer, () => VECTOR_TIME_MS));
  return {
    keys,
    leaf_data_hex: leafData,
    leaf_hashes_b64: tree.leaves.map((h) => h.toString('base64')),
    roots_b64: Object.fromEntries([1, 2, 3, 4, 5, 6, 7, 8].map((n) => [String(n), tree.root(n).toString('base64')])),
    inclusion: { leaf_index: 5, tree_size: 8, hashes: tree.inclusion(5, 8).map((h) => h.toString('base64')) },
    consistency: { from: 3, to: 8, hashes: tree.consistency(3, 8).map((h) => h.toString('base64')) },
    checkpoint_7: checkpoint7,
    checkpoint_8: checkpoint8,
    signed_checkpoint_8: signed8,
    cosigned_checkpoint_8: cosigned8,
    cosignature_time: VECTOR_TIME_MS / 1000,
  };
}

export type TlogVectors = ReturnType<typeof makeVectors>;
