/**
 * A chain checked against a checkpoint of the log (the latest, or with witnesses configured the
 * newest witnessed one; the caller picks): its signature (the log's verifier
 * key), and for every record of the chain the log has taken before that checkpoint, that the
 * leaf is SHA-256(0x00 ‖ the record's stored hash) and that its inclusion proof leads to the
 * checkpoint's root (lib/tlog/verify.ts). A record whose stored hash was rewritten, or a tree
 * whose stored hashes were, fails here and names the first such record.
 */
import { parseCheckpoint } from './checkpoint';
import { noteVerifier, openNote } from './note';
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
  checkpoint: { tree_size: number; root_hash: string; witnessed: boolean } | null;
  /** Records included in that checkpoint and proven. */
  proven: number;
  /** Records not in it yet (logged later, or not logged yet). */
  pending: number;
  first_bad_seq?: number;
  detail?: string;
}

export async function checkChainInLog(
  leaves: ChainLeaf[],
  latest: { note: string; verifierKey: string; quorumMet?: boolean } | null,
  read: TileReader,
): Promise<LogCheck> {
  if (!latest) return { ok: true, checkpoint: null, proven: 0, pending: leaves.length };
  let cp;
  try {
    cp = parseCheckpoint(openNote(latest.note, [noteVerifier(latest.verifierKey)]).text);
  } catch (err) {
    return { ok: false, checkpoint: null, proven: 0, pending: leaves.length, detail: `the latest checkpoint does not verify with the log's key ${latest.verifierKey}: ${(err as Error).message}` };
  }
  const checkpoint = { tree_size: cp.size, root_hash: cp.rootHash.toString('base64'), witnessed: latest.quorumMet ?? false };
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
