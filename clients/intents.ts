/**
 * The typed client for intent workflows: the one way to create, transition and inspect an
 * intent. Creates use update-with-start (`intent/<event_id>`, search attributes IntentId,
 * Domain, IntentStatus); a transition of an intent whose workflow has closed (done, or
 * retention over) is checked against the stored state and, when legal, goes through a new
 * run started from the stored head. Every failure comes out as a DomainError.
 *
 * Creates and transitions are idempotent per request (issue 16: a lost answer must show up on
 * retry as the success it was, not as 409): the same create again, or a transition to the
 * state its intent is already in with the same note and data, answers the stored transition
 * (`deduplicated`) and writes nothing; with an idempotency key the transition id is derived
 * from (event id, key), so a retry finds its own transition even after later ones, through
 * the writer's lookup by transition id as well as here, and the same key with a different
 * body is refused (409 idempotency_key_reused).
 */
import { createHash, randomUUID } from 'node:crypto';
import { currentRequestId } from '../lib/log';
import { Client, WithStartWorkflowOperation, WorkflowNotFoundError, WorkflowUpdateRPCTimeoutOrCancelledError, type WorkflowStartOptions } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { tsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import type { Pool } from 'pg';
import type { Config } from '../lib/config';
import { isConnectionError } from '../lib/db';
import { DomainError, ErrorCode } from '../lib/domain/errors';
import {
  Actor,
  IntentStatus,
  blockedInfo,
  headerContent,
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
import { DomainKey, IntentIdKey, IntentStatusKey } from '../lib/domain/platform/search-attributes';
import { databaseInstanceReader } from '../lib/store/instance';
import { IntentStore, follows, intentAfter, keyAfter, type IntentKey, type IntentRow } from '../lib/store/intents';
import { canonicalize } from '../lib/domain/canonical-json';
import { SessionStore } from '../lib/store/sessions';
import { INTENT_PATCHES, intentWorkflow } from '../workflows/intents/workflow';
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
  /** Fixed into each intent's run: whether it keeps the `IntentStatus` search attribute current (Config.intentStatusSearchAttribute). */
  statusSearchAttribute?: boolean;
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
  /** The owner agent (a bound API key's own, or the one the request names within its bounds). */
  agentId?: string;
}

export interface TransitionInput {
  status: IntentStatus;
  note?: string;
  data?: JsonObject;
}

export interface RequestOptions {
  /** The client's Idempotency-Key: the request's identity (scoped to the intent), so its retry is answered, not repeated. */
  idempotencyKey?: string;
}

/** What a create or transition answers: the stored transition, and whether it was stored by an earlier request. */
export interface IntentWrite {
  transition: StoredTransition;
  deduplicated: boolean;
}

/** A transition's answer also carries the intent as that transition left it (or, deduplicated, as it is now). */
export interface IntentTransitionWrite extends IntentWrite {
  intent: IntentRow;
}

export class IntentClient {
  private readonly store: IntentStore;
  private readonly sessions: SessionStore;
  private readonly databaseInstance: () => Promise<string>;
  /** Keyed requests being written by this process, by transition id (shared()). */
  private readonly inFlight = new Map<string, Promise<IntentWrite>>();
  private waitingTwins = 0;

  /** How many keyed requests wait for a twin in flight in this process (shared()), for tests and diagnostics. */
  get retriesWaitingForTwins(): number {
    return this.waitingTwins;
  }

  /** The client as the configuration sets it up (the API, the worker process's reconcile sweep, tests). */
  static fromConfig(
    client: Client,
    pool: Pool,
    config: Pick<Config, 'taskQueue' | 'writeTimeoutMs' | 'intentDefaultTtlS' | 'intentDomainTtls' | 'intentRetentionS' | 'intentStatusSearchAttribute'>,
  ): IntentClient {
    return new IntentClient({
      client,
      pool,
      taskQueue: config.taskQueue,
      writeTimeoutMs: config.writeTimeoutMs,
      defaultTtlS: config.intentDefaultTtlS,
      domainTtls: config.intentDomainTtls,
      retentionS: config.intentRetentionS,
      statusSearchAttribute: config.intentStatusSearchAttribute,
    });
  }

  /** Whether the runs this client starts keep IntentStatus current (off unless configured). */
  private readonly statusSearchAttribute: boolean;

  constructor(private readonly opts: IntentClientOptions) {
    this.statusSearchAttribute = opts.statusSearchAttribute ?? false;
    this.store = new IntentStore(opts.pool);
    this.sessions = new SessionStore(opts.pool);
    this.databaseInstance = databaseInstanceReader(opts.pool);
  }

  /** The time-to-live an intent of this domain gets when its create names none. */
  ttlFor(domain: string, ttlS?: number): number {
    return ttlS ?? this.opts.domainTtls[domain] ?? this.opts.defaultTtlS;
  }

  /** Creates the intent's workflow and waits until its first transition is stored. */
  async create(input: CreateIntentInput, opts: RequestOptions = {}): Promise<StoredTransition> {
    return (await this.createOnce(input, opts)).transition;
  }

  /** create, answering a repeat of a stored create with that create's transition (`deduplicated`). */
  async createOnce(input: CreateIntentInput, opts: RequestOptions = {}): Promise<IntentWrite> {
    if (opts.idempotencyKey === undefined) return this.createNow(input, randomUUID());
    const transitionId = requestTransitionId(input.eventId, 'create', opts.idempotencyKey);
    return this.shared(transitionId, () => this.createNow(input, transitionId), (t) => sameCreate(t, this.headerOf(input), this.requestOf(transitionId, input)));
  }

  private requestOf(transitionId: string, input: { status?: IntentStatus; data?: JsonObject; note?: string }): TransitionRequest {
    return { transitionId, to: input.status ?? IntentStatus.Requested, data: input.data ?? {}, ...(input.note !== undefined ? { note: input.note } : {}), ...requestIdPart() };
  }

  private headerOf(input: CreateIntentInput): IntentHeader {
    return {
      event_id: input.eventId,
      domain: input.domain,
      action: input.action,
      tags: input.tags ?? [],
      session_id: input.sessionId ?? null,
      dedupe_key: input.dedupeKey ?? null,
      ttl_s: this.ttlFor(input.domain, input.ttlS),
      ...(input.agentId ? { agent_id: input.agentId } : {}),
    };
  }

  /**
   * A keyed request (an Idempotency-Key) whose twin (the same key, so the same transition id)
   * is in flight in this process waits for the twin's answer and answers it, deduplicated,
   * if its body asks for the same (`same` throws otherwise: 409). Without this a retry sent
   * while the first attempt was still being written went to the workflow too, was answered
   * the stored transition and said deduplicated: false (issue 16). A twin that failed leaves
   * the retry to make its own attempt.
   */
  private async shared<T extends IntentWrite>(transitionId: string, run: () => Promise<T>, same: (t: StoredTransition) => StoredTransition): Promise<T> {
    const twin = this.inFlight.get(transitionId) as Promise<T> | undefined;
    if (twin) {
      this.waitingTwins++;
      const first = await twin.catch(() => undefined).finally(() => this.waitingTwins--);
      if (first) return { ...first, transition: same(first.transition), deduplicated: true };
    }
    const p = run();
    this.inFlight.set(transitionId, p);
    try {
      return await p;
    } finally {
      if (this.inFlight.get(transitionId) === p) this.inFlight.delete(transitionId);
    }
  }

  private async createNow(input: CreateIntentInput, transitionId: string): Promise<IntentWrite> {
    const req = this.requestOf(transitionId, input);
    const problem = transitionRequestProblem(req);
    if (problem) throw problem;
    const header = this.headerOf(input);
    const unstorable = headerProblem(header);
    if (unstorable) throw unstorable;
    // Fast refusals before a workflow is started; the writer checks all of them again under its locks.
    const stored = await beforeSending(this.store.transitionAt(input.eventId, 'creation'));
    if (stored) return { transition: sameCreate(stored, header, req), deduplicated: true };
    if (input.dedupeKey) {
      const holder = await beforeSending(this.store.dedupeHolder(input.dedupeKey));
      if (holder) throw intentErrors.duplicate(input.dedupeKey, holder);
    }
    if (input.sessionId && !(await beforeSending(this.sessions.getTimeline(input.sessionId)))) throw sessionErrors.notFound(input.sessionId);
    const settings: IntentSettings = { header, create: req, retentionS: this.opts.retentionS, databaseInstance: await beforeSending(this.databaseInstance()), statusSearchAttribute: this.statusSearchAttribute, patches: INTENT_PATCHES };
    const start = new WithStartWorkflowOperation(intentWorkflow, {
      workflowId: intentWorkflowId(input.eventId),
      taskQueue: this.opts.taskQueue,
      args: [{ settings }],
      workflowIdConflictPolicy: 'FAIL',
      // An event id names one intent forever (the store check above); only a run that failed before storing its first transition may start again.
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      workflowTaskTimeout: LIMITS.workflowTaskTimeoutMs,
      typedSearchAttributes: searchAttributes(header, this.statusSearchAttribute ? req.to : undefined),
    });
    let t: StoredTransition;
    try {
      t = await this.withDeadline(() => this.opts.client.workflow.executeUpdateWithStart(createdUpdate, { startWorkflowOperation: start }));
    } catch (err) {
      if (!isAlreadyStarted(err)) throw this.classify(err, input.eventId);
      // Another create of this event id got there first (a retry of this one, or a race): its creation answers, if it matches.
      const theirs = await this.creationOfRunning(input.eventId);
      if (!theirs) throw intentErrors.exists(input.eventId);
      return { transition: sameCreate(theirs, header, req), deduplicated: true };
    }
    return { transition: sameCreate(t, header, req), deduplicated: t.transition_id !== transitionId };
  }

  /** One transition through the intent's workflow (a new run when it has closed), checked against the current state. */
  async transition(eventId: string, input: TransitionInput, opts: RequestOptions = {}): Promise<StoredTransition> {
    return (await this.transitionOnce(eventId, input, opts)).transition;
  }

  /**
   * transition, answered from the write itself: the intent is read before the write (a 503
   * then means nothing was sent) and the answer is that row moved on by the stored
   * transition, so a database that fails right after the write cannot turn a stored
   * transition into an error. A repeat of a stored request answers it (`deduplicated`).
   */
  async transitionOnce(eventId: string, input: TransitionInput, opts: RequestOptions = {}): Promise<IntentTransitionWrite> {
    if (opts.idempotencyKey === undefined) return this.transitionNow(eventId, input, randomUUID(), false);
    const transitionId = requestTransitionId(eventId, 'transition', opts.idempotencyKey);
    return this.shared(transitionId, () => this.transitionNow(eventId, input, transitionId, true), (t) => sameTransition(t, eventId, this.requestOf(transitionId, input)));
  }

  private async transitionNow(eventId: string, input: TransitionInput, transitionId: string, keyed: boolean): Promise<IntentTransitionWrite> {
    const req = this.requestOf(transitionId, input);
    const problem = transitionRequestProblem(req);
    if (problem) throw problem;
    const [stored, mine] = await beforeSending(Promise.all([this.store.getWithHead(eventId), keyed ? this.store.transitionById(transitionId) : undefined]));
    if (!stored) throw intentErrors.notFound(eventId);
    const { intent: before, head } = stored;
    if (mine) return { transition: sameTransition(mine, eventId, req), intent: before, deduplicated: true };
    if (isRepeatOf(head, req)) return { transition: head, intent: before, deduplicated: true };
    const sent = await this.sendTransition(eventId, req);
    const t = sameTransition(sent.transition, eventId, req);
    // Another transition between the read and this one (a concurrent PATCH): read it back once, best
    // effort; if that fails, the read moved on by this transition (its lifecycle misses the other one).
    const intent = follows(before, t) ? intentAfter(before, t) : ((await this.store.get(eventId).catch(() => null)) ?? intentAfter(before, t));
    return { transition: t, deduplicated: sent.deduplicated, intent };
  }

  private async sendTransition(eventId: string, req: TransitionRequest): Promise<IntentWrite> {
    try {
      const t = await this.withDeadline(() => this.opts.client.workflow.getHandle(intentWorkflowId(eventId)).executeUpdate(transitionUpdate, { args: [req] }));
      return { transition: t, deduplicated: false };
    } catch (err) {
      const refusal = domainErrorOf(err);
      if (refusal) throw refusal;
      if (!workflowGone(err)) throw this.classify(err, eventId);
    }
    // No run took it. An earlier attempt of this request may have been stored meanwhile by a run
    // that has since closed (done): that is the answer, not a 409.
    const [stored, mine] = await beforeSending(Promise.all([this.store.getWithHead(eventId), this.store.transitionById(req.transitionId)]));
    if (!stored) throw intentErrors.notFound(eventId);
    const { intent: row, head } = stored;
    if (mine) return { transition: mine, deduplicated: true };
    if (isRepeatOf(head, req)) return { transition: head, deduplicated: true };
    const illegal = transitionProblem(eventId, row.status, req.to);
    if (illegal) throw illegal;
    try {
      return { transition: await this.withDeadline(() => this.resumeAndTransition(row, req)), deduplicated: false };
    } catch (err) {
      throw domainErrorOf(err) ?? this.classify(err, eventId);
    }
  }

  /** The creating transition of an intent another create is writing or has written (stored, else from its running workflow). */
  private async creationOfRunning(eventId: string): Promise<StoredTransition | undefined> {
    const stored = await this.store.transitionAt(eventId, 'creation');
    if (stored) return stored;
    try {
      return await this.withDeadline(() => this.opts.client.workflow.getHandle(intentWorkflowId(eventId)).executeUpdate(createdUpdate));
    } catch {
      return undefined;
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
      ...(row.agent_id ? { agent_id: row.agent_id } : {}),
    };
    const settings: IntentSettings = { header, retentionS: this.opts.retentionS, databaseInstance: await this.databaseInstance(), statusSearchAttribute: this.statusSearchAttribute, patches: INTENT_PATCHES };
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
      workflowTaskTimeout: LIMITS.workflowTaskTimeoutMs,
      typedSearchAttributes: searchAttributes(header, this.statusSearchAttribute ? row.status : undefined),
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

/**
 * The transition id of a request that carries an idempotency key: a UUID (version 8) from
 * SHA-256 over the kind, the event id and the key, so the same key names the same transition
 * on every retry and through every API process, and never another intent's.
 */
export function requestTransitionId(eventId: string, kind: 'create' | 'transition', key: string): string {
  const h = createHash('sha256').update(`timekeeper/intent-${kind}\n${eventId}\n${key}`, 'utf8').digest();
  h[6] = (h[6] & 0x0f) | 0x80;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/** A read before anything was sent: an outage there means nothing can be stored (`may_be_stored: false`). */
async function beforeSending<T>(read: Promise<T>): Promise<T> {
  try {
    return await read;
  } catch (err) {
    if (!isConnectionError(err)) throw err;
    throw new DomainError(ErrorCode.Unavailable, 'the event database is not reachable; nothing was sent or stored: retry shortly', [], { may_be_stored: false }).withRetryAfter(LIMITS.retryAfterS);
  }
}

const same = (a: unknown, b: unknown) => canonicalize(a as never) === canonicalize(b as never);

/** Whether a stored transition says what the request asks (target, note, data, by the agent). */
function asksFor(t: StoredTransition, req: TransitionRequest): boolean {
  return t.content.actor === Actor.Agent && t.content.to === req.to && t.content.note === (req.note ?? null) && same(t.content.data, req.data);
}

/**
 * A PATCH that repeats the one that wrote the intent's latest transition (no state may follow
 * itself, so it can only be a retry). The creating transition is a create's, not a PATCH's.
 */
const isRepeatOf = (head: StoredTransition, req: TransitionRequest) => head.seq > 1 && asksFor(head, req);

/** `t` when it is the transition the request asks for; else the request reused a key (or raced a different one). */
function sameTransition(t: StoredTransition, eventId: string, req: TransitionRequest): StoredTransition {
  if (t.transition_id !== req.transitionId || asksFor(t, req)) return t;
  throw keyReused(eventId, t);
}

/** `t` when it is the creation the request asks for (header, state, note, data); else 409. */
function sameCreate(t: StoredTransition, header: IntentHeader, req: TransitionRequest): StoredTransition {
  const h = t.content.intent;
  if (h && same(h, headerContent(header)) && asksFor(t, req)) return t;
  if (t.transition_id === req.transitionId) throw keyReused(header.event_id, t);
  throw intentErrors.exists(header.event_id);
}

const keyReused = (eventId: string, t: StoredTransition) =>
  new DomainError(
    ErrorCode.IdempotencyKeyReused,
    `intent ${eventId}: this Idempotency-Key was used for a different request (seq ${t.seq}, to ${t.content.to}); nothing was written`,
    [{ field: 'idempotency-key', reason: 'already used with a different body' }],
    { event_id: eventId, seq: t.seq },
  );

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

/** IntentId and Domain; IntentStatus only when the run keeps it current (a value set once would go stale). */
function searchAttributes(h: IntentHeader, status: IntentStatus | undefined): TypedSearchAttributes {
  return new TypedSearchAttributes([
    { key: IntentIdKey, value: h.event_id },
    { key: DomainKey, value: h.domain },
    ...(status === undefined ? [] : [{ key: IntentStatusKey, value: status }]),
  ]);
}

/** The current HTTP request's id (lib/log.ts), handed into the workflow input for the writer's logs. */
function requestIdPart(): { requestId?: string } {
  const requestId = currentRequestId();
  return requestId ? { requestId } : {};
}
