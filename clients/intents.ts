/**
 * The typed client for intent workflows: the one way to create, transition and inspect an
 * intent. Creates use update-with-start (`intent/<event_id>`, search attributes IntentId,
 * Domain, IntentStatus); a transition of an intent whose workflow has closed (done, or
 * retention over) is checked against the stored state and, when legal, goes through a new
 * run started from the stored head. Every failure comes out as a DomainError.
 */
import { randomUUID } from 'node:crypto';
import { currentRequestId } from '../lib/log';
import { Client, WithStartWorkflowOperation, WorkflowNotFoundError, WorkflowUpdateRPCTimeoutOrCancelledError, type WorkflowStartOptions } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { tsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import type { Pool } from 'pg';
import type { Config } from '../lib/config';
import { DomainError, ErrorCode } from '../lib/domain/errors';
import {
  IntentStatus,
  blockedInfo,
  headerProblem,
  intentErrors,
  intentWorkflowId,
  transitionProblem,
  transitionRequestProblem,
  type IntentHeader,
  type IntentSettings,
  type JsonObject,
  type StoredTransition,
  type TransitionRequest,
} from '../lib/domain/intents';
import { LIMITS } from '../lib/domain/limits';
import { sessionErrors } from '../lib/domain/sessions';
import { DomainKey, IntentIdKey, IntentStatusKey } from '../lib/search-attributes';
import { databaseInstanceReader } from '../lib/store/instance';
import { IntentStore, keyAfter, type IntentKey, type IntentRow } from '../lib/store/intents';
import { SessionStore } from '../lib/store/sessions';
import { intentWorkflow } from '../workflows/intents/workflow';
import { IntentState, createdUpdate, stateQuery, transitionUpdate } from '../workflows/intents/messages';
import { domainErrorOf, isAlreadyStarted, isDeadline, workflowGone } from './failures';

export interface IntentClientOptions {
  client: Client;
  pool: Pool;
  taskQueue: string;
  /** How long a create or transition waits for the intent's workflow before failing as unavailable. */
  writeTimeoutMs: number;
  /** Time-to-live when the create gives none: the domain's, else the global default. */
  defaultTtlS: number;
  domainTtls: Record<string, number>;
  /** Fixed into each intent's workflow: how long it stays open while blocked without a retry. */
  retentionS: number;
}

export interface CreateIntentInput {
  eventId: string;
  domain: string;
  action: string;
  /** Default requested; OML allows creating in any state. */
  status?: IntentStatus;
  tags?: string[];
  data?: JsonObject;
  note?: string;
  sessionId?: string;
  dedupeKey?: string;
  ttlS?: number;
}

export interface TransitionInput {
  status: IntentStatus;
  note?: string;
  data?: JsonObject;
}

export class IntentClient {
  private readonly store: IntentStore;
  private readonly sessions: SessionStore;
  private readonly databaseInstance: () => Promise<string>;

  /** The client as the configuration sets it up (the API, the worker process's reconcile sweep, tests). */
  static fromConfig(
    client: Client,
    pool: Pool,
    config: Pick<Config, 'taskQueue' | 'writeTimeoutMs' | 'intentDefaultTtlS' | 'intentDomainTtls' | 'intentRetentionS'>,
  ): IntentClient {
    return new IntentClient({
      client,
      pool,
      taskQueue: config.taskQueue,
      writeTimeoutMs: config.writeTimeoutMs,
      defaultTtlS: config.intentDefaultTtlS,
      domainTtls: config.intentDomainTtls,
      retentionS: config.intentRetentionS,
    });
  }

  constructor(private readonly opts: IntentClientOptions) {
    this.store = new IntentStore(opts.pool);
    this.sessions = new SessionStore(opts.pool);
    this.databaseInstance = databaseInstanceReader(opts.pool);
  }

  /** The time-to-live an intent of this domain gets when its create names none. */
  ttlFor(domain: string, ttlS?: number): number {
    return ttlS ?? this.opts.domainTtls[domain] ?? this.opts.defaultTtlS;
  }

  /** Creates the intent's workflow and waits until its first transition is stored. */
  async create(input: CreateIntentInput): Promise<StoredTransition> {
    const req: TransitionRequest = { transitionId: randomUUID(), to: input.status ?? IntentStatus.Requested, data: input.data ?? {}, ...(input.note !== undefined ? { note: input.note } : {}), ...requestIdPart() };
    const problem = transitionRequestProblem(req);
    if (problem) throw problem;
    const header: IntentHeader = {
      event_id: input.eventId,
      domain: input.domain,
      action: input.action,
      tags: input.tags ?? [],
      session_id: input.sessionId ?? null,
      dedupe_key: input.dedupeKey ?? null,
      ttl_s: this.ttlFor(input.domain, input.ttlS),
    };
    const unstorable = headerProblem(header);
    if (unstorable) throw unstorable;
    // Fast refusals before a workflow is started; the writer checks all of them again under its locks.
    if (await this.store.exists(input.eventId)) throw intentErrors.exists(input.eventId);
    if (input.dedupeKey) {
      const holder = await this.store.dedupeHolder(input.dedupeKey);
      if (holder) throw intentErrors.duplicate(input.dedupeKey, holder);
    }
    if (input.sessionId && !(await this.sessions.getTimeline(input.sessionId))) throw sessionErrors.notFound(input.sessionId);
    const settings: IntentSettings = { header, create: req, retentionS: this.opts.retentionS, databaseInstance: await this.databaseInstance() };
    const start = new WithStartWorkflowOperation(intentWorkflow, {
      workflowId: intentWorkflowId(input.eventId),
      taskQueue: this.opts.taskQueue,
      args: [{ settings }],
      workflowIdConflictPolicy: 'FAIL',
      // An event id names one intent forever (the store check above); only a run that failed before storing its first transition may start again.
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      typedSearchAttributes: searchAttributes(header, req.to),
    });
    try {
      return await this.withDeadline(() => this.opts.client.workflow.executeUpdateWithStart(createdUpdate, { startWorkflowOperation: start }));
    } catch (err) {
      if (isAlreadyStarted(err)) throw intentErrors.exists(input.eventId);
      throw this.classify(err, input.eventId);
    }
  }

  /** One transition through the intent's workflow (a new run when it has closed), checked against the current state. */
  async transition(eventId: string, input: TransitionInput): Promise<StoredTransition> {
    const req: TransitionRequest = { transitionId: randomUUID(), to: input.status, data: input.data ?? {}, ...(input.note !== undefined ? { note: input.note } : {}), ...requestIdPart() };
    const problem = transitionRequestProblem(req);
    if (problem) throw problem;
    try {
      return await this.withDeadline(() => this.opts.client.workflow.getHandle(intentWorkflowId(eventId)).executeUpdate(transitionUpdate, { args: [req] }));
    } catch (err) {
      const refusal = domainErrorOf(err);
      if (refusal) throw refusal;
      if (!workflowGone(err)) throw this.classify(err, eventId);
    }
    const row = await this.store.get(eventId);
    if (!row) throw intentErrors.notFound(eventId);
    const illegal = transitionProblem(eventId, row.status, req.to);
    if (illegal) throw illegal;
    try {
      return await this.withDeadline(() => this.resumeAndTransition(row, req));
    } catch (err) {
      throw domainErrorOf(err) ?? this.classify(err, eventId);
    }
  }

  /** Workflow state (next timer) of an intent whose workflow is open; undefined when it is closed or unreachable. */
  async state(eventId: string): Promise<IntentState | undefined> {
    const handle = this.opts.client.workflow.getHandle(intentWorkflowId(eventId));
    try {
      // Bounded, and only for a running workflow: a query to a closed one would replay its history on a worker.
      return await this.opts.client.withDeadline(Date.now() + LIMITS.anchorTimeoutMs, async () =>
        (await handle.describe()).status.name === 'RUNNING' ? await handle.query(stateQuery) : undefined,
      );
    } catch {
      return undefined;
    }
  }

  /**
   * Restarts, from its stored head, the workflow of every intent that needs one and has none
   * running (terminated, timed out, or lost with Temporal's state):
   *   - open intents (requested or in-progress): their time-to-live acts again (an intent past
   *     it expires at once);
   *   - blocked intents waiting for an automatic retry (retry: true and a retry_after): they
   *     re-open as requested at retry_after (at once when it has passed) and wake their agent.
   * It pages through all of them, oldest first, by keyset (created_ts, event_id): each page
   * is one indexed read of at most `pageSize` rows and one describe per row, so no sweep holds
   * more than a page and none stops at the first page. A run that is running is left alone,
   * and concurrent sweeps (or a PATCH) converge on one run (USE_EXISTING). Returns the event
   * ids it restarted.
   */
  async reconcileOpen(opts: { pageSize?: number } = {}): Promise<string[]> {
    const pageSize = opts.pageSize ?? LIMITS.intentReconcilePageSize;
    if (!Number.isInteger(pageSize) || pageSize < 1) throw new RangeError(`pageSize must be a positive integer, not ${pageSize}`);
    const restarted: string[] = [];
    const sweeps: ((after: IntentKey | undefined) => Promise<IntentRow[]>)[] = [
      (after) => this.store.pending({ limit: pageSize, after }),
      (after) => this.store.awaitingRetry({ limit: pageSize, after }),
    ];
    for (const page of sweeps) {
      let after: IntentKey | undefined;
      for (;;) {
        const rows = await page(after);
        for (const row of rows) if (await this.restartIfGone(row)) restarted.push(row.event_id);
        if (rows.length < pageSize) break;
        after = keyAfter(rows);
      }
    }
    return restarted;
  }

  /**
   * Repairs intents wedged by a poison pill (code before the input gate retried an unstorable
   * transition forever, holding the workflow's writer: its create answered 503 and kept the id,
   * or every later PATCH answered 503). A run is wedged when an update it accepted (a create or a
   * transition) has had no answer for over `stuckForS` seconds: a healthy write answers in
   * milliseconds. Such a run is terminated; nothing is lost, since the write it was stuck on was
   * never stored. Then reconcileOpen starts a run from the stored head of every open intent (a
   * wedged create has none: its id is free again). Not meant for a database outage, when writes
   * wait on purpose. Returns the event ids of the runs it ended and of those it restarted.
   */
  async repairWedged(opts: { stuckForS?: number } = {}): Promise<{ terminated: string[]; restarted: string[] }> {
    const stuckMs = (opts.stuckForS ?? LIMITS.intentWedgedAfterS) * 1000;
    const terminated: string[] = [];
    const query = `WorkflowType = '${intentWorkflow.name}' AND ExecutionStatus = 'Running' AND TaskQueue = '${this.opts.taskQueue}'`;
    for await (const wf of this.opts.client.workflow.list({ query })) {
      const handle = this.opts.client.workflow.getHandle(wf.workflowId, wf.runId);
      const since = oldestUnansweredUpdateMs(await handle.fetchHistory());
      if (since === undefined || Date.now() - since < stuckMs) continue;
      await handle.terminate(`timekeeper intents repair: an update had no answer for over ${stuckMs / 1000} s (a write retried forever)`);
      terminated.push(wf.workflowId.slice(intentWorkflowId('').length));
    }
    return { terminated, restarted: await this.reconcileOpen() };
  }

  /** Starts a run from the stored head when the intent's workflow is not running; whether it did. */
  private async restartIfGone(listed: IntentRow): Promise<boolean> {
    const handle = this.opts.client.workflow.getHandle(intentWorkflowId(listed.event_id));
    const running = await handle.describe().then(
      (d) => d.status.name === 'RUNNING',
      (err: unknown) => {
        if (err instanceof WorkflowNotFoundError) return false;
        throw err;
      },
    );
    if (running) return false;
    // Read again: a PATCH may have moved it (through a run of its own) since the page was read,
    // and a run must start from the head as it is now.
    const row = await this.store.get(listed.event_id);
    if (!row || row.head_seq !== listed.head_seq) return false;
    await this.opts.client.workflow.start(intentWorkflow, await this.resumeOptions(row));
    return true;
  }

  // ---- internals ----------------------------------------------------------------------

  /** A new run from the stored head; concurrent callers converge on one run (USE_EXISTING). */
  private async resumeAndTransition(row: IntentRow, req: TransitionRequest): Promise<StoredTransition> {
    const start = new WithStartWorkflowOperation(intentWorkflow, await this.resumeOptions(row));
    return this.opts.client.workflow.executeUpdateWithStart(transitionUpdate, { args: [req], startWorkflowOperation: start });
  }

  /** Start options of a run that carries on from the stored head. */
  private async resumeOptions(row: IntentRow): Promise<WorkflowStartOptions<typeof intentWorkflow> & { workflowIdConflictPolicy: 'USE_EXISTING' }> {
    const header: IntentHeader = {
      event_id: row.event_id,
      domain: row.domain,
      action: row.action,
      tags: row.tags,
      session_id: row.session_id,
      dedupe_key: row.dedupe_key,
      ttl_s: row.ttl_s,
    };
    const settings: IntentSettings = { header, retentionS: this.opts.retentionS, databaseInstance: await this.databaseInstance() };
    return {
      workflowId: intentWorkflowId(row.event_id),
      taskQueue: this.opts.taskQueue,
      args: [
        {
          settings,
          carried: {
            head: { seq: row.head_seq, hash: row.head_hash, ts: row.updated_ts, status: row.status },
            openedAtMs: row.updated_ts,
            blocked: row.status === IntentStatus.Blocked ? blockedInfo(row.last_data) : null,
            blockedAtMs: row.updated_ts,
            run: 1,
          },
        },
      ],
      workflowIdConflictPolicy: 'USE_EXISTING',
      // The intent outlives its workflow runs: a closed run may be followed by a new one.
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      typedSearchAttributes: searchAttributes(header, row.status),
    };
  }

  private withDeadline<T>(fn: () => Promise<T>): Promise<T> {
    return this.opts.client.withDeadline(Date.now() + this.opts.writeTimeoutMs, fn);
  }

  private classify(err: unknown, eventId: string): DomainError {
    const refusal = domainErrorOf(err);
    if (refusal) return refusal;
    if (err instanceof DomainError) return err;
    if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError || isDeadline(err)) {
      return new DomainError(
        ErrorCode.Unavailable,
        `intent ${eventId}: no worker answered within ${this.opts.writeTimeoutMs} ms; the write may still be applied: check GET /api/events/${eventId} before retrying`,
      );
    }
    if (err instanceof WorkflowNotFoundError) return new DomainError(ErrorCode.Unavailable, `intent ${eventId}: its workflow closed meanwhile; retry`);
    return new DomainError(ErrorCode.Unavailable, `the intent service could not complete the request: ${(err as Error).message}`);
  }
}

/** When the oldest update the run accepted and has not answered was accepted (epoch ms), if there is one. */
function oldestUnansweredUpdateMs(history: temporal.api.history.v1.IHistory): number | undefined {
  const open = new Map<string, number>();
  for (const e of history.events ?? []) {
    const accepted = e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.meta?.updateId;
    if (accepted && e.eventTime) open.set(accepted, tsToMs(e.eventTime));
    const completed = e.workflowExecutionUpdateCompletedEventAttributes?.meta?.updateId;
    if (completed) open.delete(completed);
  }
  return open.size ? Math.min(...open.values()) : undefined;
}

function searchAttributes(h: IntentHeader, status: IntentStatus): TypedSearchAttributes {
  return new TypedSearchAttributes([
    { key: IntentIdKey, value: h.event_id },
    { key: DomainKey, value: h.domain },
    { key: IntentStatusKey, value: status },
  ]);
}

/** The current HTTP request's id (lib/log.ts), handed into the workflow input for the writer's logs. */
function requestIdPart(): { requestId?: string } {
  const requestId = currentRequestId();
  return requestId ? { requestId } : {};
}
