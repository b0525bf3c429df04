/**
 * A chain checked against a checkpoint of the log (the latest, or with witnesses configured the
 * newest witnessed one; the caller picks): its signature (the log's verifier key), whether it
 * is witnessed, counted here from the cosignatures that verify with the configured witness
 * keys (LOG_WITNESSES) against the quorum, never taken from what the database says (a stored
 * `quorum_met` is what a writer with database rights could set), and for every record of the chain the log has taken before that checkpoint, that the
 * leaf is SHA-256(0x00 ‖ the record's stored hash) and that its inclusion proof leads to the
 * checkpoint's root (lib/tlog/verify.ts). A record whose stored hash was rewritten, or a tree
 * whose stored hashes were, fails here and names the first such record.
 */
import { checkCheckpointNote } from './proof';
import { cachedReader, inclusionProof, leafHash, type TileReader } from './tree';
import { verifyInclusion } from './verify';

/** One record of a chain as stored, with its leaf index (null: not in the log yet). */
export interface ChainLeaf {
  seq: number;
  hash: string;
  logIndex: number | null;
}

export interface LogCheck {
  ok: boolean;
  /** The checkpoint checked against (null: the log has none yet); witnessed: its cosignatures met the quorum. */
  checkpoint: { tree_size: number; root_hash: string; witnessed: boolean; cosignatures: number } | null;
  /** Records included in that checkpoint and proven. */
  proven: number;
  /** Records not in it yet (logged later, or not logged yet). */
  pending: number;
  first_bad_seq?: number;
  detail?: string;
}

/** The configured witnesses' cosigner keys (type 0x04) and how many must cosign (LOG_WITNESSES, LOG_WITNESS_QUORUM). */
export interface WitnessTrust {
  witnessKeys: readonly string[];
  quorum: number;
}

export const NO_WITNESSES: WitnessTrust = { witnessKeys: [], quorum: 0 };

/** The trust LOG_WITNESSES / LOG_WITNESS_QUORUM configure. */
export const witnessTrustOf = (w: { witnesses: readonly { verifierKey: string }[]; quorum: number }): WitnessTrust => ({ witnessKeys: w.witnesses.map((x) => x.verifierKey), quorum: w.quorum });

export async function checkChainInLog(
  leaves: ChainLeaf[],
  latest: { note: string; verifierKey: string; quorumMet?: boolean } | null,
  read: TileReader,
  trust: WitnessTrust = NO_WITNESSES,
): Promise<LogCheck> {
  if (!latest) return { ok: true, checkpoint: null, proven: 0, pending: leaves.length };
  let checked;
  try {
    checked = checkCheckpointNote(latest.note, { logKeys: [latest.verifierKey], witnessKeys: [...trust.witnessKeys], quorum: trust.quorum });
  } catch (err) {
    return { ok: false, checkpoint: null, proven: 0, pending: leaves.length, detail: `the checkpoint does not verify with the log's key ${latest.verifierKey} and the configured witness keys: ${(err as Error).message}` };
  }
  const cp = checked.checkpoint;
  const cosignatures = new Set(checked.cosigners.map((c) => c.name)).size;
  // No witnesses configured: nothing can count as witnessed (there is no key to check with).
  const witnessed = trust.witnessKeys.length > 0 && checked.quorumMet;
  const checkpoint = { tree_size: cp.size, root_hash: cp.rootHash.toString('base64'), witnessed, cosignatures };
  if (latest.quorumMet && trust.witnessKeys.length > 0 && !witnessed) {
    return {
      ok: false,
      checkpoint,
      proven: 0,
      pending: leaves.length,
      detail: `checkpoint ${cp.size} is stored as witnessed, but only ${cosignatures} of the required ${trust.quorum} cosignatures verify with the configured witness keys`,
    };
  }
  // Most proofs of one chain share their upper tiles.
  const cached = cachedReader(read);
  let proven = 0;
  let pending = 0;
  for (const l of leaves) {
    if (l.logIndex === null || l.logIndex >= cp.size) {
      pending++;
      continue;
    }
    const leaf = leafHash(Buffer.from(l.hash, 'hex'));
    let proof: Buffer[];
    try {
      proof = await inclusionProof(l.logIndex, cp.size, cached);
    } catch (err) {
      return { ok: false, checkpoint, proven, pending, first_bad_seq: l.seq, detail: `seq ${l.seq} (log_index ${l.logIndex}): the log's stored hashes are incomplete: ${(err as Error).message}` };
    }
    if (!verifyInclusion(l.logIndex, cp.size, leaf, proof, cp.rootHash)) {
      return {
        ok: false,
        checkpoint,
        proven,
        pending,
        first_bad_seq: l.seq,
        detail: `seq ${l.seq} (log_index ${l.logIndex}): its hash ${l.hash} is not the record the log committed to in checkpoint ${cp.size}`,
      };
    }
    proven++;
  }
  return { ok: true, checkpoint, proven, pending };
}
