/**
 * Delivery of outbox items over Timekeeper's /v1 API through the repository's typed client
 * (sdk/client.ts), which the build bundles into dist/ (see build.mjs): one definition of every
 * route, request and response, shared with the server.
 */
import { TimekeeperApiError, TimekeeperClient } from '../../../sdk/client';
import type { DeliveryOutcome } from './outbox';
import type { OutboxItem } from './mapping';

/** Codes after which retrying the same request cannot succeed. */
const FINAL = new Set(['validation_error', 'session_archived', 'idempotency_key_reused', 'event_id_conflict', 'payload_too_large', 'wrong_expected_seq']);

export function createDeliver(opts: { url: string; apiKey?: string; timeoutMs: number; fetch?: typeof fetch }) {
  const tk = new TimekeeperClient({ baseUrl: opts.url, apiKey: opts.apiKey, timeoutMs: opts.timeoutMs, fetch: opts.fetch, headers: { 'user-agent': 'openclaw-timekeeper' } });

  const create = async (body: Extract<OutboxItem, { op: 'create' }>['body']): Promise<DeliveryOutcome> => {
    try {
      await withoutLateTime(body, (b) => tk.createSession(b));
      return { kind: 'delivered' };
    } catch (err) {
      // Creation is not idempotent: a retry whose first attempt took effect answers 409.
      if (err instanceof TimekeeperApiError && err.errorCode === 'session_exists') return { kind: 'delivered' };
      return classify(err);
    }
  };

  return async function deliver(item: OutboxItem): Promise<DeliveryOutcome> {
    if (item.op === 'create') return create(item.body);
    const send = () => withoutLateTime(item.body, (b) => (item.op === 'append' ? tk.append(item.session, b as typeof item.body) : tk.end(item.session, b)));
    try {
      await send();
      return { kind: 'delivered' };
    } catch (err) {
      // A session this plugin never saw start (installed mid-session, or a path without session_start): create it, then send again.
      if (err instanceof TimekeeperApiError && err.status === 404 && err.errorCode === 'not_found') {
        const c = await create({ session_id: item.session, metadata: { source: 'openclaw', created_by: 'first event' } });
        if (c.kind !== 'delivered') return c;
        try {
          await send();
          return { kind: 'delivered' };
        } catch (again) {
          return classify(again);
        }
      }
      return classify(err);
    }
  };
}

/**
 * Sends `body`; when Timekeeper refuses its occurred_at (held longer than
 * EVENT_OCCURRED_AT_MAX_PAST_S, or a clock far off), sends it again without one: the event
 * (or the session's start) matters more than its time, and is then stored at its ts.
 */
async function withoutLateTime<B extends { occurred_at?: string }, R>(body: B, send: (b: B) => Promise<R>): Promise<R> {
  try {
    return await send(body);
  } catch (err) {
    if (!(err instanceof TimekeeperApiError && err.errorCode === 'validation_error' && body.occurred_at && err.errors.some((f) => f.field === 'occurred_at'))) throw err;
    const { occurred_at: _dropped, ...rest } = body;
    return send(rest as B);
  }
}

export function classify(err: unknown): DeliveryOutcome {
  if (err instanceof TimekeeperApiError) {
    const why = `HTTP ${err.status} ${err.errorCode}: ${err.detail}`;
    return FINAL.has(err.errorCode) ? { kind: 'rejected', reason: why } : { kind: 'retry', reason: why };
  }
  const e = err as Error & { cause?: { code?: string; message?: string } };
  return { kind: 'retry', reason: e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err) };
}
