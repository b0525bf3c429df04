/**
 * OML's two agent patterns over the typed client's intent routes (`tk.intents`, sdk/client.ts):
 *
 * - `withIntent(tk, intent, work)`: OML's try/finally. Record the intent as requested, run the
 *   work, then record done with its result, or blocked with `error` and `next_step` when it
 *   throws (the work's error is rethrown).
 * - `recover(tk, policy)`: the start-up step. Fetch what is pending and expire, skip or resume
 *   each intent.
 *
 * Both take a TimekeeperClient, so requests, authentication, refusals (TimekeeperApiError)
 * and response checking are the client's; nothing here talks HTTP itself. Like the client,
 * this runs anywhere `fetch` does: its imports are types only.
 */
import type { z } from 'zod';
import type { CallOptions, ResponseBody, TimekeeperClient } from '../client';
import type { JsonObject } from '../../lib/domain/intents';
import type { createIntent } from '../../api/intents/contract';

/** What `tk.intents.create` takes (the body of POST /api/events). */
export type CreateIntentBody = z.input<typeof createIntent.body>;
/** An intent as the list and pending routes answer it. */
export type IntentView = ResponseBody<'pendingIntents'>[number];

export interface WithIntentOptions extends CallOptions {
  /** The `next_step` recorded when the work throws; default: check the logs, then retry or give up. */
  nextStep?: (err: unknown) => string;
}

/**
 * Runs `work` as one intent: requested before, done with its result after (an object, or
 * `{}` when it returns nothing), or blocked with `error` (the error's message) and
 * `next_step` when it throws; the error is rethrown. `status` in `intent` is ignored: the
 * intent is always created as requested.
 */
export async function withIntent<T extends JsonObject | void>(
  tk: TimekeeperClient,
  intent: CreateIntentBody,
  work: () => Promise<T>,
  opts: WithIntentOptions = {},
): Promise<T> {
  const { nextStep, ...call } = opts;
  await tk.intents.create({ ...intent, status: 'requested' }, call);
  let result: T;
  try {
    result = await work();
  } catch (err) {
    await tk.intents.transition(
      intent.event_id,
      {
        status: 'blocked',
        note: 'failed',
        data: { error: err instanceof Error ? err.message || err.name : String(err), next_step: nextStep?.(err) ?? 'Check the logs, then retry or give up.' },
      },
      call,
    );
    throw err;
  }
  await tk.intents.transition(intent.event_id, { status: 'done', note: 'success', data: (result ?? {}) as JsonObject }, call);
  return result;
}

export interface RecoveryPolicy extends CallOptions {
  /** Called for each pending intent that is neither expired nor already done under its dedupe key. */
  resume: (intent: IntentView) => Promise<void>;
  /**
   * Expire (blocked, error "expired") every pending intent created at least this many whole
   * seconds ago, by the database clock (the pending route's `older_than`), not the agent's.
   */
  expireOlderThanS?: number;
  /** Only this domain's intents. */
  domain?: string;
}

export interface RecoveryReport {
  resumed: string[];
  expired: string[];
  skipped: string[];
}

/**
 * The start-up step, over the pending intents oldest first: each is expired when older than
 * `expireOlderThanS`, skipped when another intent with its dedupe_key is already done (the
 * work happened), and otherwise handed to `resume`. Returns the event ids of each kind.
 */
export async function recover(tk: TimekeeperClient, policy: RecoveryPolicy): Promise<RecoveryReport> {
  const { resume, expireOlderThanS, domain, ...call } = policy;
  const report: RecoveryReport = { resumed: [], expired: [], skipped: [] };
  const old =
    expireOlderThanS === undefined ? new Set<string>() : new Set((await tk.intents.pending({ domain, older_than: expireOlderThanS }, call)).map((i) => i.event_id));
  for (const i of await tk.intents.pending({ domain }, call)) {
    if (old.has(i.event_id)) {
      await tk.intents.transition(
        i.event_id,
        { status: 'blocked', note: 'expired at recovery', data: { error: 'expired', next_step: `Older than ${expireOlderThanS} s at recovery; redo it only if still wanted.` } },
        call,
      );
      report.expired.push(i.event_id);
      continue;
    }
    if (i.dedupe_key && (await doneWithKey(tk, i, call))) {
      report.skipped.push(i.event_id);
      continue;
    }
    await resume(i);
    report.resumed.push(i.event_id);
  }
  return report;
}

/** Whether another intent of the same domain holding `i`'s dedupe key is done. */
async function doneWithKey(tk: TimekeeperClient, i: IntentView, call: CallOptions): Promise<boolean> {
  const limit = 1000;
  for (let offset = 0; ; offset += limit) {
    const page = await tk.intents.list({ domain: i.domain, status: 'done', limit, offset }, call);
    if (page.events.some((e) => e.dedupe_key === i.dedupe_key && e.event_id !== i.event_id)) return true;
    if (page.events.length === 0 || offset + page.events.length >= page.total) return false;
  }
}
