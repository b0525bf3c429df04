/**
 * All SQL for intents: the writer's transaction (locks, head, dedupe lookup, inserts) and
 * every read of the OML routes (one intent with its transitions, lists, pending, stats,
 * verify). The writer activity and the API's read paths both come here; nothing above this
 * module writes SQL for intents.
 */
import type { Pool, PoolClient } from 'pg';
import { inTransaction, TxContext } from '../db';
import type { JsonValue } from '../domain/canonical-json';
import { canonicalize } from '../domain/canonical-json';
import { IntentStatus, intentChainId, type IntentHead, type IntentHeader, type JsonObject, type StoredTransition, type TransitionContent } from '../domain/intents';
import { LIMITS } from '../domain/limits';
import { ChainVerifier, transitionChainEvent, type VerifyResult } from '../hash-chain';
import { NOW_MS, literals } from './literals';
import { addBoundsCondition, Where } from './where';
import type { AgentBounds } from '../domain/agent-bounds';

const TRANSITION_COLUMNS = 'event_id, seq, transition_id, ts, content, prev_hash, hash';

function rowToTransition(r: Record<string, unknown>): StoredTransition {
  return {
    event_id: r.event_id as string,
    seq: Number(r.seq),
    transition_id: r.transition_id as string,
    ts: Number(r.ts),
    content: r.content as TransitionContent,
    prev_hash: (r.prev_hash as string | null) ?? null,
    hash: r.hash as string,
  };
}

/** An intent as the reads see it: its header, its first and last transition, and its lifecycle. */
export interface IntentRow extends IntentHeader {
  created_ts: number;
  workflow_id: string;
  status: IntentStatus;
  updated_ts: number;
  head_seq: number;
  head_hash: string;
  /** Data of the creating transition: what the work is. */
  data: JsonObject;
  /** Note and data of the last transition (the result when done, the error when blocked). */
  last_note: string | null;
  last_data: JsonObject;
  /** Every state in order, e.g. requested, in-progress, done. */
  lifecycle: IntentStatus[];
}

/**
 * The intents columns plus the lateral reads of the head, the first transition and the
 * lifecycle; `from` names the rows to describe (intents as `i`, possibly joined to more).
 */
const intentSelect = (from = 'intents i') => `
  SELECT i.event_id, i.domain, i.action, i.tags, i.session_id, i.dedupe_key, i.ttl_s, i.created_ts, i.workflow_id, i.agent_id,
         h.status, h.ts AS updated_ts, h.seq AS head_seq, h.hash AS head_hash, h.content AS head_content,
         h.transition_id AS head_transition_id, h.prev_hash AS head_prev_hash,
         f.content AS first_content, l.lifecycle
    FROM ${from}
    JOIN LATERAL (SELECT seq, hash, ts, status, content, transition_id, prev_hash FROM intent_transitions t
                   WHERE t.event_id = i.event_id ORDER BY seq DESC LIMIT 1) h ON true
    JOIN LATERAL (SELECT content FROM intent_transitions t WHERE t.event_id = i.event_id AND t.seq = 1) f ON true
    JOIN LATERAL (SELECT array_agg(status ORDER BY seq) AS lifecycle FROM intent_transitions t
                   WHERE t.event_id = i.event_id) l ON true`;
const INTENT_SELECT = intentSelect();

function rowToIntent(r: Record<string, unknown>): IntentRow {
  const head = r.head_content as TransitionContent;
  const first = r.first_content as TransitionContent;
  return {
    event_id: r.event_id as string,
    domain: r.domain as string,
    action: r.action as string,
    tags: r.tags as string[],
    session_id: (r.session_id as string | null) ?? null,
    dedupe_key: (r.dedupe_key as string | null) ?? null,
    ttl_s: Number(r.ttl_s),
    agent_id: (r.agent_id as string | null) ?? null,
    created_ts: Number(r.created_ts),
    workflow_id: r.workflow_id as string,
    status: r.status as IntentStatus,
    updated_ts: Number(r.updated_ts),
    head_seq: Number(r.head_seq),
    head_hash: r.head_hash as string,
    data: first.data,
    last_note: head.note,
    last_data: head.data,
    lifecycle: r.lifecycle as IntentStatus[],
  };
}

/** The head transition, as transitionAt(…, 'head') reads it, from the same row of intentSelect. */
function headOfRow(r: Record<string, unknown>): StoredTransition {
  return rowToTransition({
    event_id: r.event_id,
    seq: r.head_seq,
    transition_id: r.head_transition_id,
    ts: r.updated_ts,
    content: r.head_content,
    prev_hash: r.head_prev_hash,
    hash: r.head_hash,
  });
}

/**
 * The intent exactly as a read right after its creation shows it, from the first transition
 * alone (its content carries the header; the intents row's created_ts is that row's ts, the
 * writer stores both in one statement): the create answers without reading it back.
 */
export function intentOfCreation(t: StoredTransition, workflowId: string): IntentRow {
  const h = t.content.intent;
  if (t.seq !== 1 || !h) throw new Error(`intent ${t.event_id}: seq ${t.seq} is not a creating transition`);
  return {
    event_id: t.event_id,
    ...h,
    created_ts: t.ts,
    workflow_id: workflowId,
    status: t.content.to,
    updated_ts: t.ts,
    head_seq: t.seq,
    head_hash: t.hash,
    data: t.content.data,
    last_note: t.content.note,
    last_data: t.content.data,
    lifecycle: [t.content.to],
  };
}

/**
 * The intent as `t` left it, from the row read just before `t` was written and `t` itself:
 * a PATCH answers from its own write, with no read-back that could fail after it (issue 16).
 * Exact when `t` directly follows that row's head (`follows`); otherwise another transition
 * came in between and the lifecycle misses it.
 */
export const follows = (before: IntentRow, t: StoredTransition): boolean => t.event_id === before.event_id && t.seq === before.head_seq + 1;

export function intentAfter(before: IntentRow, t: StoredTransition): IntentRow {
  return {
    ...before,
    status: t.content.to,
    updated_ts: t.ts,
    head_seq: t.seq,
    head_hash: t.hash,
    last_note: t.content.note,
    last_data: t.content.data,
    lifecycle: [...before.lifecycle, t.content.to],
  };
}

const likePattern = (s: string) => '%' + s.replace(/[\\%_]/g, (c) => '\\' + c) + '%';

export interface IntentFilter {
  domain?: string;
  status?: IntentStatus;
  /** All must be present. */
  tags?: string[];
  /** Case-insensitive substring of the action or of any transition's note. */
  search?: string;
  /** Only intents of agents within these bounds (a bound API key's list). */
  bounds?: AgentBounds;
  limit: number;
  offset: number;
  /** Keyset pagination: only intents after this one, newest first (created_ts, event_id). */
  before?: IntentKey;
}

export interface PendingFilter {
  domain?: string;
  /** Only intents created at least this many seconds ago. */
  olderThanS?: number;
  /** Only intents of agents within these bounds (a bound API key's list). */
  bounds?: AgentBounds;
  limit: number;
  /** Keyset pagination: only intents after this one in the answer order (created_ts, event_id). */
  after?: IntentKey;
}

/** An intent's place in the oldest-first order of pending and awaitingRetry: the keyset of their pages. */
export interface IntentKey {
  createdTs: number;
  eventId: string;
}

/** The key to pass as `after` for the page that follows `rows` (undefined when there are none). */
export function keyAfter(rows: IntentRow[]): IntentKey | undefined {
  const last = rows[rows.length - 1];
  return last ? { createdTs: last.created_ts, eventId: last.event_id } : undefined;
}

export interface IntentStats {
  total: number;
  pending: number;
  by_status: Record<string, number>;
  by_domain: Record<string, number>;
}

/** What the writer needs to decide, read under the intent's lock. */
export interface IntentWriteState {
  head: IntentHead | null;
  /** The database clock. */
  nowMs: number;
  /** The stored transition with the request's transition id (an earlier attempt of it), if any. */
  prior: StoredTransition | undefined;
  /** Whether an intents row exists for the event id (a create must find none). */
  headerExists: boolean;
  /** With a dedupe key: intents holding it whose current state is done, requested or in-progress (done first, then oldest). */
  dedupeHolders: DedupeHolder[];
}

export interface DedupeHolder {
  event_id: string;
  status: IntentStatus;
  result: JsonObject;
}

/** Intents holding a dedupe key (an SQL expression: a placeholder or a literal) whose current state is done, requested or in-progress: done first, then oldest. */
const holdersSql = (key: string) => `SELECT i.event_id, h.status, h.content->'data' AS result
     FROM intents i
     JOIN LATERAL (SELECT status, content FROM intent_transitions t WHERE t.event_id = i.event_id ORDER BY seq DESC LIMIT 1) h ON true
    WHERE i.dedupe_key = ${key} AND h.status IN ('done', 'requested', 'in-progress')
    ORDER BY (h.status = 'done') DESC, i.created_ts, i.event_id`;

const toHolder = (h: Record<string, unknown>): DedupeHolder => ({ event_id: h.event_id as string, status: h.status as IntentStatus, result: h.result as JsonObject });

/** What the writer looks up, under the locks it takes first (the dedupe key's, then the intent's). */
export interface IntentLookup {
  eventId: string;
  transitionId: string;
  /** A create's dedupe key: serialises creates that share it, and finds its holders. */
  dedupeKey?: string | null;
}

/**
 * The locks and the lookups, as literal statements sent with BEGIN. Each statement of a
 * simple-protocol string takes its own snapshot (READ COMMITTED), so the reads after the lock
 * statements see everything the lock's previous holder committed.
 */
function lookupSql(db: PoolClient, l: IntentLookup): string {
  const lit = literals(db);
  const id = lit.text(l.eventId);
  const key = l.dedupeKey ? lit.text(l.dedupeKey) : undefined;
  return [
    ...(l.dedupeKey ? [lit.xactLock(`intent-dedupe:${l.dedupeKey}`)] : []),
    lit.xactLock(`intent:${l.eventId}`),
    `SELECT ${NOW_MS} AS now, h.seq, h.hash, h.ts, h.status,
            EXISTS (SELECT 1 FROM intents WHERE event_id = ${id}) AS header_exists,
            to_jsonb(p) AS prior
       FROM (SELECT 1) one
       LEFT JOIN LATERAL (SELECT seq, hash, ts, status FROM intent_transitions WHERE event_id = ${id} ORDER BY seq DESC LIMIT 1) h ON true
       LEFT JOIN LATERAL (SELECT ${TRANSITION_COLUMNS} FROM intent_transitions WHERE transition_id = ${lit.text(l.transitionId)}::uuid) p ON true`,
    ...(key ? [holdersSql(key)] : []),
  ].join('; ');
}

function writeStateOf(l: IntentLookup, opened: { rows: Record<string, unknown>[] }[]): IntentWriteState {
  const results = l.dedupeKey ? opened.slice(2) : opened.slice(1);
  const r = results[0].rows[0];
  return {
    nowMs: Number(r.now),
    head: r.seq == null ? null : { seq: Number(r.seq), hash: r.hash as string, ts: Number(r.ts), status: r.status as IntentStatus },
    prior: r.prior ? rowToTransition(r.prior as Record<string, unknown>) : undefined,
    headerExists: r.header_exists as boolean,
    dedupeHolders: (results[1]?.rows ?? []).map(toHolder),
  };
}

/** The writer's inserts; each is sent with COMMIT (one round trip with it). */
export class IntentWriteTx {
  constructor(
    private readonly db: PoolClient,
    private readonly ctx: TxContext,
  ) {}

  private intentValues(h: IntentHeader, workflowId: string, createdTs: number): string {
    const l = literals(this.db);
    return `(${[l.text(h.event_id), l.text(h.domain), l.text(h.action), l.array(h.tags, 'text'), l.text(h.session_id), l.text(h.dedupe_key), l.int(h.ttl_s), l.int(createdTs), l.text(workflowId), l.text(h.agent_id ?? null)].join(', ')})`;
  }

  private transitionValues(t: StoredTransition, writer: { workflowId: string; runId: string }): string {
    const l = literals(this.db);
    return `(${[l.text(t.event_id), l.int(t.seq), `${l.text(t.transition_id)}::uuid`, l.int(t.ts), l.text(t.content.to), l.jsonb(t.content), l.text(t.prev_hash), l.text(t.hash), l.text(writer.workflowId), l.text(writer.runId)].join(', ')})`;
  }

  insertIntent(h: IntentHeader, workflowId: string, createdTs: number): void {
    this.ctx.commitWith(`${INTENT_INSERT} ${this.intentValues(h, workflowId, createdTs)}`);
  }

  insertTransition(t: StoredTransition, writer: { workflowId: string; runId: string }): void {
    this.ctx.commitWith(`${TRANSITION_INSERT} ${this.transitionValues(t, writer)}`);
  }

  /** The intents row and its first transition in one statement (the chain guard and intent_heads triggers see both). */
  insertCreated(h: IntentHeader, t: StoredTransition, writer: { workflowId: string; runId: string }): void {
    this.ctx.commitWith(`WITH created AS (${INTENT_INSERT} ${this.intentValues(h, writer.workflowId, t.ts)}) ${TRANSITION_INSERT} ${this.transitionValues(t, writer)}`);
  }
}

const INTENT_INSERT = 'INSERT INTO intents (event_id, domain, action, tags, session_id, dedupe_key, ttl_s, created_ts, workflow_id, agent_id) VALUES';
const TRANSITION_INSERT = 'INSERT INTO intent_transitions (event_id, seq, transition_id, ts, status, content, prev_hash, hash, workflow_id, run_id) VALUES';

export class IntentStore {
  constructor(private readonly pool: Pool) {}

  /**
   * Runs `fn` in one transaction, with what `lookup` finds under the locks it takes. Two round
   * trips: BEGIN + locks + lookups, then the inserts + COMMIT.
   */
  write<T>(lookup: IntentLookup, fn: (tx: IntentWriteTx, state: IntentWriteState) => Promise<T>): Promise<T> {
    return inTransaction(
      this.pool,
      (db, ctx) => fn(new IntentWriteTx(db, ctx), writeStateOf(lookup, ctx.opened)),
      (db) => lookupSql(db, lookup),
    );
  }

  /**
   * Runs `fn` in one transaction holding the intent's lock, on a chain head the caller already
   * knows (the intent workflow's), without looking anything up: the first round trip is BEGIN,
   * the lock and the database clock only (the lookup is half the database's CPU of a write, as
   * for sessions: docs/operations.md). The table stands in for it: a head that is not the stored
   * one fails the guard trigger, a transition id stored before fails its unique index, and the
   * transaction rolls back (`isLookupNeeded`).
   */
  writeOnHead<T>(eventId: string, fn: (tx: IntentWriteTx, nowMs: number) => Promise<T>): Promise<T> {
    return inTransaction(
      this.pool,
      (db, ctx) => fn(new IntentWriteTx(db, ctx), Number(ctx.opened[0].rows[0].now)),
      (db) => `${literals(db).xactLock(`intent:${eventId}`)}, ${NOW_MS} AS now`,
    );
  }

  /** Inserts in one transaction without the writer's locks and lookups: the bench's seeding of rows no workflow owns. */
  seed<T>(fn: (tx: IntentWriteTx) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, (db, ctx) => fn(new IntentWriteTx(db, ctx)));
  }

  async get(eventId: string): Promise<IntentRow | null> {
    return (await this.getWithHead(eventId))?.intent ?? null;
  }

  /**
   * The intent and its head transition, in one read (a PATCH checks both before it sends).
   * A named statement, like the other reads on a create's or a PATCH's path: planning the three
   * lateral reads cost PostgreSQL more than running them (0.56 against 0.20 ms a call, unprepared
   * and prepared, docs/operations.md), and a named statement is planned once per connection.
   */
  async getWithHead(eventId: string): Promise<{ intent: IntentRow; head: StoredTransition } | null> {
    const { rows } = await this.pool.query({ name: 'intent-get', text: `${INTENT_SELECT} WHERE i.event_id = $1`, values: [eventId] });
    return rows[0] ? { intent: rowToIntent(rows[0]), head: headOfRow(rows[0]) } : null;
  }

  /** Whether an intent with this event id is stored (one index probe; get() reads its whole state). */
  async exists(eventId: string): Promise<boolean> {
    const { rowCount } = await this.pool.query('SELECT 1 FROM intents WHERE event_id = $1', [eventId]);
    return (rowCount ?? 0) > 0;
  }

  /** The intent that holds a dedupe key against a new create (done first, then open ones), if any. */
  async dedupeHolder(key: string): Promise<DedupeHolder | undefined> {
    const { rows } = await this.pool.query(holdersSql('$1'), [key]);
    return rows[0] ? toHolder(rows[0]) : undefined;
  }

  /** The stored transition with this id (a request's idempotent identity), if any. */
  async transitionById(transitionId: string): Promise<StoredTransition | undefined> {
    const { rows } = await this.pool.query({ name: 'intent-transition-by-id', text: `SELECT ${TRANSITION_COLUMNS} FROM intent_transitions WHERE transition_id = $1::uuid`, values: [transitionId] });
    return rows[0] ? rowToTransition(rows[0]) : undefined;
  }

  /** An intent's latest transition (its head), or its first (the creation), if stored. */
  async transitionAt(eventId: string, which: 'head' | 'creation'): Promise<StoredTransition | undefined> {
    const order = which === 'head' ? 'ORDER BY seq DESC LIMIT 1' : 'AND seq = 1';
    const { rows } = await this.pool.query({ name: `intent-transition-${which}`, text: `SELECT ${TRANSITION_COLUMNS} FROM intent_transitions WHERE event_id = $1 ${order}`, values: [eventId] });
    return rows[0] ? rowToTransition(rows[0]) : undefined;
  }

  async transitions(eventId: string): Promise<StoredTransition[]> {
    const { rows } = await this.pool.query(`SELECT ${TRANSITION_COLUMNS} FROM intent_transitions WHERE event_id = $1 ORDER BY seq`, [eventId]);
    return rows.map(rowToTransition);
  }

  /** Intents with an open head (requested or in-progress), oldest first. */
  async pending(f: PendingFilter): Promise<IntentRow[]> {
    // intent_heads (schema/006, 009): the latest transition's status per intent, kept by a
    // trigger. Its partial index holds the open heads in answer order (created_ts, event_id),
    // so this walks as many index entries as it answers and stops at the LIMIT.
    return this.headsPage(`p.status IN ('requested', 'in-progress')`, f);
  }

  /**
   * Blocked intents waiting for an automatic retry (data.retry true and a retry_after), oldest
   * first: intent_heads.awaiting_retry (schema/010) and its partial index, in the same order
   * as pending, so a page reads as many index entries as it answers.
   */
  async awaitingRetry(f: Pick<PendingFilter, 'domain' | 'limit' | 'after'>): Promise<IntentRow[]> {
    return this.headsPage('p.awaiting_retry', f);
  }

  /** One page of intent_heads rows `p` that match `condition`, in (created_ts, event_id) order. */
  private async headsPage(condition: string, f: PendingFilter): Promise<IntentRow[]> {
    const w = new Where();
    w.add(condition);
    if (f.domain) w.add('i.domain = ?', f.domain);
    addBoundsCondition(w, 'i.agent_id', f.bounds);
    if (f.olderThanS !== undefined) w.add(`p.created_ts <= ${NOW_MS} - ?::bigint * 1000`, f.olderThanS);
    if (f.after) w.add('(p.created_ts, p.event_id) > (?::bigint, ?::text)', f.after.createdTs, f.after.eventId);
    const limit = w.param(f.limit);
    const { rows } = await this.pool.query(
      `${intentSelect('intent_heads p JOIN intents i ON i.event_id = p.event_id')} ${w.sql} ORDER BY p.created_ts, p.event_id LIMIT ${limit}`,
      w.params,
    );
    return rows.map(rowToIntent);
  }

  /** Intents whose intent_heads row disagrees with their last transition (schema/007); none when all is well. */
  async checkHeads(): Promise<{ event_id: string; stored: { seq: number; status: string } | null; expected: { seq: number; status: string } | null }[]> {
    const { rows } = await this.pool.query('SELECT * FROM intent_heads_check() ORDER BY event_id');
    const pair = (seq: unknown, status: unknown) => (seq == null ? null : { seq: Number(seq), status: status as string });
    return rows.map((r) => ({ event_id: r.event_id as string, stored: pair(r.stored_seq, r.stored_status), expected: pair(r.expected_seq, r.expected_status) }));
  }

  /** Rewrites intent_heads from intent_transitions where they disagree; returns how many rows changed. */
  async rebuildHeads(): Promise<number> {
    const { rows } = await this.pool.query('SELECT intent_heads_rebuild() AS n');
    return Number(rows[0].n);
  }

  /** A page of intents, newest first, and the number matching the filter. */
  async list(f: IntentFilter): Promise<{ rows: IntentRow[]; total: number }> {
    const w = new Where();
    if (f.domain) w.add('i.domain = ?', f.domain);
    addBoundsCondition(w, 'i.agent_id', f.bounds);
    if (f.status) w.add('h.status = ?', f.status);
    if (f.tags?.length) w.add('i.tags @> ?::text[]', f.tags);
    if (f.search) {
      const p = w.param(likePattern(f.search));
      w.add(`(i.action ILIKE ${p} OR EXISTS (SELECT 1 FROM intent_transitions s WHERE s.event_id = i.event_id AND s.content->>'note' ILIKE ${p}))`);
    }
    // The total counts every match, as without a cursor; the cursor only says where this page starts.
    const count = await this.pool.query(`SELECT count(*)::int AS n FROM (${INTENT_SELECT} ${w.sql}) x`, w.params);
    if (f.before) w.add('(i.created_ts, i.event_id) < (?, ?)', f.before.createdTs, f.before.eventId);
    const where = w.sql;
    const limit = w.param(f.limit);
    const offset = w.param(f.offset);
    const { rows } = await this.pool.query(`${INTENT_SELECT} ${where} ORDER BY i.created_ts DESC, i.event_id DESC LIMIT ${limit} OFFSET ${offset}`, w.params);
    return { rows: rows.map(rowToIntent), total: count.rows[0].n as number };
  }

  /** Counts by status and domain; with bounds, of the intents of those agents only. */
  async stats(bounds?: AgentBounds): Promise<IntentStats> {
    const w = new Where();
    addBoundsCondition(w, 'i.agent_id', bounds);
    const { rows } = await this.pool.query(
      `SELECT i.domain, h.status, count(*)::int AS n
         FROM intents i
         JOIN LATERAL (SELECT status FROM intent_transitions t WHERE t.event_id = i.event_id ORDER BY seq DESC LIMIT 1) h ON true
        ${w.sql}
        GROUP BY i.domain, h.status ORDER BY i.domain, h.status`,
      w.params,
    );
    const out: IntentStats = { total: 0, pending: 0, by_status: { requested: 0, 'in-progress': 0, done: 0, blocked: 0 }, by_domain: {} };
    for (const r of rows) {
      out.total += r.n;
      out.by_status[r.status] = (out.by_status[r.status] ?? 0) + r.n;
      out.by_domain[r.domain] = (out.by_domain[r.domain] ?? 0) + r.n;
      if (r.status === IntentStatus.Requested || r.status === IntentStatus.InProgress) out.pending += r.n;
    }
    return out;
  }

  /**
   * Recomputes an intent's chain with the timeline's verifier, and checks that the intents
   * row still says what the first transition's hashed content recorded.
   */
  async verify(eventId: string): Promise<VerifyResult & { header_ok: boolean }> {
    const { rows } = await this.pool.query('SELECT domain, action, tags, session_id, dedupe_key, ttl_s, agent_id FROM intents WHERE event_id = $1', [eventId]);
    const verifier = new ChainVerifier(intentChainId(eventId));
    let first: StoredTransition | undefined;
    let afterSeq = 0;
    for (;;) {
      const page = await this.pool.query(`SELECT ${TRANSITION_COLUMNS} FROM intent_transitions WHERE event_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, [
        eventId,
        afterSeq,
        LIMITS.verifyPageSize,
      ]);
      let broken = false;
      for (const row of page.rows) {
        const t = rowToTransition(row);
        if (t.seq === 1) first = t;
        if (verifier.push(transitionChainEvent(t))) {
          broken = true;
          break;
        }
      }
      if (broken || page.rows.length < LIMITS.verifyPageSize) break;
      afterSeq = Number(page.rows[page.rows.length - 1].seq);
    }
    const h = rows[0] as Record<string, JsonValue> | undefined;
    const header = h
      ? { domain: h.domain, action: h.action, tags: h.tags, session_id: h.session_id, dedupe_key: h.dedupe_key, ttl_s: Number(h.ttl_s), ...(h.agent_id ? { agent_id: h.agent_id } : {}) }
      : null;
    const header_ok = !!first?.content.intent && !!header && canonicalize(first.content.intent as unknown as JsonValue) === canonicalize(header as JsonValue);
    return { ...verifier.result(), header_ok };
  }
}
