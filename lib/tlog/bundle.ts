/**
 * Offline proofs for exported records (`timekeeper export` / `timekeeper verify-file`): each
 * record of an export carries `tlog_proof`, a C2SP tlog-proof (lib/tlog/proof.ts) that its
 * 32-byte chain hash is the leaf at its `log_index` in a checkpoint the log signed and the
 * witnesses cosigned. Attaching needs the log's HTTP routes (passed in as functions);
 * checking needs nothing but the trusted keys.
 */
import { parseNote } from './note';
import { parseCheckpoint } from './checkpoint';
import { formatTlogProof, verifyTlogProof, type CheckedCheckpoint, type TrustPolicy } from './proof';

/** The members of an exported record this module reads. */
export interface LoggedRecord {
  seq: number;
  hash: string;
  log_index?: number | null;
  tlog_proof?: string;
}

export interface ProofSource {
  /** The latest (cosigned) checkpoint note: GET /v1/log/checkpoint; null when the log has none yet. */
  checkpoint(): Promise<string | null>;
  /** GET /v1/log/proof/inclusion?leaf_index=I&tree_size=N → its hashes. */
  inclusion(leafIndex: number, treeSize: number): Promise<Buffer[]>;
}

/** Adds `tlog_proof` to every record the latest checkpoint covers; returns how many are not covered yet. */
export async function attachProofs<T extends LoggedRecord>(records: T[], source: ProofSource): Promise<{ records: T[]; proven: number; pending: number; checkpoint: string | null }> {
  const checkpoint = await source.checkpoint();
  if (checkpoint === null) return { records, proven: 0, pending: records.length, checkpoint };
  const size = parseCheckpoint(parseNote(checkpoint).text).size;
  let proven = 0;
  const out: T[] = [];
  for (const r of records) {
    const i = r.log_index;
    if (typeof i !== 'number' || i >= size) {
      out.push(r);
      continue;
    }
    const hashes = await source.inclusion(i, size);
    out.push({ ...r, tlog_proof: formatTlogProof({ index: i, hashes, checkpoint }) });
    proven++;
  }
  return { records: out, proven, pending: records.length - proven, checkpoint };
}

export interface ExportLogVerdict {
  ok: boolean;
  /** Records whose proof verified. */
  proven: number;
  /** Records without a proof (not in a checkpoint yet when exported). */
  unproven: number;
  /** The first record whose proof failed, with why. */
  first_bad?: { seq: number; log_index: number | null; reason: string; detail: string };
  /** The largest checkpoint the proofs refer to and who cosigned it. */
  checkpoint?: { origin: string; size: number; root: string; cosigners: CheckedCheckpoint['cosigners'] };
}

/** Checks every record's tlog_proof under the policy, stopping at the first that fails. */
export function verifyExportProofs(records: readonly LoggedRecord[], policy: TrustPolicy): ExportLogVerdict {
  const cache = new Map<string, CheckedCheckpoint | Error>();
  let proven = 0;
  let unproven = 0;
  let best: ExportLogVerdict['checkpoint'];
  for (const r of records) {
    if (r.tlog_proof === undefined) {
      unproven++;
      continue;
    }
    const logIndex = typeof r.log_index === 'number' ? r.log_index : null;
    const leaf = /^[0-9a-f]{64}$/.test(r.hash) ? Buffer.from(r.hash, 'hex') : null;
    if (!leaf) return { ok: false, proven, unproven, first_bad: { seq: r.seq, log_index: logIndex, reason: 'malformed', detail: 'the record hash is not 64 hex digits' } };
    const v = verifyTlogProof(r.tlog_proof, leaf, policy, cache);
    if (!v.ok) return { ok: false, proven, unproven, first_bad: { seq: r.seq, log_index: logIndex, reason: v.reason, detail: v.detail } };
    if (logIndex !== null && v.index !== logIndex) {
      return { ok: false, proven, unproven, first_bad: { seq: r.seq, log_index: logIndex, reason: 'inclusion', detail: `the proof is for index ${v.index}, the record says ${logIndex}` } };
    }
    if (!best || v.checkpoint.size > best.size) {
      best = { origin: v.checkpoint.origin, size: v.checkpoint.size, root: v.checkpoint.rootHash.toString('base64'), cosigners: v.cosigners };
    }
    proven++;
  }
  return { ok: true, proven, unproven, ...(best ? { checkpoint: best } : {}) };
}


export interface AgainstVerdict {
  ok: boolean;
  /** Records of the witnessed export compared with the current one. */
  compared: number;
  first_bad?: { seq: number; log_index: number | null; reason: 'witnessed-proof' | 'differs' | 'missing'; detail: string };
}

/**
 * Compares a current export with an earlier witnessed one: every record the witnessed export
 * proves (its proofs must verify under the policy, quorum included) must be in the current
 * export with the same hash. Names the first record that differs or is gone: after a
 * consistent rewrite of chain and log, this is the record the rewrite started at.
 */
export function compareWithWitnessed(current: readonly LoggedRecord[], witnessed: readonly LoggedRecord[], policy: TrustPolicy): AgainstVerdict {
  const w = verifyExportProofs(witnessed, policy);
  if (!w.ok) return { ok: false, compared: 0, first_bad: { ...w.first_bad!, reason: 'witnessed-proof', detail: `the witnessed export does not verify: ${w.first_bad!.reason}: ${w.first_bad!.detail}` } };
  const bySeq = new Map(current.map((r) => [r.seq, r]));
  let compared = 0;
  for (const r of witnessed) {
    if (r.tlog_proof === undefined) continue;
    const logIndex = typeof r.log_index === 'number' ? r.log_index : null;
    const now = bySeq.get(r.seq);
    if (!now) return { ok: false, compared, first_bad: { seq: r.seq, log_index: logIndex, reason: 'missing', detail: `seq ${r.seq}, which the witnessed checkpoint covers, is gone` } };
    if (now.hash !== r.hash) {
      return { ok: false, compared, first_bad: { seq: r.seq, log_index: logIndex, reason: 'differs', detail: `its hash is ${now.hash}, the witnessed checkpoint ${w.checkpoint?.size} commits to ${r.hash}` } };
    }
    compared++;
  }
  return { ok: true, compared };
}
