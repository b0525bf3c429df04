/**
 * One workflow per intent (`intent/<event_id>`): the single writer of that intent's
 * transitions, and the holder of its timers.
 *
 *   - requested / in-progress past the time-to-live → blocked, data.error "expired";
 *   - blocked with retry: true and retry_after → requested at that time (note "retry_after
 *     reached"), then one wake call to the agent (an activity, retried with backoff);
 *   - done → the workflow completes; blocked without an automatic retry → it completes after
 *     the retention period. A later PATCH starts a new run from the stored head (clients/intents.ts).
 *
 * One timer per deadline: a transition that leaves the next deadline as it was (requested →
 * in-progress keeps the time-to-live) keeps the timer that is running for it; only a new
 * deadline cancels it and starts another (patch `intent-one-timer-per-deadline`: runs that
 * began before it keep re-creating the timer on every transition, as their histories recorded).
 * Under the same patch, a timer's move refused as illegal (a run started from a head that a
 * PATCH has since moved on from) ends the run as `stale` instead of retrying it every second.
 *
 * Transitions are written one at a time through the local activity recordTransition, which
 * checks each against the stored state. Transitions of an intent with a session are then
 * appended to that session's timeline in order, by a second loop, so a slow session link
 * never delays the agent's PATCH.
 */
import {
  ActivityFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  makeContinueAsNewFunc,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { IntentActivities, TransitionOutcome } from '../../activities/intents';
import { DomainError, ErrorCode } from '../../lib/domain/errors';
import { IntentStatusKey } from '../../lib/domain/platform/search-attributes';
import {
  Actor,
  IntentStatus,
  blockedInfo,
  headOfTransition,
  isOpen,
  transitionProblem,
  transitionRequestProblem,
  type BlockedInfo,
  type IntentHead,
  type StoredTransition,
  type TransitionRequest,
} from '../../lib/domain/intents';
import { LIMITS } from '../../lib/domain/limits';
import { hasPatch } from '../platform/patches';
import { IntentState, IntentWorkflowInput, IntentWorkflowResult, createdUpdate, stateQuery, transitionUpdate } from './messages';

const ONE_TIMER_PER_DEADLINE = 'intent-one-timer-per-deadline';
/** The patches runs started by this code take without patched() (IntentSettings.patches): no marker, no TemporalChangeVersion upsert. */
export const INTENT_PATCHES = [ONE_TIMER_PER_DEADLINE];

const { recordTransition } = proxyLocalActivities<IntentActivities>({
  startToCloseTimeout: LIMITS.appendAttemptTimeoutMs,
  // A database outage stalls transitions instead of failing them, as for timelines.
  retry: { initialInterval: LIMITS.appendRetryInitialMs, backoffCoefficient: 2, maximumInterval: LIMITS.appendRetryMaxMs },
});

const { wakeAgent } = proxyActivities<IntentActivities>({
  startToCloseTimeout: LIMITS.wakeAttemptTimeoutMs + 1_000,
  retry: { initialInterval: LIMITS.wakeRetryInitialMs, backoffCoefficient: 2, maximumInterval: LIMITS.wakeRetryMaxMs, maximumAttempts: LIMITS.wakeMaxAttempts },
});

const { linkToSession } = proxyActivities<IntentActivities>({
  startToCloseTimeout: LIMITS.appendAttemptTimeoutMs * 2,
  retry: { initialInterval: LIMITS.appendRetryInitialMs, backoffCoefficient: 2, maximumInterval: LIMITS.appendRetryMaxMs, maximumAttempts: LIMITS.sessionLinkMaxAttempts },
});

export async function intentWorkflow(input: IntentWorkflowInput): Promise<IntentWorkflowResult> {
  const { settings } = input;
  const { header } = settings;
  const eventId = header.event_id;
  const info = workflowInfo();
  const run = input.carried?.run ?? 1;
  // Decided once, first thing: a run recorded without the marker keeps the old timer loop to its end.
  const oneTimerPerDeadline = hasPatch(settings.patches, ONE_TIMER_PER_DEADLINE);

  let head: IntentHead | null = input.carried?.head ?? null;
  let openedAtMs = input.carried?.openedAtMs ?? Date.now();
  let blocked: BlockedInfo | null = input.carried?.blocked ?? null;
  let blockedAtMs = input.carried?.blockedAtMs ?? 0;
  /** Bumped on every stored transition: wakes the timer loop to re-plan. */
  let version = 0;
  let transitionsThisRun = 0;
  let writing = false;
  let created: StoredTransition | null = null;
  let createFailure: DomainError | null = null;
  /** Transitions stored by this run, by id: a retried update gets its first answer, not a 409. */
  const stored = new Map<string, StoredTransition>();
  const linkQueue: StoredTransition[] = [];
  let linking = false;
  const wakes: Promise<unknown>[] = [];

  function apply(t: StoredTransition): void {
    stored.set(t.transition_id, t);
    if (head && t.seq <= head.seq) return;
    const from = head?.status ?? null;
    head = headOfTransition(t);
    version++;
    transitionsThisRun++;
    if (t.content.to === IntentStatus.Requested && (from === null || !isOpen(from))) openedAtMs = Date.now();
    if (t.content.to === IntentStatus.Blocked) {
      blocked = blockedInfo(t.content.data);
      blockedAtMs = Date.now();
    } else blocked = null;
    // Off by default (INTENT_STATUS_SEARCH_ATTRIBUTE): an event and a visibility write per transition.
    if (from !== null && settings.statusSearchAttribute !== false) upsertSearchAttributes([{ key: IntentStatusKey, value: t.content.to }]);
    if (header.session_id) linkQueue.push(t);
  }

  /** Writes one transition; one at a time, so each is checked against the head the previous one left. */
  async function write(req: TransitionRequest, actor: Actor, create: boolean): Promise<TransitionOutcome> {
    // Always awaited, even when nothing is writing: two updates started in one activation both pass it
    // before either sets `writing` (their two writes then run concurrently, as recorded histories hold),
    // and skipping it when free would serialize them and change those histories' commands.
    await condition(() => !writing);
    writing = true;
    try {
      let o: TransitionOutcome;
      try {
        o = await recordTransition({
          eventId,
          databaseInstance: settings.databaseInstance,
          workflowId: info.workflowId,
          runId: info.runId,
          create: create ? header : undefined,
          transition: req,
          actor,
          // Data only (no command depends on it; recorded histories replay unchanged): the
          // writer writes on it without its lookup, and the table refuses it if it is not the stored one.
          ...(create || !head ? {} : { head }),
        });
      } catch (err) {
        if (!(err instanceof ActivityFailure)) throw err;
        const e = DomainError.fromFailure(err.cause) ?? new DomainError(ErrorCode.WriteFailed, err.cause?.message ?? err.message);
        o = { ok: false, error: e.toDetail() };
      }
      if (o.ok) apply(o.transition);
      return o;
    } finally {
      writing = false;
    }
  }

  setHandler(
    transitionUpdate,
    async (req: TransitionRequest) => {
      const known = stored.get(req.transitionId);
      if (known) return known;
      // Only before the creating transition is stored (an update that raced the start): `condition()`
      // costs three promises, each with a captured stack, and once created it would resolve at once.
      // The handler reaches write() in the same microtask drain either way, so no command moves.
      if (head === null && createFailure === null) await condition(() => head !== null || createFailure !== null);
      if (!head) throw createFailure!.toFailure();
      const o = await write(req, Actor.Agent, false);
      if (!o.ok) throw DomainError.fromDetail(o.error).toFailure();
      return o.transition;
    },
    {
      // Synchronous: a bad or illegal request is refused before it enters history.
      validator: (req: TransitionRequest) => {
        if (stored.has(req.transitionId)) return;
        const p = transitionRequestProblem(req) ?? (head ? transitionProblem(eventId, head.status, req.to) : null);
        if (p) throw p.toFailure();
      },
    },
  );

  setHandler(createdUpdate, async () => {
    await condition(() => created !== null || createFailure !== null || (input.carried !== undefined && head !== null));
    if (createFailure) throw createFailure.toFailure();
    if (!created) throw new DomainError(ErrorCode.IntentExists, `intent ${eventId} already exists`).toFailure();
    return created;
  });

  setHandler(stateQuery, (): IntentState => ({ eventId, status: head?.status ?? null, head, run, next: plan() }));

  /** The next timer: expiry while open, the retry while blocked with one due, else closing after retention; none once done. */
  function plan(): IntentState['next'] {
    if (!head || head.status === IntentStatus.Done) return null;
    if (isOpen(head.status)) return { action: 'expire', atMs: openedAtMs + header.ttl_s * 1000 };
    if (blocked?.retry && blocked.retryAtMs !== undefined) return { action: 'retry', atMs: blocked.retryAtMs };
    return { action: 'close', atMs: blockedAtMs + settings.retentionS * 1000 };
  }

  // Appends each transition to the session's timeline, in order; a link the session refuses is skipped.
  async function linker(): Promise<void> {
    for (;;) {
      await condition(() => linkQueue.length > 0);
      linking = true;
      const t = linkQueue.shift()!;
      try {
        await linkToSession({ sessionId: header.session_id!, transition: t, action: header.action });
      } catch (err) {
        if (!(err instanceof ActivityFailure)) throw err;
      } finally {
        linking = false;
      }
    }
  }
  if (header.session_id) void linker();

  async function expire(): Promise<TransitionOutcome> {
    const status = head!.status;
    return write(
      {
        transitionId: uuid4(),
        to: IntentStatus.Blocked,
        note: `expired: still ${status} after its time-to-live of ${header.ttl_s} s`,
        data: {
          error: 'expired',
          next_step: `Nobody recorded done or blocked within ttl_s (${header.ttl_s} s). Check whether "${header.action}" was done; PATCH status requested to retry it, then done or blocked.`,
          retry: false,
          expired_status: status,
        },
      },
      Actor.System,
      false,
    );
  }

  async function reopen(): Promise<TransitionOutcome> {
    const was = blocked!;
    const o = await write(
      {
        transitionId: uuid4(),
        to: IntentStatus.Requested,
        note: 'retry_after reached',
        data: { retry_of: { error: was.error, next_step: was.next_step }, retry_after: new Date(was.retryAtMs!).toISOString() },
      },
      Actor.System,
      false,
    );
    if (!o.ok) return o;
    const text = `Timekeeper: intent ${eventId} (${header.action}) is requested again: retry_after reached. Next step: ${was.next_step}`;
    // Tracked, not awaited: a slow hook must not hold up the intent's timers.
    wakes.push(wakeAgent({ transitionId: o.transition.transition_id, text }).catch(() => undefined));
    return o;
  }

  if (!head) {
    if (!settings.create) throw new DomainError(ErrorCode.Internal, `intent ${eventId}: a run needs either the creating transition or a stored head`).toFailure();
    const o = await write(settings.create, Actor.Agent, true);
    if (!o.ok) {
      // Tell the creator why (its update carries the error), then fail this run: nothing was created.
      createFailure = DomainError.fromDetail(o.error);
      await condition(allHandlersFinished);
      throw createFailure.toFailure();
    }
    created = o.transition;
  }

  interface ArmedTimer {
    action: NonNullable<IntentState['next']>['action'];
    atMs: number;
    fired: boolean;
    scope: CancellationScope;
  }
  let armed: ArmedTimer | null = null;

  /** The timer for `next`: the one already running when it waits for the same action at the same time, else a new one (the old one cancelled). */
  function arm(next: NonNullable<IntentState['next']>): ArmedTimer {
    if (armed && armed.action === next.action && armed.atMs === next.atMs) return armed;
    armed?.scope.cancel();
    const timer: ArmedTimer = { action: next.action, atMs: next.atMs, fired: false, scope: new CancellationScope() };
    timer.scope
      .run(() => sleep(Math.max(1, next.atMs - Date.now())))
      .then(
        () => (timer.fired = true),
        () => undefined, // cancelled: a new deadline replaced it
      );
    armed = timer;
    return timer;
  }

  const rotationDue = () => transitionsThisRun >= LIMITS.intentTransitionsPerRun || workflowInfo().continueAsNewSuggested;
  const quiet = () => !writing && !linking && linkQueue.length === 0 && allHandlersFinished();
  let closed: IntentWorkflowResult['closed'] | undefined;

  for (;;) {
    const next = plan();
    if (!next) closed = 'done';
    if (!next || closed || rotationDue()) {
      // Let callers have their answers, the session its links and the agent its wakes; then stop,
      // unless a transition came in meanwhile (a PATCH reopening a blocked intent).
      const seen = version;
      await condition(quiet);
      await Promise.all(wakes.splice(0));
      if (version !== seen || !quiet()) {
        closed = undefined;
        continue;
      }
      if (closed) break;
      // The short task timeout set explicitly, so a run started before it takes it on (as sessions do).
      return makeContinueAsNewFunc<typeof intentWorkflow>({ workflowTaskTimeout: LIMITS.workflowTaskTimeoutMs })({ settings, carried: { head: head!, openedAtMs, blocked, blockedAtMs, run: run + 1 } });
    }
    const before = version;
    if (oneTimerPerDeadline) {
      const timer = arm(next);
      await condition(() => version !== before || rotationDue() || timer.fired);
      // A transition or a rotation first re-plans; the timer stays armed if the deadline did not move.
      if (version !== before || rotationDue()) continue;
      armed = null;
      if (Date.now() < next.atMs) continue;
    } else {
      const changed = await condition(() => version !== before || rotationDue(), Math.max(1, next.atMs - Date.now()));
      if (changed || Date.now() < next.atMs) continue;
    }
    if (next.action === 'close') closed = 'retention';
    else {
      const o = next.action === 'expire' ? await expire() : await reopen();
      // Refused as illegal, the timer's move shows this run's head is not the stored one (a run
      // started from a head read before a PATCH moved it): stop instead of retrying it forever;
      // the stored head is the truth, and the next PATCH or the reconcile sweep starts a run from it.
      if (oneTimerPerDeadline && !o.ok && o.error.code === ErrorCode.InvalidTransition) closed = 'stale';
    }
  }

  return { eventId, head: head!, closed: closed! };
}
