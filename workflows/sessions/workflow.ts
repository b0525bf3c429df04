/**
 * One long-lived workflow per agent session: the single writer of that session's chain.
 *
 * Appends arrive as Workflow Updates. Handlers only queue them; one loop takes everything
 * queued, writes it in one local-activity transaction and hands each caller its stored
 * event. Many concurrent writers therefore produce one linear chain, and a burst costs one
 * database round trip instead of one per event.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  patched,
  makeContinueAsNewFunc,
  proxyLocalActivities,
  setHandler,
  sleep,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { AppendEventsInput, AppendOutcome, SessionActivities } from '../../activities/sessions';
import type { JsonValue } from '../../lib/domain/canonical-json';
import { DomainError, ErrorCode, ErrorDetail } from '../../lib/domain/errors';
import { LIMITS } from '../../lib/domain/limits';
import {
  AppendReceipt,
  AppendRequest,
  ChainHead,
  EventHeader,
  EventType,
  StoredEvent,
  appendRequestProblem,
  endReasonOf,
  headOf,
  sessionErrors,
  utf8Length,
} from '../../lib/domain/sessions';
import { takeBatch } from './batching';
import {
  EndRequest,
  SessionState,
  SessionStatus,
  SessionWorkflowInput,
  SessionWorkflowResult,
  appendUpdate,
  createdUpdate,
  endUpdate,
  stateQuery,
} from './messages';

const { appendEvents } = proxyLocalActivities<SessionActivities>({
  startToCloseTimeout: LIMITS.appendAttemptTimeoutMs,
  // A database outage stalls appends instead of failing them; callers time out and retry
  // with the same idempotency key, which the activity deduplicates.
  retry: { initialInterval: LIMITS.appendRetryInitialMs, backoffCoefficient: 2, maximumInterval: LIMITS.appendRetryMaxMs },
});

interface Pending {
  item: AppendRequest;
  /** Content size, to keep one batch well under Temporal's 2 MB payload limit. */
  bytes: number;
  outcome?: AppendOutcome;
  /** Answers the update handler waiting for this item (absent for the workflow's own writes). */
  settle?: (o: AppendOutcome) => void;
}

/** Histories recorded before the error catalogue hold failures as `{errorType, message}`. */
const LEGACY_ERROR_TYPES: Record<string, ErrorCode> = {
  SessionArchived: ErrorCode.SessionArchived,
  SessionExists: ErrorCode.SessionExists,
  EventIdConflict: ErrorCode.EventIdConflict,
  IdempotencyKeyReused: ErrorCode.IdempotencyKeyReused,
};

function errorOf(o: Extract<AppendOutcome, { ok: false }>): ErrorDetail {
  if (o.error) return o.error;
  const legacy = o as unknown as { errorType?: string; message?: string };
  return { code: LEGACY_ERROR_TYPES[legacy.errorType ?? ''] ?? ErrorCode.WriteFailed, message: legacy.message ?? 'write failed' };
}

export async function sessionWorkflow(input: SessionWorkflowInput): Promise<SessionWorkflowResult> {
  const { settings } = input;
  const carried = input.carried;
  const info = workflowInfo();

  let head: ChainHead | null = carried?.head ?? null;
  let createEvent: StoredEvent | null = carried?.createEvent ?? null;
  let status: SessionStatus = SessionStatus.Open;
  let endEvent: EventHeader | null = null;
  let endReason = '';
  let appendsThisRun = 0;
  let lastActivityMs = carried?.lastActivityMs ?? Date.now();
  const queue: Pending[] = [];

  function rejectIfClosed(): void {
    if (status !== SessionStatus.Open) throw sessionErrors.archived(settings.sessionId).toFailure();
  }

  function refuse(problem: DomainError | null): void {
    if (problem) throw problem.toFailure();
  }

  /**
   * Queues an append for the write loop; the promise settles when its batch is written. A plain
   * promise rather than `await condition(...)`: the SDK records a stack trace for every promise a
   * workflow creates (its stack-trace query), so the hot path creates as few as it can.
   */
  function enqueue(item: AppendRequest): Promise<AppendReceipt> {
    return new Promise<AppendReceipt>((resolve, reject) => {
      // Native JSON.stringify: the batch bound needs a size, not the canonical form (the validator checked that).
      queue.push({
        item,
        bytes: utf8Length(JSON.stringify(item.content)),
        settle: (o) => (o.ok ? resolve(o.result) : reject(DomainError.fromDetail(errorOf(o)).toFailure())),
      });
      appendsThisRun++;
      lastActivityMs = Date.now();
    });
  }

  setHandler(
    appendUpdate,
    async (req: AppendRequest) => {
      // Re-checked here: an earlier update in the same activation may have ended the session.
      rejectIfClosed();
      if (req.type === EventType.SessionEnd) {
        status = SessionStatus.Ending;
        endReason = endReasonOf(req.content);
      }
      return enqueue({
        eventId: req.eventId,
        type: req.type,
        content: req.content,
        idempotencyKey: req.idempotencyKey,
        clientEventId: req.clientEventId,
        expectedSeq: req.expectedSeq,
        // Data for the writer only: no command depends on it, so histories from before it replay unchanged.
        ...(req.occurredAt !== undefined ? { occurredAt: req.occurredAt } : {}),
        // Only handed on to the writer's log lines: no command depends on it (replay-safe).
        ...(req.requestId ? { requestId: req.requestId } : {}),
      });
    },
    {
      // Synchronous, so a bad request is refused before it enters history or the database.
      validator: (req: AppendRequest) => {
        rejectIfClosed();
        refuse(appendRequestProblem(req, settings.maxContentBytes));
      },
    },
  );

  setHandler(
    endUpdate,
    async (req: EndRequest) => {
      rejectIfClosed();
      status = SessionStatus.Ending;
      endReason = req.reason;
      return enqueue({
        eventId: req.eventId,
        type: EventType.SessionEnd,
        content: req.content ?? { reason: req.reason },
        idempotencyKey: req.idempotencyKey,
        expectedSeq: req.expectedSeq,
        ...(req.occurredAt !== undefined ? { occurredAt: req.occurredAt } : {}),
      });
    },
    {
      validator: (req: EndRequest) => {
        rejectIfClosed();
        refuse(
          appendRequestProblem(
            { eventId: req.eventId, type: EventType.SessionEnd, content: req.content ?? null, idempotencyKey: req.idempotencyKey, expectedSeq: req.expectedSeq, occurredAt: req.occurredAt },
            settings.maxContentBytes,
          ),
        );
      },
    },
  );

  let createFailure: DomainError | null = null;
  setHandler(createdUpdate, async () => {
    await condition(() => createEvent !== null || createFailure !== null);
    if (createFailure) throw createFailure.toFailure();
    return createEvent!;
  });

  setHandler(stateQuery, (): SessionState => ({
    sessionId: settings.sessionId,
    status,
    head,
    run: carried?.run ?? 1,
    appendsThisRun,
    appendsTotal: (carried?.appendsBefore ?? 0) + appendsThisRun,
    queued: queue.length,
  }));

  async function writeBatch(batch: Pending[], create: boolean): Promise<void> {
    let outcomes: AppendOutcome[];
    try {
      outcomes = await appendEvents(writeInput(batch, create));
    } catch (err) {
      // A write no retry can fix fails this batch's callers; the session stays open. A local
      // activity's own failure arrives bare (only its timeouts and cancellations come wrapped
      // in an ActivityFailure).
      const failure = err instanceof ActivityFailure ? (err.cause ?? err) : err instanceof ApplicationFailure ? err : undefined;
      if (!failure) throw err;
      const error = (DomainError.fromFailure(failure) ?? new DomainError(ErrorCode.WriteFailed, failure.message)).toDetail();
      outcomes = batch.map(() => ({ ok: false as const, error }));
    }
    deliver(batch, outcomes);
  }

  function writeInput(batch: Pending[], create: boolean): AppendEventsInput {
    return {
      sessionId: settings.sessionId,
      databaseInstance: settings.databaseInstance,
      workflowId: info.workflowId,
      runId: info.runId,
      create: create
        ? {
            timelineId: settings.timelineId,
            agentId: settings.agentId,
            channel: settings.channel,
            metadata: settings.metadata,
            idleTimeoutS: settings.idleTimeoutS,
          }
        : undefined,
      // Data for the writer only (it writes on this head without looking it up; the table
      // refuses a wrong one): no command depends on it, so histories from before it replay unchanged.
      ...(head && !create ? { head } : {}),
      items: batch.map((p) => p.item),
    };
  }

  function deliver(batch: Pending[], outcomes: AppendOutcome[]): void {
    batch.forEach((p, i) => {
      const o = outcomes[i];
      p.outcome = o;
      p.settle?.(o);
      if (!o.ok) {
        // An end that was not stored leaves the session open, or it would refuse everything forever.
        if (p.item.type === EventType.SessionEnd && errorOf(o).code !== ErrorCode.SessionArchived && !endEvent) {
          status = SessionStatus.Open;
          lastActivityMs = Date.now(); // an idle end that failed waits a full idle period before trying again
        }
        return;
      }
      const e = o.result.event;
      if (!head || e.seq > head.seq) head = headOf(e);
      if (e.event_type === EventType.SessionEnd) endEvent = e;
    });
  }

  if (!createEvent) {
    const content = createContent(input);
    // occurred_at only when the creator gave one: the activity's input, not a command, so older histories replay unchanged.
    const first: Pending = { item: { eventId: settings.createEventId, type: EventType.SessionCreate, content, ...(settings.createOccurredAt !== undefined ? { occurredAt: settings.createOccurredAt } : {}) }, bytes: 0 };
    await writeBatch([first], true);
    const o = first.outcome!;
    if (!o.ok) {
      // Tell the creator why (its update carries the error), then fail this run: nothing was created.
      createFailure = DomainError.fromDetail(errorOf(o));
      await condition(allHandlersFinished);
      throw createFailure.toFailure();
    }
    createEvent = { ...o.result.event, content };
  }

  const idleMs = settings.idleTimeoutS ? settings.idleTimeoutS * 1000 : undefined;
  const rotationDue = () => appendsThisRun >= settings.updatesPerRun || workflowInfo().continueAsNewSuggested;

  // Decided once per run, and only for sessions with an idle timeout (a run without one writes no
  // marker): one idle timer per idle period instead of one per loop turn. Before the patch every
  // append cancelled the running timer and started a new one (TIMER_CANCELED + TIMER_STARTED, two
  // commands and the condition's sleep, race and scope per append); runs recorded without the
  // marker keep that path to their end.
  const idlePerPeriod = idleMs !== undefined && patched('session-idle-timer-per-period');
  /** The idle timer running under the patch: due at `atMs`; when it fires, the loop checks whether the session really was idle since. */
  interface IdleTimer {
    atMs: number;
    fired: boolean;
  }
  // Widened by hand: assigned inside armIdle, which TypeScript's narrowing of the loop does not see.
  let idleTimer = null as IdleTimer | null;
  function armIdle(): IdleTimer {
    if (idleTimer && !idleTimer.fired) return idleTimer;
    const timer: IdleTimer = { atMs: lastActivityMs + idleMs!, fired: false };
    sleep(Math.max(1, timer.atMs - Date.now())).then(
      () => (timer.fired = true),
      () => undefined, // the workflow was cancelled: the loop's condition fails with it
    );
    idleTimer = timer;
    return timer;
  }

  for (;;) {
    const wait = () => queue.length > 0 || (rotationDue() && allHandlersFinished());
    let woke: boolean;
    if (idleMs === undefined) {
      // No timer to (re)start, so a loop that finds work queued goes straight on without creating
      // the condition's promises.
      woke = wait() || (await condition(wait), true);
    } else if (idlePerPeriod) {
      if (!wait()) {
        const timer = armIdle();
        await condition(() => wait() || timer.fired);
      }
      // A fired timer is spent; the next turn that waits arms one for the last activity's deadline.
      const fired = idleTimer?.fired === true;
      if (fired) idleTimer = null;
      woke = !fired;
    } else {
      // The timer's seq numbering must stay as recorded histories have it.
      woke = await condition(wait, Math.max(1, lastActivityMs + idleMs - Date.now()));
    }
    if (!woke && idleMs !== undefined && Date.now() - lastActivityMs >= idleMs && status === SessionStatus.Open) {
      status = SessionStatus.Ending;
      endReason = 'idle';
      // uuid4() here is seeded by the workflow, so replays and activity retries see the same id.
      queue.push({ item: { eventId: uuid4(), type: EventType.SessionEnd, content: { reason: 'idle', idle_timeout_s: settings.idleTimeoutS! } }, bytes: 0 });
    }
    if (queue.length > 0) {
      await writeBatch(takeBatch(queue), false);
      if (endEvent && queue.length === 0) break;
      continue;
    }
    if (endEvent) break;
    if (rotationDue() && allHandlersFinished()) {
      // The short task timeout set explicitly (the server would carry this run's over): a run
      // started before it existed takes it on at its next rotation.
      return makeContinueAsNewFunc<typeof sessionWorkflow>({ workflowTaskTimeout: LIMITS.workflowTaskTimeoutMs })({
        settings,
        carried: {
          head: head!,
          createEvent: createEvent!,
          lastActivityMs,
          run: (carried?.run ?? 1) + 1,
          appendsBefore: (carried?.appendsBefore ?? 0) + appendsThisRun,
        },
      });
    }
  }

  // Let every caller receive its answer before the workflow closes.
  status = SessionStatus.Archived;
  await condition(allHandlersFinished);
  const end = endEvent as EventHeader | null;
  return { sessionId: settings.sessionId, reason: endReason, head: head!, endEvent: end! };
}

function createContent(input: SessionWorkflowInput): { [k: string]: JsonValue } {
  const s = input.settings;
  return {
    msg: 'session created',
    session_id: s.sessionId,
    timeline_id: s.timelineId,
    ...(s.agentId !== undefined ? { agent_id: s.agentId } : {}),
    ...(s.channel !== undefined ? { channel: s.channel } : {}),
    ...(s.metadata !== undefined ? { metadata: s.metadata } : {}),
  };
}

