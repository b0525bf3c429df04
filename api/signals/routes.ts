/** POST /v1/signals: store the signal (idempotent by signal_id), then deliver it to the tasks listening to its name. */
import { randomUUID } from 'node:crypto';
import { Router } from 'express';
import type { SignalClient } from '../../clients/signals';
import { DomainError, ErrorCode } from '../../lib/domain/errors';
import type { SignalEvent } from '../../lib/domain/signals';
import type { SignalStore } from '../../lib/store/signals';
import { principalOf, type KeyStore } from '../auth';
import type { AgentBounds } from '../../lib/domain/agent-bounds';
import { jsonBody, parse } from '../http';
import { route } from '../router';
import { sendSignal } from './contract';

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
    // A bound key's signal reaches only its agents' tasks, now and when a scheduler catches up on stored signals.
    const { bounds } = principalOf(res);
    const { signal, existed } = await store.insert(sent, 'api', bounds);
    // A retry carries the same content (and sender bounds); the same id with other content is a different signal.
    const same = sameBounds(signal.bounds, bounds) && signal.name === sent.name && JSON.stringify(signal.value) === JSON.stringify(sent.value) && sameRecord(signal.values, sent.values) && (!b.at || signal.atMs === sent.atMs);
    if (existed && (!same || signal.source !== 'api')) {
      throw DomainError.field(ErrorCode.IdempotencyKeyReused, 'signal_id', 'was used for a different signal').withMessage(`signal_id ${sent.signal_id} is already stored with other content; nothing was stored`);
    }
    const event: SignalEvent = { signal_id: signal.signal_id, name: signal.name, value: signal.value, values: signal.values, atMs: signal.atMs };
    const reached = await signals.deliver(event, await store.listeners(signal.name, signal.bounds));
    res.status(202).json({ signal_id: signal.signal_id, seq: signal.seq, name: signal.name, at: new Date(signal.atMs).toISOString(), deduplicated: existed, delivered_to: reached });
  });

  return r;
}

function sameBounds(a: AgentBounds | undefined, b: AgentBounds | undefined): boolean {
  return JSON.stringify(a && [a.exact, a.prefixes]) === JSON.stringify(b && [b.exact, b.prefixes]);
}

function sameRecord(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && JSON.stringify(a[k]) === JSON.stringify(b[k]));
}
