/**
 * The log builder's witnessing (docs/hash-chain.md §11.5): after a batch publishes a checkpoint,
 * send it to LOG_WITNESSES with witnessCheckpoint() and store the round (the cosigned note, how
 * many cosigned, quorum met, the size each witness holds) append-only.
 *
 * Never in the batch's way: a round runs beside the batches (one at a time), so a witness that
 * is down or slow delays only witnessing; the checkpoint is already published log-signed. A
 * round that left a witness without the newest checkpoint is retried with the next batch's
 * checkpoint, or after `retryMs` when no new batch comes (stored only when it changed something).
 */
import { witnessCheckpoint, type WitnessingSettings, type WitnessFailure, type WitnessRequest } from './witnessing';
import { consistencyProof } from './tree';
import type { StoredCheckpoint, TlogStore, WitnessingRound } from '../store/tlog';

export interface WitnessRounds {
  /** Starts a round for `latest` (the newest checkpoint) unless one runs or it is already witnessed by all. */
  offer(latest: StoredCheckpoint | undefined): void;
  /** Waits for the running round (the activity returns after it). */
  settle(): Promise<void>;
}

export interface WitnessRoundOptions {
  store: TlogStore;
  settings: WitnessingSettings;
  allowHosts?: readonly string[];
  /** How long after an incomplete round the builder tries again without a new batch. */
  retryMs: number;
  request?: WitnessRequest;
  onRound?: (round: Omit<WitnessingRound, 'recordedAt'>, failures: WitnessFailure[]) => void;
  onError?: (err: Error) => void;
}

export function witnessRounds(o: WitnessRoundOptions): WitnessRounds {
  let last: { treeSize: number; sizes: Record<string, number>; cosigned: number; complete: boolean; at: number } | undefined;
  let running: Promise<void> | undefined;

  const round = async (latest: StoredCheckpoint | undefined): Promise<void> => {
    if (!last) {
      const r = await o.store.latestWitnessingRound();
      last = r ? { treeSize: r.treeSize, sizes: r.witnessSizes, cosigned: r.witnessCount, complete: false, at: 0 } : { treeSize: 0, sizes: {}, cosigned: 0, complete: true, at: 0 };
    }
    const cp = latest ?? (await o.store.latestCheckpoint()) ?? undefined;
    if (!cp) return;
    const isNew = cp.treeSize > last.treeSize;
    if (!isNew && (last.complete || Date.now() < last.at + o.retryMs)) return;
    const r = await witnessCheckpoint({
      note: cp.note,
      witnesses: o.settings.witnesses,
      quorum: o.settings.quorum,
      knownSizes: last.sizes,
      previousSize: Math.min(last.treeSize, cp.treeSize),
      consistencyProof: (from, to) => consistencyProof(from, to, o.store.readTiles),
      request: o.request,
      allowHosts: o.allowHosts,
    });
    // A witness that did not answer keeps the size it had.
    const sizes = { ...last.sizes, ...r.sizes };
    const stored = { treeSize: cp.treeSize, note: r.note, witnessCount: r.cosigners.length, quorum: o.settings.quorum, quorumMet: r.quorumMet, witnessSizes: sizes };
    // A retry that changed nothing (same size, as many cosigners, same sizes) is not stored again:
    // a witness down for a day would otherwise add a row every retry.
    const changed = isNew || r.cosigners.length !== last.cosigned || JSON.stringify(sizes) !== JSON.stringify(last.sizes);
    if (changed) await o.store.recordWitnessingRound(stored);
    last = { treeSize: cp.treeSize, sizes, cosigned: r.cosigners.length, complete: r.cosigners.length === o.settings.witnesses.length, at: Date.now() };
    o.onRound?.(stored, r.failures);
  };

  return {
    offer(latest) {
      if (o.settings.witnesses.length === 0 || running) return;
      running = round(latest)
        .catch((err: Error) => {
          // The database or a proof failed: forget what we knew and read it again next time.
          last = undefined;
          o.onError?.(err);
        })
        .finally(() => {
          running = undefined;
        });
    },
    async settle() {
      await running;
    },
  };
}
