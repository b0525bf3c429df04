/**
 * POST /v1/signals: store the signal (idempotent by signal_id), then deliver it to the tasks
 * listening to its name. GET /v1/signals(/:id): the stored ones, newest first, as far as the
 * key's agent bounds let it see them (lib/store/signals.ts visibleTo).
 */
import { randomUUID } from 'node:crypto';
import { Router } from 'express';
import type { SignalClient } from '../../clients/signals';
import { LIMITS } from '../../lib/domain/limits';
import { SIGNAL_ID_RE, signalErrors, type SignalEvent } from '../../lib/domain/signals';
import { encodeKeyset, parseCursor } from '../../lib/platform/keyset';
import type { SignalStore, StoredSignal } from '../../lib/store/signals';
import { principalOf, type KeyStore } from '../auth';
import { boundsEntries } from '../../lib/domain/agent-bounds';
import { jsonBody, parse, queryObject } from '../http';
import { route } from '../router';
import { getSignal, listSignals, sendSignal } from './contract';

export interface SignalDeps {
  signals: SignalClient;
  store: SignalStore;
  keys: KeyStore;
}

export function signalRouter({ signals, store, keys }: SignalDeps): Router {
  const r = Router();

  route(r, keys, sendSignal, async (req, res) => {
    const b = parse(sendSignal.body, jsonBody(req));
    const sent: SignalEvent = { signal_id: b.signal_id ?? `sig-${randomUUID()}`, name: b.name, value: b.value ?? null, values: b.values ?? {}, atMs: b.at ? Date.parse(b.at) : Date.now() };
    const { signal, existed, deliveredTo: reached } = await signals.send(sent, principalOf(res).bounds, Boolean(b.at));
    res.status(202).json({ signal_id: signal.signal_id, seq: signal.seq, name: signal.name, at: new Date(signal.atMs).toISOString(), deduplicated: existed, delivered_to: reached });
  });

  route(r, keys, listSignals, async (req, res) => {
    const q = parse(listSignals.query, queryObject(req));
    const limit = q.limit ?? LIMITS.pageDefault;
    const rows = await store.list({ name: q.name, source: q.source, bounds: principalOf(res).bounds, beforeSeq: q.cursor === undefined ? undefined : signalCursor(q.cursor), limit: limit + 1 });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    res.json({ signals: page.map(describe), next_cursor: rows.length > limit ? encodeKeyset({ time: last.seq, id: last.signal_id, order: 'newest' }) : null });
  });

  route(r, keys, getSignal, async (req, res) => {
    const id = parse(getSignal.params.shape.id, req.params.id, 'signal_id');
    // Outside the key's bounds answers as an unknown id does: its existence is not revealed.
    const signal = await store.getVisible(id, principalOf(res).bounds);
    if (!signal) throw signalErrors.notFound(id);
    res.json(describe(signal));
  });

  return r;
}

/** A signal list cursor: the last row's seq (the list's key) and signal id, newest first; the seq is what pages. */
function signalCursor(c: string): number {
  return parseCursor(c, ['newest'], (id) => SIGNAL_ID_RE.test(id)).time;
}

function describe(s: StoredSignal) {
  return {
    signal_id: s.signal_id,
    seq: s.seq,
    name: s.name,
    value: s.value,
    values: s.values,
    at: new Date(s.atMs).toISOString(),
    recorded_at: s.recorded_at.toISOString(),
    source: s.source,
    agents: s.bounds ? boundsEntries(s.bounds) : null,
  };
}
