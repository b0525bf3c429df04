/** The transparency log's routes (api/tlog/contract.ts) over the log store. */
import { Router } from 'express';
import { DomainError, ErrorCode } from '../../lib/domain/errors';
import type { TlogStore } from '../../lib/store/tlog';
import { cachedReader, consistencyProof, inclusionProof, leafAt } from '../../lib/tlog/tree';
import type { KeyStore } from '../auth';
import { parse, queryObject } from '../http';
import { route } from '../router';
import { getConsistencyProof, getInclusionProof, getLogCheckpoint, getLogKey } from './contract';

export interface TlogRouteDeps {
  store: TlogStore;
  keys: KeyStore;
}

const b64 = (b: Buffer): string => b.toString('base64');

export function tlogRouter({ store, keys }: TlogRouteDeps): Router {
  const r = Router();


  route(r, keys, getLogKey, async (_req, res) => {
    const key = await store.verifierKey();
    if (!key) throw DomainError.field(ErrorCode.Unavailable, 'key', 'not yet recorded').withMessage('the log has no signing key yet: its builder has not run; retry shortly');
    res.type('text/plain').send(key);
  });

  route(r, keys, getLogCheckpoint, async (req, res) => {
    const q = parse(getLogCheckpoint.query, queryObject(req));
    const c = q.witnessed === 'true' ? await store.latestWitnessedCheckpoint() : await store.latestServedCheckpoint();
    if (!c) {
      if (q.witnessed === 'true') throw DomainError.field(ErrorCode.NotFound, 'witnessed', 'none yet').withMessage('no checkpoint has met the witness quorum yet (LOG_WITNESSES, LOG_WITNESS_QUORUM)');
      throw DomainError.field(ErrorCode.NotFound, 'checkpoint', 'none yet').withMessage('the log has no checkpoint yet: nothing has been logged');
    }
    res.set('X-Log-Witnessed', String(c.quorumMet)).set('X-Log-Cosignatures', String(c.witnessCount)).type('text/plain').send(c.note);
  });

  route(r, keys, getInclusionProof, async (req, res) => {
    const q = parse(getInclusionProof.query, queryObject(req));
    if (q.tree_size < 1) throw DomainError.validation('tree_size', 'must be at least 1');
    if (q.leaf_index >= q.tree_size) throw DomainError.validation('leaf_index', `must be less than tree_size (${q.tree_size})`);
    // A proof is only given against a tree the log has published.
    const size = await store.publishedSize(q.tree_size);
    if (q.tree_size > size) throw DomainError.validation('tree_size', `must be at most the latest checkpoint's size (${size})`);
    // One read of the tiles: the leaf's own tile is among the proof's.
    const read = cachedReader(store.readTiles);
    const proof = await inclusionProof(q.leaf_index, q.tree_size, read);
    const leaf = await leafAt(q.leaf_index, read);
    res.json({ leaf_index: q.leaf_index, tree_size: q.tree_size, leaf_hash: b64(leaf), hashes: proof.map(b64) });
  });

  route(r, keys, getConsistencyProof, async (req, res) => {
    const q = parse(getConsistencyProof.query, queryObject(req));
    if (q.from > q.to) throw DomainError.validation('from', `must be at most to (${q.to})`);
    const size = await store.publishedSize(q.to);
    if (q.to > size) throw DomainError.validation('to', `must be at most the latest checkpoint's size (${size})`);
    res.json({ from: q.from, to: q.to, hashes: (await consistencyProof(q.from, q.to, store.readTiles)).map(b64) });
  });

  return r;
}
