/**
 * Typed helpers for agents over the OML-compatible routes, with plain fetch (types from the
 * route contracts): intents.create/transition/pending/get, `withIntent` (OML's try/finally
 * pattern: record requested, run the work, record done with its result, or blocked with
 * error and next_step when it throws, then rethrow), and `recover` (the start-up step: fetch
 * pending and resume, expire or skip each). Written beside api/client.ts, which is being
 * written on main; it can become that client's `intents` part.
 */
import type { z } from 'zod';
import type { JsonObject } from '../../lib/domain/intents';
import { createIntent, getIntent, Intent, listIntents, pendingIntents, transitionIntent } from './contract';

export type CreateIntentBody = z.input<typeof createIntent.body>;
export type TransitionBody = z.input<typeof transitionIntent.body>;
export type PendingQuery = { older_than?: number; domain?: string; limit?: number };
export type IntentView = z.output<typeof Intent>;
export type IntentDetailView = z.output<(typeof getIntent.responses)[200]>;
export type TransitionView = z.output<(typeof transitionIntent.responses)[200]>;

export class IntentApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: { type?: string; detail?: string; [k: string]: unknown },
  ) {
    super(`${status} ${body.detail ?? JSON.stringify(body)}`);
    this.name = 'IntentApiError';
  }
}

export interface IntentsClientOptions {
  baseUrl: string;
  apiKey?: string;
  fetch?: typeof fetch;
}

const path = (p: string, params: Record<string, string>) => p.replace(/:([A-Za-z_]+)/g, (_, k: string) => encodeURIComponent(params[k]));

export function intentsClient(opts: IntentsClientOptions) {
  const f = opts.fetch ?? fetch;
  async function req<T>(method: string, p: string, body?: unknown, query?: Record<string, string | number | undefined>): Promise<T> {
    const qs = query ? new URLSearchParams(Object.entries(query).filter((e): e is [string, string | number] => e[1] !== undefined).map(([k, v]): [string, string] => [k, String(v)])).toString() : '';
    const res = await f(opts.baseUrl.replace(/\/+$/, '') + p + (qs ? `?${qs}` : ''), {
      method,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const parsed = (await res.json().catch(() => ({}))) as T;
    if (!res.ok) throw new IntentApiError(res.status, parsed as IntentApiError['body']);
    return parsed;
  }

  const intents = {
    create: (b: CreateIntentBody) => req<IntentView>('POST', createIntent.path, b),
    transition: (eventId: string, b: TransitionBody) => req<TransitionView>('PATCH', path(transitionIntent.path, { eventId }), b),
    pending: (q: PendingQuery = {}) => req<IntentView[]>('GET', pendingIntents.path, undefined, q),
    get: (eventId: string) => req<IntentDetailView>('GET', path(getIntent.path, { eventId }), undefined),
    list: (q: { domain?: string; status?: string; tags?: string; search?: string; limit?: number; offset?: number } = {}) =>
      req<z.output<(typeof listIntents.responses)[200]>>('GET', listIntents.path, undefined, q),

    /**
     * Runs `work` as one intent: requested before, done with its result after, or blocked with
     * `error` and `next_step` when it throws (the error is rethrown).
     */
    async withIntent<T extends JsonObject | void>(intent: CreateIntentBody, work: () => Promise<T>, onError: { nextStep?: (err: unknown) => string } = {}): Promise<T> {
      await intents.create({ ...intent, status: 'requested' });
      let result: T;
      try {
        result = await work();
      } catch (err) {
        await intents.transition(intent.event_id, {
          status: 'blocked',
          note: 'failed',
          data: { error: err instanceof Error ? err.message || err.name : String(err), next_step: onError.nextStep?.(err) ?? 'Check the logs, then retry or give up.' },
        });
        throw err;
      }
      await intents.transition(intent.event_id, { status: 'done', note: 'success', data: (result ?? {}) as JsonObject });
      return result;
    },

    /**
     * The start-up step: every pending intent is expired (blocked, error "expired") when older
     * than `expireOlderThanS`, skipped when another intent with its dedupe_key is already done,
     * and otherwise handed to `resume`.
     */
    async recover(policy: { expireOlderThanS?: number; resume: (i: IntentView) => Promise<void>; domain?: string }) {
      const report = { resumed: [] as string[], expired: [] as string[], skipped: [] as string[] };
      const now = Date.now();
      for (const i of await intents.pending({ domain: policy.domain })) {
        if (policy.expireOlderThanS !== undefined && now - i.created_ts >= policy.expireOlderThanS * 1000) {
          await intents.transition(i.event_id, {
            status: 'blocked',
            note: 'expired at recovery',
            data: { error: 'expired', next_step: `Older than ${policy.expireOlderThanS} s at recovery; redo it only if still wanted.` },
          });
          report.expired.push(i.event_id);
          continue;
        }
        if (i.dedupe_key && (await doneWithKey(i))) {
          report.skipped.push(i.event_id);
          continue;
        }
        await policy.resume(i);
        report.resumed.push(i.event_id);
      }
      return report;
    },
  };

  async function doneWithKey(i: IntentView): Promise<boolean> {
    for (let offset = 0; ; offset += 1000) {
      const page = await intents.list({ domain: i.domain, status: 'done', limit: 1000, offset });
      if (page.events.some((e) => e.dedupe_key === i.dedupe_key && e.event_id !== i.event_id)) return true;
      if (offset + page.events.length >= page.total) return false;
    }
  }

  return intents;
}
