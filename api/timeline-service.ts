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
import { getTimeline } from '../lib/timeline-queries';
import type { sessionWorkflow } from '../workflows/session';
import {
  AppendRequest,
  AppendReceipt,
  AppendResult,
  EventType,
  JsonValue,
  SessionSettings,
  StoredEvent,
  TimelineErrorType,
  appendRequestProblem,
  appendUpdate,
  contentProblem,
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

export class TimelineService {
  constructor(private readonly deps: Deps) {}

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
    };
    const attrs = [{ key: SessionIdKey, value: input.sessionId }];
    if (input.agentId) attrs.push({ key: AgentIdKey, value: input.agentId });
    if (input.channel) attrs.push({ key: ChannelKey, value: input.channel });
    const start = new WithStartWorkflowOperation<typeof sessionWorkflow>('sessionWorkflow', {
      workflowId: sessionWorkflowId(input.sessionId),
      taskQueue: config.taskQueue,
      args: [{ settings }],
      // A session id names one timeline forever, even after it is archived.
      workflowIdConflictPolicy: 'FAIL',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      typedSearchAttributes: new TypedSearchAttributes(attrs),
    });
    try {
      const event = await client.workflow.executeUpdateWithStart(createdUpdate, { startWorkflowOperation: start });
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
      throw new HttpError(status, status === 413 ? ProblemType.TooLarge : ProblemType.Validation, `${problem.field} ${problem.reason}`, [problem]);
    }
    const handle = this.deps.client.workflow.getHandle(sessionWorkflowId(input.sessionId));
    try {
      const receipt = await this.sendAppend(handle, req);
      return { event: { ...receipt.event, content: req.content }, deduplicated: receipt.deduplicated };
    } catch (err) {
      throw await this.mapFailureWithLookup(err, input.sessionId, surface);
    }
  }

  private sendAppend(handle: WorkflowHandle, req: AppendRequest): Promise<AppendReceipt> {
    // No fixed update id: Temporal would answer a duplicate with the first outcome, hiding
    // that it was a retry. The activity deduplicates by key and event id instead.
    if (req.type === EventType.SessionEnd) {
      return handle.executeUpdate(endUpdate, {
        args: [{ eventId: req.eventId, reason: reasonOf(req.content), content: req.content, idempotencyKey: req.idempotencyKey }],
      });
    }
    return handle.executeUpdate(appendUpdate, { args: [req] });
  }

  async end(sessionId: string, reason: string, idempotencyKey: string | undefined, surface: Surface): Promise<AppendResult> {
    return this.append({ sessionId, type: EventType.SessionEnd, content: { reason }, idempotencyKey }, surface);
  }

  /** Workflow state for an open session; undefined when the workflow is gone or unreachable. */
  async workflowState(sessionId: string) {
    const { stateQuery } = await import('../workflows/messages');
    try {
      return await this.deps.client.workflow.getHandle(sessionWorkflowId(sessionId)).query(stateQuery);
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

  /** When the workflow is gone, the database says whether the session is archived or unknown. */
  private async mapFailureWithLookup(err: unknown, sessionId: string, surface: Surface): Promise<HttpError> {
    if (err instanceof WorkflowNotFoundError || isClosedWorkflowError(err)) {
      const t = await getTimeline(this.deps.pool, sessionId);
      if (!t) return this.notFound(sessionId);
      if (t.status === 'archived') return this.archived(sessionId, surface);
      return new HttpError(503, ProblemType.Unavailable, `session ${sessionId} has no running workflow; retry shortly`);
    }
    return this.mapFailure(err, sessionId, surface);
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
        case TimelineErrorType.IdempotencyKeyReused:
          return new HttpError(surface === 'seed' ? 400 : 409, ProblemType.Conflict, msg, [{ field: 'idempotency_key', reason: 'reused with different content' }]);
        default:
          return new HttpError(400, ProblemType.Validation, msg, [{ field: fieldOf(msg), reason: msg }]);
      }
    }
    if (isClosedWorkflowError(err)) return this.archived(sessionId, surface);
    return new HttpError(503, ProblemType.Unavailable, `the timeline service could not complete the request: ${(err as Error).message}`);
  }
}

function reasonOf(content: JsonValue): string {
  if (content && typeof content === 'object' && !Array.isArray(content) && typeof content.reason === 'string') return content.reason;
  return 'ended';
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
