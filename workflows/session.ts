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
  continueAsNew,
  proxyLocalActivities,
  setHandler,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { AppendItem, AppendOutcome, TimelineActivities } from '../activities/timeline';
import { canonicalize } from '../lib/canonical-json';
import {
  AppendRequest,
  AppendReceipt,
  EventHeader,
  ChainHead,
  EndRequest,
  EventType,
  SessionState,
  SessionStatus,
  SessionWorkflowInput,
  SessionWorkflowResult,
  StoredEvent,
  TimelineErrorType,
  appendUpdate,
  createdUpdate,
  endUpdate,
  RequestProblem,
  appendRequestProblem,
  endReasonOf,
  utf8Length,
  stateQuery,
} from './messages';

const { appendEvents } = proxyLocalActivities<TimelineActivities>({
  startToCloseTimeout: '15 seconds',
  // A database outage stalls appends instead of failing them; callers time out and retry
  // with the same idempotency key, which the activity deduplicates.
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds' },
});

/** Most events written in one transaction. */
const MAX_BATCH = 200;

interface Pending {
  item: AppendItem;
  /** Canonical content size, to keep one batch well under Temporal's 2 MB payload limit. */
  bytes: number;
  outcome?: AppendOutcome;
}

/** Content bytes written in one transaction at most (a single larger event still goes alone). */
const MAX_BATCH_BYTES = 1024 * 1024;

function takeBatch(queue: Pending[]): Pending[] {
  let n = 0;
  let bytes = 0;
  while (n < queue.length && n < MAX_BATCH && (n === 0 || bytes + queue[n].bytes <= MAX_BATCH_BYTES)) {
    bytes += queue[n].bytes;
    n++;
  }
  return queue.splice(0, n);
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
    if (status !== SessionStatus.Open) {
      throw ApplicationFailure.nonRetryable(
        `session ${settings.sessionId} is ${status === SessionStatus.Ending ? 'ending' : 'archived'}`,
        TimelineErrorType.SessionArchived,
      );
    }
  }

  function refuse(problem: RequestProblem | null): void {
    if (problem) throw ApplicationFailure.nonRetryable(`${problem.field} ${problem.reason}`, problem.type);
  }

  async function enqueue(item: AppendItem): Promise<AppendReceipt> {
    // Native JSON.stringify: the batch bound needs a size, not the canonical form (the validator checked that).
    const p: Pending = { item, bytes: utf8Length(JSON.stringify(item.content)) };
    queue.push(p);
    appendsThisRun++;
    lastActivityMs = Date.now();
    await condition(() => p.outcome !== undefined);
    const o = p.outcome!;
    if (!o.ok) throw ApplicationFailure.nonRetryable(o.message, o.errorType);
    return o.result;
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
      return enqueue({ eventId: req.eventId, type: req.type, content: req.content, idempotencyKey: req.idempotencyKey, clientEventId: req.clientEventId });
    },
    {
      // Synchronous, so a bad request is refused before it enters history or the database.
      validator: (req: AppendRequest) => {
        rejectIfClosed();
        refuse(appendRequestProblem(req, canonicalize, settings.maxContentBytes));
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
      });
    },
    {
      validator: (req: EndRequest) => {
        rejectIfClosed();
        refuse(
          appendRequestProblem(
            { eventId: req.eventId, type: EventType.SessionEnd, content: req.content ?? null, idempotencyKey: req.idempotencyKey },
            canonicalize,
            settings.maxContentBytes,
          ),
        );
      },
    },
  );

  setHandler(createdUpdate, async () => {
    await condition(() => createEvent !== null);
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
      outcomes = await write(batch, create);
    } catch (err) {
      // A write no retry can fix fails this batch's callers; the session stays open.
      if (create || !(err instanceof ActivityFailure)) throw err;
      const cause = err.cause instanceof ApplicationFailure ? err.cause : undefined;
      const message = cause?.message ?? err.message;
      outcomes = batch.map(() => ({ ok: false as const, errorType: TimelineErrorType.WriteFailed, message }));
    }
    deliver(batch, outcomes);
  }

  function write(batch: Pending[], create: boolean): Promise<AppendOutcome[]> {
    return appendEvents({
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
      items: batch.map((p) => p.item),
    });
  }

  function deliver(batch: Pending[], outcomes: AppendOutcome[]): void {
    batch.forEach((p, i) => {
      const o = outcomes[i];
      p.outcome = o;
      if (!o.ok) {
        // An end that was not stored leaves the session open, or it would refuse everything forever.
        if (p.item.type === EventType.SessionEnd && o.errorType !== TimelineErrorType.SessionArchived && !endEvent) {
          status = SessionStatus.Open;
          lastActivityMs = Date.now(); // an idle end that failed waits a full idle period before trying again
        }
        return;
      }
      const e = o.result.event;
      if (!head || e.seq > head.seq) head = { seq: e.seq, hash: e.hash, ts: e.ts };
      if (e.event_type === EventType.SessionEnd) endEvent = e;
    });
  }

  if (!createEvent) {
    const content = createContent(input);
    const first: Pending = { item: { eventId: settings.createEventId, type: EventType.SessionCreate, content }, bytes: 0 };
    await writeBatch([first], true);
    const o = first.outcome!;
    if (!o.ok) throw ApplicationFailure.nonRetryable(o.message, o.errorType);
    createEvent = { ...o.result.event, content };
  }

  const idleMs = settings.idleTimeoutS ? settings.idleTimeoutS * 1000 : undefined;
  const rotationDue = () => appendsThisRun >= settings.updatesPerRun || workflowInfo().continueAsNewSuggested;

  for (;;) {
    const wait = () => queue.length > 0 || (rotationDue() && allHandlersFinished());
    const woke = idleMs === undefined ? (await condition(wait), true) : await condition(wait, Math.max(1, lastActivityMs + idleMs - Date.now()));
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
      return continueAsNew<typeof sessionWorkflow>({
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

function createContent(input: SessionWorkflowInput): { [k: string]: import('./messages').JsonValue } {
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

