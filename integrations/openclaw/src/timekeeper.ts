/**
 * Delivery of outbox items over Timekeeper's /v1 API through the repository's typed client
 * (api/client.ts), which the build bundles into dist/ (see build.mjs): one definition of every
 * route, request and response, shared with the server.
 */
import { TimekeeperApiError, TimekeeperClient } from '../../../api/client';
import type { DeliveryOutcome } from './outbox';
import type { OutboxItem } from './mapping';

/** Codes after which retrying the same request cannot succeed. */
const FINAL = new Set(['validation_error', 'session_archived', 'idempotency_key_reused', 'event_id_conflict', 'payload_too_large', 'wrong_expected_seq']);

export function createDeliver(opts: { url: string; apiKey?: string; timeoutMs: number; fetch?: typeof fetch }) {
  const tk = new TimekeeperClient({ baseUrl: opts.url, apiKey: opts.apiKey, timeoutMs: opts.timeoutMs, fetch: opts.fetch, headers: { 'user-agent': 'openclaw-timekeeper' } });

  const create = async (body: Extract<OutboxItem, { op: 'create' }>['body']): Promise<DeliveryOutcome> => {
    try {
      await tk.createSession(body);
      return { kind: 'delivered' };
    } catch (err) {
      // Creation is not idempotent: a retry whose first attempt took effect answers 409.
      if (err instanceof TimekeeperApiError && err.errorCode === 'session_exists') return { kind: 'delivered' };
      return classify(err);
    }
  };

  return async function deliver(item: OutboxItem): Promise<DeliveryOutcome> {
    if (item.op === 'create') return create(item.body);
    let body = item.body;
    const send = async () => {
      try {
        return await (item.op === 'append' ? tk.append(item.session, body as typeof item.body) : tk.end(item.session, body));
      } catch (err) {
        // Held longer than Timekeeper's EVENT_OCCURRED_AT_MAX_PAST_S (or a clock far off): the
        // event matters more than its time, so it goes again without one (stored at its ts).
        if (!(err instanceof TimekeeperApiError && err.errorCode === 'validation_error' && body.occurred_at && err.errors.some((f) => f.field === 'occurred_at'))) throw err;
        const { occurred_at: _dropped, ...rest } = body;
        body = rest;
        return item.op === 'append' ? tk.append(item.session, body as typeof item.body) : tk.end(item.session, body);
      }
    };
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

export function classify(err: unknown): DeliveryOutcome {
  if (err instanceof TimekeeperApiError) {
    const why = `HTTP ${err.status} ${err.errorCode}: ${err.detail}`;
    return FINAL.has(err.errorCode) ? { kind: 'rejected', reason: why } : { kind: 'retry', reason: why };
  }
  const e = err as Error & { cause?: { code?: string; message?: string } };
  return { kind: 'retry', reason: e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err) };
}
