/**
 * The operations behind both HTTP surfaces (seed-compatible and /v1): writes go to the
 * session workflow as Updates, reads come from PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import {
  Client,
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowHandle,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { ApplicationFailure, SearchAttributeType, TypedSearchAttributes, defineSearchAttributeKey } from '@temporalio/common';
import type { Pool } from 'pg';
import { canonicalize } from '../lib/canonical-json';
import type { Config } from '../lib/config';
import { getTimeline, listEvents, TimelineRow } from '../lib/timeline-queries';
import { databaseInstanceReader, EVENT_COLUMNS, header, rowToEvent, sameRequest } from '../activities/timeline';
import type { sessionWorkflow } from '../workflows/session';
import {
  AppendRequest,
  AppendReceipt,
  ChainHead,
  SessionState,
  stateQuery,
  AppendResult,
  EndRequest,
  EventHeader,
  EventType,
  JsonValue,
  SessionSettings,
  StoredEvent,
  TimelineErrorType,
  appendRequestProblem,
  appendUpdate,
  contentProblem,
  endReasonOf,
  createdUpdate,
  endUpdate,
  sessionWorkflowId,
} from '../workflows/messages';
import { HttpError, ProblemType } from './errors';

export const SessionIdKey = defineSearchAttributeKey('SessionId', SearchAttributeType.KEYWORD);
export const AgentIdKey = defineSearchAttributeKey('AgentId', SearchAttributeType.KEYWORD);
export const ChannelKey = defineSearchAttributeKey('Channel', SearchAttributeType.KEYWORD);

export interface CreateSessionInput {
  sessionId: string;
  agentId?: string;
  channel?: string;
  metadata?: { [k: string]: JsonValue };
  idleTimeoutS?: number;
}

export interface AppendInput {
  sessionId: string;
  type: string;
  content: JsonValue;
  idempotencyKey?: string;
  eventId?: string;
}

export interface Deps {
  client: Client;
  pool: Pool;
  config: Config;
}

/** Status codes differ between the seed surface (400 for every refusal) and /v1. */
export type Surface = 'seed' | 'v1';

/** How long verify waits for the workflow's view of the head before reporting no anchor. */
const ANCHOR_TIMEOUT_MS = 5000;

export class TimelineService {
  /** The event database's identity, read once; sessions carry it so writers cannot stray. */
  private readonly databaseInstance: () => Promise<string>;

  constructor(private readonly deps: Deps) {
    this.databaseInstance = databaseInstanceReader(deps.pool);
  }

  async createSession(input: CreateSessionInput, surface: Surface): Promise<StoredEvent & { timeline_id: string }> {
    const { client, config, pool } = this.deps;
    if (input.metadata !== undefined) {
      const p = contentProblem(input.metadata, canonicalize, config.maxContentBytes);
      if (p) {
        // Too large is 413, as for event content.
        if (p.type === TimelineErrorType.ContentTooLarge) throw new HttpError(413, ProblemType.TooLarge, `metadata ${p.reason}`, [{ field: 'metadata', reason: p.reason }]);
        throw HttpError.validation('metadata', p.reason);
      }
    }
    if (await getTimeline(pool, input.sessionId)) throw this.exists(input.sessionId, surface);
    const settings: SessionSettings = {
      sessionId: input.sessionId,
      timelineId: randomUUID(),
      createEventId: randomUUID(),
      agentId: input.agentId,
      channel: input.channel,
      metadata: input.metadata,
      idleTimeoutS: input.idleTimeoutS,
      maxContentBytes: config.maxContentBytes,
      updatesPerRun: config.updatesPerRun,
      databaseInstance: await this.databaseInstance(),
    };
    const start = new WithStartWorkflowOperation<typeof sessionWorkflow>('sessionWorkflow', {
      workflowId: sessionWorkflowId(input.sessionId),
      taskQueue: config.taskQueue,
      args: [{ settings }],
      // A session id names one timeline forever (the database check above refuses a second
      // init); only a run that failed before writing SESSION_CREATE may be started again.
      workflowIdConflictPolicy: 'FAIL',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      typedSearchAttributes: searchAttributes(input.sessionId, input.agentId, input.channel),
    });
    try {
      const event = await this.withDeadline(() => client.workflow.executeUpdateWithStart(createdUpdate, { startWorkflowOperation: start }));
      return { ...event, timeline_id: settings.timelineId };
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError || isAlreadyStarted(err)) throw this.exists(input.sessionId, surface);
      throw this.mapFailure(err, input.sessionId, surface);
    }
  }

  async append(input: AppendInput, surface: Surface): Promise<AppendResult> {
    const req: AppendRequest = {
      eventId: input.eventId ?? randomUUID(),
      type: input.type,
      content: input.content,
      idempotencyKey: input.idempotencyKey,
      clientEventId: input.eventId !== undefined,
    };
    const problem = appendRequestProblem(req, canonicalize, this.deps.config.maxContentBytes);
    if (problem) {
      const status = problem.type === TimelineErrorType.ContentTooLarge ? 413 : 400;
      throw new HttpError(status, status === 413 ? ProblemType.TooLarge : ProblemType.Validation, `${problem.field} ${problem.reason}`, [
        { field: problem.field, reason: problem.reason },
      ]);
    }
    const handle = this.deps.client.workflow.getHandle(sessionWorkflowId(input.sessionId));
    let receipt: AppendReceipt;
    try {
      receipt = await this.withDeadline(() => this.sendAppend(handle, req));
    } catch (err) {
      receipt = await this.recover(err, input.sessionId, req, surface);
    }
    return { event: { ...receipt.event, content: req.content }, deduplicated: receipt.deduplicated };
  }

  /**
   * An append the workflow did not take: a retry of something already stored (answer it
   * again), an archived or unknown session (refuse), or an open timeline whose workflow is
   * gone, e.g. terminated by an operator (start it again from the chain head, then append).
   */
  private async recover(err: unknown, sessionId: string, req: AppendRequest, surface: Surface): Promise<AppendReceipt> {
    const workflowGone = err instanceof WorkflowNotFoundError || isClosedWorkflowError(err);
    const refusedAsArchived = failureType(err) === TimelineErrorType.SessionArchived;
    if (!workflowGone && !refusedAsArchived) throw this.mapFailure(err, sessionId, surface);
    const t = await getTimeline(this.deps.pool, sessionId);
    if (!t) throw this.notFound(sessionId);
    const prior = await this.findPrior(sessionId, req, surface);
    if (prior) return { event: prior, deduplicated: true };
    if (t.status === 'archived' || refusedAsArchived) throw this.archived(sessionId, surface);
    try {
      return await this.withDeadline(() => this.resumeAndAppend(t, req));
    } catch (again) {
      throw this.mapFailure(again, sessionId, surface);
    }
  }

  /** The stored event an idempotent retry refers to, if any; a key reused for other content is a conflict. */
  private async findPrior(sessionId: string, req: AppendRequest, surface: Surface): Promise<EventHeader | undefined> {
    if (!req.idempotencyKey && !req.clientEventId) return undefined;
    const { rows } = await this.deps.pool.query(
      `SELECT ${EVENT_COLUMNS} FROM timeline_events
        WHERE session_id = $1 AND (idempotency_key = $2 OR ($3 AND event_id = $4::uuid))`,
      [sessionId, req.idempotencyKey ?? null, req.clientEventId === true, req.eventId],
    );
    if (!rows[0]) return undefined;
    const prior = rowToEvent(rows[0]);
    if (!sameRequest(prior, req)) {
      throw new HttpError(surface === 'seed' ? 400 : 409, ProblemType.Conflict, `seq ${prior.seq} was stored under this key with different content`, [
        { field: req.idempotencyKey ? 'idempotency_key' : 'event_id', reason: 'reused with different content' },
      ]);
    }
    return header(prior);
  }

  /** Starts the session workflow again from what the database holds, and appends through it. */
  private async resumeAndAppend(t: TimelineRow, req: AppendRequest): Promise<AppendReceipt> {
    const { client, config, pool } = this.deps;
    const [createEvent] = await listEvents(pool, t.session_id, { limit: 1 });
    const settings: SessionSettings = {
      sessionId: t.session_id,
      timelineId: t.timeline_id,
      createEventId: createEvent.event_id,
      agentId: t.agent_id ?? undefined,
      channel: t.channel ?? undefined,
      metadata: t.metadata,
      idleTimeoutS: t.idle_timeout_s ?? undefined,
      maxContentBytes: config.maxContentBytes,
      updatesPerRun: config.updatesPerRun,
      databaseInstance: await this.databaseInstance(),
    };
    const start = new WithStartWorkflowOperation<typeof sessionWorkflow>('sessionWorkflow', {
      workflowId: sessionWorkflowId(t.session_id),
      taskQueue: config.taskQueue,
      args: [
        {
          settings,
          carried: {
            head: { seq: t.head_seq!, hash: t.head_hash!, ts: t.head_ts! },
            createEvent,
            lastActivityMs: Date.now(),
            run: 1,
            appendsBefore: t.head_seq! - 1,
          },
        },
      ],
      // Concurrent appends that all find the workflow gone converge on one new run.
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      typedSearchAttributes: searchAttributes(t.session_id, t.agent_id ?? undefined, t.channel ?? undefined),
    });
    if (req.type === EventType.SessionEnd) {
      return client.workflow.executeUpdateWithStart(endUpdate, { args: [endRequestOf(req)], startWorkflowOperation: start });
    }
    return client.workflow.executeUpdateWithStart(appendUpdate, { args: [req], startWorkflowOperation: start });
  }

  /** Writes wait for the session's worker; without one they fail after a while instead of hanging. */
  private withDeadline<T>(fn: () => Promise<T>): Promise<T> {
    return this.deps.client.withDeadline(Date.now() + this.deps.config.writeTimeoutMs, fn);
  }

  private sendAppend(handle: WorkflowHandle, req: AppendRequest): Promise<AppendReceipt> {
    // No fixed update id: Temporal would answer a duplicate with the first outcome, hiding
    // that it was a retry. The activity deduplicates by key and event id instead.
    if (req.type === EventType.SessionEnd) {
      return handle.executeUpdate(endUpdate, { args: [endRequestOf(req)] });
    }
    return handle.executeUpdate(appendUpdate, { args: [req] });
  }

  async end(sessionId: string, reason: string, idempotencyKey: string | undefined, surface: Surface): Promise<AppendResult> {
    return this.append({ sessionId, type: EventType.SessionEnd, content: { reason }, idempotencyKey }, surface);
  }

  /** Workflow state for an open session; undefined when the workflow is gone or unreachable. */
  async workflowState(sessionId: string): Promise<SessionState | undefined> {
    try {
      return await this.deps.client.workflow.getHandle(sessionWorkflowId(sessionId)).query(stateQuery);
    } catch {
      return undefined;
    }
  }

  /**
   * The chain head as the session workflow knows it, independent of the database: for an
   * open session its live state, for an archived one its result (while Temporal retains it).
   * A rewrite or truncation of the table's tail with recomputed hashes verifies as a chain,
   * but no longer matches this.
   */
  async workflowHead(sessionId: string, status: 'open' | 'archived'): Promise<ChainHead | undefined> {
    const handle = this.deps.client.workflow.getHandle<typeof sessionWorkflow>(sessionWorkflowId(sessionId));
    try {
      // Bounded: a verify must answer even when no worker is there to serve a query.
      return await this.deps.client.withDeadline(Date.now() + ANCHOR_TIMEOUT_MS, async () => {
        if (status === 'open') return (await handle.query(stateQuery)).head ?? undefined;
        // Only a completed run has a result to read; result() would wait for one still closing.
        if ((await handle.describe()).status.name !== 'COMPLETED') return undefined;
        return (await handle.result()).head;
      });
    } catch {
      return undefined;
    }
  }

  private exists(sessionId: string, surface: Surface): HttpError {
    return new HttpError(surface === 'seed' ? 400 : 409, ProblemType.SessionExists, `session ${sessionId} already has a timeline`, [
      { field: 'session_id', reason: 'already initialised' },
    ]);
  }

  private archived(sessionId: string, surface: Surface): HttpError {
    return new HttpError(surface === 'seed' ? 400 : 409, ProblemType.SessionArchived, `session ${sessionId} is archived; nothing can be appended`, [
      { field: 'session_id', reason: 'archived' },
    ]);
  }

  private notFound(sessionId: string): HttpError {
    return new HttpError(404, ProblemType.NotFound, `session ${sessionId} has no timeline; initialise it first`, [
      { field: 'session_id', reason: 'unknown session' },
    ]);
  }

  private mapFailure(err: unknown, sessionId: string, surface: Surface): HttpError {
    const failure = err instanceof WorkflowUpdateFailedError ? err.cause : undefined;
    if (failure instanceof ApplicationFailure) {
      const msg = failure.message;
      switch (failure.type) {
        case TimelineErrorType.SessionArchived:
          return this.archived(sessionId, surface);
        case TimelineErrorType.SessionExists:
          return this.exists(sessionId, surface);
        case TimelineErrorType.ContentTooLarge:
          return new HttpError(413, ProblemType.TooLarge, msg, [{ field: 'content', reason: msg }]);
        case TimelineErrorType.EventIdConflict:
          return new HttpError(409, ProblemType.Conflict, msg, [{ field: 'event_id', reason: 'already used' }]);
        case TimelineErrorType.WriteFailed:
          return new HttpError(503, ProblemType.Unavailable, `nothing was stored: ${msg}`);
        case TimelineErrorType.IdempotencyKeyReused:
          return new HttpError(surface === 'seed' ? 400 : 409, ProblemType.Conflict, msg, [{ field: 'idempotency_key', reason: 'reused with different content' }]);
        case 'InvalidContent':
        case 'InvalidRequest':
        case TimelineErrorType.InvalidEventType:
          return new HttpError(400, ProblemType.Validation, msg, [{ field: fieldOf(msg), reason: msg }]);
        default:
          // Not the caller's fault (e.g. the workflow failed before answering): nothing the
          // request could change, so not a 4xx.
          return new HttpError(503, ProblemType.Unavailable, `the session workflow could not complete the request: ${msg}`);
      }
    }
    if (isClosedWorkflowError(err)) return this.archived(sessionId, surface);
    if (isDeadlineExceeded(err)) {
      return new HttpError(
        503,
        ProblemType.Unavailable,
        `session ${sessionId}: no worker answered within ${this.deps.config.writeTimeoutMs} ms; the write may still be applied: retry an append with the same idempotency_key, and check GET /v1/sessions/${sessionId} before creating it again`,
      );
    }
    return new HttpError(503, ProblemType.Unavailable, `the timeline service could not complete the request: ${(err as Error).message}`);
  }
}

function searchAttributes(sessionId: string, agentId?: string, channel?: string): TypedSearchAttributes {
  const attrs = [{ key: SessionIdKey, value: sessionId }];
  if (agentId) attrs.push({ key: AgentIdKey, value: agentId });
  if (channel) attrs.push({ key: ChannelKey, value: channel });
  return new TypedSearchAttributes(attrs);
}

function endRequestOf(req: AppendRequest): EndRequest {
  return { eventId: req.eventId, reason: endReasonOf(req.content), content: req.content, idempotencyKey: req.idempotencyKey };
}

function failureType(err: unknown): string | undefined {
  const cause = err instanceof WorkflowUpdateFailedError ? err.cause : undefined;
  return cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined;
}

/** gRPC DEADLINE_EXCEEDED anywhere in the error's cause chain. */
function isDeadlineExceeded(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, i = 0; e && i < 5; e = e.cause as typeof e, i++) {
    if (e.code === 4 || /deadline exceeded/i.test((e as Error).message ?? '')) return true;
  }
  return false;
}

function fieldOf(msg: string): string {
  const m = /^(content|event_type|event_id|idempotency_key)\b/.exec(msg);
  return m ? m[1] : 'body';
}

function isAlreadyStarted(err: unknown): boolean {
  const e = err as { cause?: unknown; message?: string };
  return /already (started|running)|AlreadyStarted/i.test(e?.message ?? '') || (e?.cause !== undefined && e.cause instanceof WorkflowExecutionAlreadyStartedError);
}

/** An update sent to a workflow that completed meanwhile (ended between check and call). */
function isClosedWorkflowError(err: unknown): boolean {
  const msg = (err as Error)?.message ?? '';
  return /workflow execution already completed|workflow (is )?closing|completed before the update/i.test(msg);
}
