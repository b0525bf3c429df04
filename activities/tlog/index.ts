/**
 * The log builder's work (workflows/tlog/builder.ts): batch after batch, new chained records
 * become leaves and every batch a signed checkpoint (lib/store/tlog.ts), for up to
 * LIMITS.tlogActivityRunMs, then back to the workflow. It runs in a regular activity that
 * heartbeats, so a worker crash hands it to another worker after the heartbeat timeout; the
 * state is all in the database (the last checkpoint's cursor), so a retried run just continues.
 * With LOG_WITNESSES configured, each new checkpoint also goes to the witnesses, beside the
 * batches (lib/tlog/witness-rounds.ts), never holding them up.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Pool } from 'pg';
import { LogFailure } from '../../lib/domain/errors';
import { LIMITS } from '../../lib/domain/limits';
import { logFor } from '../../lib/log';
import { databaseInstanceReader } from '../../lib/store/instance';
import { TlogStore, type CheckpointSigner } from '../../lib/store/tlog';
import { witnessRounds } from '../../lib/tlog/witness-rounds';
import type { WitnessingSettings } from '../../lib/tlog/witnessing';

export interface BuildLogInput {
  /** The event database the builder's workflow belongs to (its id says so too). */
  instanceId: string;
}

export interface BuildLogResult {
  batches: number;
  added: number;
  treeSize: number;
}

export interface TlogDeps {
  pool: Pool;
  /** The origin and signer, made once per process when first needed (they need the instance id). */
  log?: (instanceId: string) => { origin: string; signer: CheckpointSigner };
  /** How long the builder waits after a batch that found nothing new (LOG_BATCH_INTERVAL_MS). */
  intervalMs?: number;
  /** LOG_TILE_CACHE_BYTES, for the witnesses' consistency proofs (default 64 MiB). */
  tileCacheBytes?: number;
  /** LOG_WITNESSES / LOG_WITNESS_QUORUM; default none: checkpoints are published log-signed only. */
  witnessing?: WitnessingSettings;
  /** OUTBOUND_ALLOW_HOSTS, for redirects of witness requests (a witness's own host is allowed). */
  outboundAllowHosts?: readonly string[];
}

export function createTlogActivities(deps: TlogDeps) {
  const store = new TlogStore(deps.pool, { tileCacheBytes: deps.tileCacheBytes });
  const instance = databaseInstanceReader(deps.pool);
  let identity: { origin: string; signer: CheckpointSigner } | undefined;
  let keyRecorded = false;
  const log = logFor(undefined, { component: 'tlog' });
  let lastFailing = '';
  // One per process: what the last round left (sizes, retry time) carries over from run to run.
  const witnessing = witnessRounds({
    store,
    settings: deps.witnessing ?? { witnesses: [], quorum: 0 },
    allowHosts: deps.outboundAllowHosts,
    retryMs: Math.max(5_000, 5 * (deps.intervalMs ?? 1000)),
    onRound: (r, failures) => {
      // Warn when the set of failing witnesses changes, not on every retry of a witness that stays down.
      const failing = failures.map((f) => f.witness).join(',');
      const level = failing === lastFailing ? 'debug' : failing ? 'warn' : 'info';
      lastFailing = failing;
      log[level](
        { tree_size: r.treeSize, cosigned: r.witnessCount, quorum_met: r.quorumMet, failures },
        failures.length ? 'checkpoint witnessing incomplete; retrying with the next batch' : 'checkpoint cosigned',
      );
    },
    onError: (err) => log.warn({ err: err.message }, 'checkpoint witnessing failed; retrying with the next batch'),
  });
  return {
    async buildLog(input: BuildLogInput): Promise<BuildLogResult> {
      const mine = await instance();
      if (mine !== input.instanceId) {
        // A worker of another event database took this task from a shared queue: let the right one have it.
        throw ApplicationFailure.retryable(`this worker writes to event database ${mine}, the log builder belongs to ${input.instanceId}`, LogFailure.WrongDatabase);
      }
      // Retryable: a worker with the log's key (every worker bin/run.ts starts) takes it on the next attempt.
      if (!deps.log) throw ApplicationFailure.retryable('this worker runs without the log builder (no signing key configured)', 'unavailable');
      identity ??= deps.log(mine);
      if (!keyRecorded) {
        await store.recordKey(identity.signer.verifierKey);
        keyRecorded = true;
      }
      const ctx = Context.current();
      const until = Date.now() + LIMITS.tlogActivityRunMs;
      const out: BuildLogResult = { batches: 0, added: 0, treeSize: 0 };
      while (Date.now() < until && !ctx.cancellationSignal.aborted) {
        const r = await store.extendBatch(identity.origin, identity.signer, LIMITS.tlogBatchMax);
        ctx.heartbeat({ treeSize: r.treeSize });
        out.treeSize = r.treeSize;
        if (r.added > 0) {
          out.batches++;
          out.added += r.added;
          log.debug({ tree_size: r.treeSize, added: r.added }, 'checkpoint published');
        }
        witnessing.offer(r.checkpoint);
        if (!r.more) await ctx.sleep(deps.intervalMs ?? 1000).catch(() => undefined);
      }
      await witnessing.settle();
      return out;
    },
  };
}

export type TlogActivities = ReturnType<typeof createTlogActivities>;
