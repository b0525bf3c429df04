/**
 * The typed client for session workflows: the one way to create, append to, end and
 * inspect a session, for the API and for activities running in the worker (intents and
 * task runs append to session timelines through it, so the session workflow stays the
 * single writer).
 *
 * Every failure comes out as a DomainError from lib/domain/errors.ts: the workflow's own
 * refusals arrive as ApplicationFailures carrying the error's details, and SDK failures are
 * classified by their types (never by message text). How a code becomes an HTTP status is
 * the API's business (api/problem.ts).
 */
import { randomUUID } from 'node:crypto';
import { currentRequestId } from '../lib/log';
import { Client, WithStartWorkflowOperation, WorkflowNotFoundError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import type { Pool } from 'pg';
import { DomainError, ErrorCode } from '../lib/domain/errors';
import { LIMITS } from '../lib/domain/limits';
import {
  AppendReceipt,
  AppendRequest,
  AppendInput,
  AppendResult,
  ChainHead,
  CreateSessionInput,
  EndInput,
  EventType,
  SessionSettings,
  StoredEvent,
  TimelineStatus,
  appendRequestProblem,
  occurredAtFormatProblem,
  occurredAtProblem,
  type OccurredAtBounds,
  contentProblem,
  endReasonOf,
  header,
  sameRequest,
  sessionErrors,
  sessionWorkflowId,
  type SessionWriter,
} from '../lib/domain/sessions';
import { AgentIdKey, ChannelKey, SessionIdKey } from '../lib/domain/platform/search-attributes';
import { probeDatabase } from '../lib/platform/database-probe';
import { databaseInstanceReader } from '../lib/store/instance';
import { SessionStore, TimelineRow, timelineHead } from '../lib/store/sessions';
import { workerPolling } from '../lib/temporal';
import { sessionWorkflow } from '../workflows/sessions/workflow';
import { domainErrorOf, grpcStatusOf, isAlreadyStarted, isDeadline, workflowGone } from './failures';
import { CarriedState, EndRequest, SessionState, appendUpdate, createdUpdate, endUpdate, stateQuery } from '../workflows/sessions/messages';

export interface SessionClientOptions {
  client: Client;
  /** Runtime pool (SELECT/INSERT role): recovery reads the chain head from the store. */
  pool: Pool;
  taskQueue: string;
  /** Fixed into each session it creates or resumes. */
  maxContentBytes: number;
  /** Fixed into each session it creates or resumes. */
  updatesPerRun: number;
  /** How long a write waits for the session workflow before failing as unavailable. */
  writeTimeoutMs: number;
  /**
   * EVENT_OCCURRED_AT_MAX_PAST_S / _FUTURE_S: a create whose occurred_at lies beyond them from
   * now is refused before its workflow starts (a refused SESSION_CREATE would otherwise leave a
   * failed run behind for a moment, and a retry with a good time would meet it). The writer
   * checks again against the stored ts.
   */
  occurredAt?: OccurredAtBounds;
}

export class SessionClient implements SessionWriter {
  private readonly store: SessionStore;
  /** The event database's identity, read once; sessions carry it so writers cannot stray. */
  private readonly databaseInstance: () => Promise<string>;

  constructor(private readonly opts: SessionClientOptions) {
    this.store = new SessionStore(opts.pool);
    this.databaseInstance = databaseInstanceReader(opts.pool);
  }

  /** Creates the session's workflow and waits until SESSION_CREATE is stored. */
  async create(input: CreateSessionInput): Promise<StoredEvent & { timeline_id: string }> {
    const late = occurredAtFormatProblem(input.occurredAt) ?? (input.occurredAt !== undefined && this.opts.occurredAt ? occurredAtProblem(input.occurredAt, Date.now(), this.opts.occurredAt) : null);
    if (late) throw late;
    if (input.metadata !== undefined) {
      const p = contentProblem(input.metadata, this.opts.maxContentBytes, 'metadata');
      if (p) throw p;
    }
    // One deadline for the whole create, database check included.
    const deadline = Date.now() + this.opts.writeTimeoutMs;
    if (await this.store.getTimeline(input.sessionId)) throw sessionErrors.exists(input.sessionId);
    const settings = await this.settings({
      sessionId: input.sessionId,
      timelineId: randomUUID(),
      createEventId: randomUUID(),
      agentId: input.agentId,
      channel: input.channel,
      metadata: input.metadata,
      idleTimeoutS: input.idleTimeoutS,
      ...(input.occurredAt !== undefined ? { createOccurredAt: input.occurredAt } : {}),
    });
    // A session id names one timeline forever (the check above refuses a second init);
    // only a run that failed before writing SESSION_CREATE may be started again.
    const start = this.startOperation(settings, undefined, 'FAIL');
    try {
      const event = await this.withDeadline(deadline, () => this.opts.client.workflow.executeUpdateWithStart(createdUpdate, { startWorkflowOperation: start }));
      return { ...event, timeline_id: settings.timelineId };
    } catch (err) {
      if (isAlreadyStarted(err)) throw sessionErrors.exists(input.sessionId);
      throw await this.classify(err, input.sessionId, 'create');
    }
  }

  /** Appends one event through the session workflow; a retry with the same key or event id gets the first answer. */
  async append(input: AppendInput): Promise<AppendResult> {
    const req: AppendRequest = {
      eventId: input.eventId ?? randomUUID(),
      type: input.type,
      content: input.content,
      idempotencyKey: input.idempotencyKey,
      clientEventId: input.eventId !== undefined,
      expectedSeq: input.expectedSeq,
      ...(input.occurredAt !== undefined ? { occurredAt: input.occurredAt } : {}),
      ...(input.system ? { system: true } : {}),
      ...withRequestId(),
    };
    const problem = appendRequestProblem(req, this.opts.maxContentBytes);
    if (problem) throw problem;
    const deadline = Date.now() + this.opts.writeTimeoutMs;
    let receipt: AppendReceipt;
    try {
      receipt = await this.withDeadline(deadline, () => this.send(req, input.sessionId));
    } catch (err) {
      receipt = await this.recover(err, input.sessionId, req, deadline);
    }
    return { event: { ...receipt.event, content: req.content }, deduplicated: receipt.deduplicated };
  }

  /** Appends SESSION_END with `{reason}`; the workflow then archives the timeline and completes. */
  end(sessionId: string, input: EndInput): Promise<AppendResult> {
    return this.append({ sessionId, type: EventType.SessionEnd, content: { reason: input.reason }, idempotencyKey: input.idempotencyKey, expectedSeq: input.expectedSeq, occurredAt: input.occurredAt });
  }

  /**
   * The session workflow's live state (its latest run; a closed run still answers with its
   * last state); undefined when there is no workflow or it cannot be reached.
   */
  async state(sessionId: string): Promise<SessionState | undefined> {
    try {
      return await this.opts.client.workflow.getHandle(sessionWorkflowId(sessionId)).query(stateQuery);
    } catch {
      return undefined;
    }
  }

  /**
   * The chain head as the session workflow knows it, independent of the database: for an
   * open session its live state, for an archived one its result (while Temporal retains it).
   * A rewrite or truncation of the table's tail with recomputed hashes verifies as a chain,
   * but no longer matches this. Undefined when no answer came within the anchor timeout.
   */
  async head(sessionId: string, status: TimelineStatus): Promise<ChainHead | undefined> {
    const handle = this.opts.client.workflow.getHandle<typeof sessionWorkflow>(sessionWorkflowId(sessionId));
    try {
      // Bounded: a verify must answer even when no worker is there to serve a query.
      return await this.opts.client.withDeadline(Date.now() + LIMITS.anchorTimeoutMs, async () => {
        if (status === 'open') return (await handle.query(stateQuery)).head ?? undefined;
        // Only a completed run has a result to read; result() would wait for one still closing.
        if ((await handle.describe()).status.name !== 'COMPLETED') return undefined;
        return (await handle.result()).head;
      });
    } catch {
      return undefined;
    }
  }

  // ---- internals ----------------------------------------------------------------------

  private send(req: AppendRequest, sessionId: string): Promise<AppendReceipt> {
    // No fixed update id: Temporal would answer a duplicate with the first outcome, hiding
    // that it was a retry. The writer deduplicates by key and event id instead.
    const handle = this.opts.client.workflow.getHandle(sessionWorkflowId(sessionId));
    if (req.type === EventType.SessionEnd) return handle.executeUpdate(endUpdate, { args: [endRequestOf(req)] });
    return handle.executeUpdate(appendUpdate, { args: [req] });
  }

  /**
   * An append the workflow did not take: a retry of something already stored (answer it
   * again), an archived or unknown session (refuse), or an open timeline whose workflow is
   * gone, e.g. terminated by an operator (start it again from the chain head, then append).
   */
  private async recover(err: unknown, sessionId: string, req: AppendRequest, deadline: number): Promise<AppendReceipt> {
    const refusal = domainErrorOf(err);
    const refusedAsArchived = refusal?.code === ErrorCode.SessionArchived;
    if (!refusedAsArchived && !workflowGone(err)) throw refusal ?? (await this.classify(err, sessionId, 'append'));
    const t = await this.store.getTimeline(sessionId);
    if (!t) throw sessionErrors.notFound(sessionId);
    const prior = await this.findPrior(sessionId, req);
    if (prior) return { event: prior, deduplicated: true };
    if (t.status === 'archived' || refusedAsArchived) throw sessionErrors.archived(sessionId);
    try {
      return await this.withDeadline(deadline, () => this.resumeAndAppend(t, req));
    } catch (again) {
      throw await this.classify(again, sessionId, 'append');
    }
  }

  /** The stored event an idempotent retry refers to, if any; a key reused for other content is a conflict. */
  private async findPrior(sessionId: string, req: AppendRequest) {
    const prior = await this.store.findPrior(sessionId, req.idempotencyKey, req.clientEventId ? req.eventId : undefined);
    if (!prior) return undefined;
    if (!sameRequest(prior, req)) {
      const field = req.idempotencyKey ? 'idempotency_key' : 'event_id';
      throw DomainError.field(req.idempotencyKey ? ErrorCode.IdempotencyKeyReused : ErrorCode.EventIdConflict, field, 'reused with different content').withMessage(
        `seq ${prior.seq} was stored under this ${field} with different content`,
      );
    }
    return header(prior);
  }

  /** Starts the session workflow again from what the database holds, and appends through it. */
  private async resumeAndAppend(t: TimelineRow, req: AppendRequest): Promise<AppendReceipt> {
    const [createEvent] = await this.store.listEvents(t.session_id, { limit: 1 });
    const head = timelineHead(t)!;
    const settings = await this.settings({
      sessionId: t.session_id,
      timelineId: t.timeline_id,
      createEventId: createEvent.event_id,
      agentId: t.agent_id ?? undefined,
      channel: t.channel ?? undefined,
      metadata: t.metadata,
      idleTimeoutS: t.idle_timeout_s ?? undefined,
    });
    const carried: CarriedState = { head, createEvent, lastActivityMs: Date.now(), run: 1, appendsBefore: head.seq - 1 };
    // Concurrent appends that all find the workflow gone converge on one new run.
    const start = this.startOperation(settings, carried, 'USE_EXISTING');
    const { client } = this.opts;
    if (req.type === EventType.SessionEnd) {
      return client.workflow.executeUpdateWithStart(endUpdate, { args: [endRequestOf(req)], startWorkflowOperation: start });
    }
    return client.workflow.executeUpdateWithStart(appendUpdate, { args: [req], startWorkflowOperation: start });
  }

  private async settings(s: Omit<SessionSettings, 'maxContentBytes' | 'updatesPerRun' | 'databaseInstance'>): Promise<SessionSettings> {
    return { ...s, maxContentBytes: this.opts.maxContentBytes, updatesPerRun: this.opts.updatesPerRun, databaseInstance: await this.databaseInstance() };
  }

  private startOperation(settings: SessionSettings, carried: CarriedState | undefined, conflict: 'FAIL' | 'USE_EXISTING') {
    return new WithStartWorkflowOperation(sessionWorkflow, {
      workflowId: sessionWorkflowId(settings.sessionId),
      taskQueue: this.opts.taskQueue,
      args: [{ settings, ...(carried ? { carried } : {}) }],
      workflowIdConflictPolicy: conflict,
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      // Short, so a session whose task died with its worker moves on soon (LIMITS.workflowTaskTimeoutMs).
      workflowTaskTimeout: LIMITS.workflowTaskTimeoutMs,
      typedSearchAttributes: searchAttributes(settings),
    });
  }

  /** Writes wait for the session's worker; without one they fail at the deadline instead of hanging. */
  private withDeadline<T>(deadline: number, fn: () => Promise<T>): Promise<T> {
    return this.opts.client.withDeadline(deadline, fn);
  }

  /**
   * Any failure as a domain error: the workflow's own refusal, or an outage named by its
   * real cause (database down, no worker polling, worker overloaded, Temporal unreachable or
   * overloaded), saying whether the write may still be stored (`may_be_stored`).
   */
  private async classify(err: unknown, sessionId: string, op: 'create' | 'append'): Promise<DomainError> {
    const refusal = domainErrorOf(err);
    if (refusal) return refusal;
    if (err instanceof DomainError) return err;
    if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError || isDeadline(err)) return this.stalled(sessionId, op);
    // Gone after a resume attempt found the timeline open: it was archived meanwhile.
    if (err instanceof WorkflowNotFoundError) return sessionErrors.archived(sessionId);
    const grpc = grpcStatusOf(err);
    // RESOURCE_EXHAUSTED is no proof that nothing was applied: the SDK retries it (and
    // UNAVAILABLE) with the same request, and Update-with-Start resends its MultiOperation
    // until the update is accepted, so an earlier attempt may have started the workflow. On
    // the Temporal server under 300 concurrent creates, 3 creates answered it at ~14.7 s of
    // their 15 s deadline with the session created (issue 18, "the phantom create").
    if (grpc?.code === GRPC_RESOURCE_EXHAUSTED) return unknownOutcome(sessionId, op, `Temporal answered that it is overloaded (${grpc.details || 'RESOURCE_EXHAUSTED'}) after the request was sent`);
    if (grpc?.code === GRPC_UNAVAILABLE) return unknownOutcome(sessionId, op, `Temporal is not reachable (${grpc.details})`);
    return unknownOutcome(sessionId, op, `the timeline service could not complete the request: ${messageChain(err)}`);
  }

  /** The write deadline passed with the write in flight: find out why, briefly, and say so. */
  private async stalled(sessionId: string, op: 'create' | 'append'): Promise<DomainError> {
    const ms = this.opts.writeTimeoutMs;
    const { client, pool, taskQueue } = this.opts;
    const [db, worker] = await Promise.all([
      within(
        probeDatabase(pool).then(
          () => 'ok',
          (e: Error) => e.message,
        ),
        'no answer',
      ),
      within(workerPolling(client.connection, client.options.namespace, taskQueue), 'unknown: Temporal did not answer'),
    ]);
    let cause: string;
    if (db !== 'ok') cause = `the event database is not reachable (${db}), so the session workflow could not store the write within ${ms} ms; it keeps it queued and stores it when the database is back`;
    else if (worker.startsWith('unknown')) cause = `Temporal did not answer within ${ms} ms (${worker.replace(/^unknown: /, '')})`;
    else if (worker !== 'ok') cause = `${worker}, so no worker took the write within ${ms} ms`;
    else cause = `the worker did not finish the write within ${ms} ms (it is overloaded, or replaying sessions after a restart)`;
    return unknownOutcome(sessionId, op, cause);
  }
}

const GRPC_RESOURCE_EXHAUSTED = 8;
const GRPC_UNAVAILABLE = 14;

/** A 503 for a write whose outcome is not known: it may still be stored, and how to retry safely. */
function unknownOutcome(sessionId: string, op: 'create' | 'append', cause: string): DomainError {
  const advice =
    op === 'create'
      ? `the session may still be created: GET /v1/sessions/${sessionId} shows whether it was, and a repeated create then answers that it exists`
      : 'the write may still be stored: retry with the same idempotency_key (or event_id) and it is stored once';
  return new DomainError(ErrorCode.Unavailable, `session ${sessionId}: ${cause}; ${advice}`, [], { may_be_stored: true }).withRetryAfter(LIMITS.retryAfterS);
}

/** Resolves to `fallback` when `p` takes longer than the diagnosis may. */
function within(p: Promise<string>, fallback: string): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<string>((r) => (timer = setTimeout(() => r(fallback), LIMITS.diagnoseTimeoutMs)));
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

/** "message: cause: cause" down the chain, so the real reason is not hidden behind the SDK's wrapper. */
function messageChain(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, i = 0; e && i < 5; e = (e as { cause?: unknown }).cause, i++) {
    const m = (e as { details?: string }).details || (e as Error).message;
    if (m && !parts.includes(m)) parts.push(m);
  }
  return parts.join(': ') || String(err);
}

function searchAttributes(s: SessionSettings): TypedSearchAttributes {
  const attrs = [{ key: SessionIdKey, value: s.sessionId }];
  if (s.agentId) attrs.push({ key: AgentIdKey, value: s.agentId });
  if (s.channel) attrs.push({ key: ChannelKey, value: s.channel });
  return new TypedSearchAttributes(attrs);
}

/** The current HTTP request's id (lib/log.ts), handed into the workflow input for the writer's logs. */
function withRequestId(): { requestId?: string } {
  const requestId = currentRequestId();
  return requestId ? { requestId } : {};
}

function endRequestOf(req: AppendRequest): EndRequest {
  return { eventId: req.eventId, reason: endReasonOf(req.content), content: req.content, idempotencyKey: req.idempotencyKey, expectedSeq: req.expectedSeq, ...(req.occurredAt !== undefined ? { occurredAt: req.occurredAt } : {}) };
}
