/** The OML-compatible intent routes: /api/events*, /api/stats, /api/health. */
import { Router, type Request } from 'express';
import { redact } from '../../lib/bootstrap';
import { postgresCheck, runChecks, temporalCheck } from '../../lib/platform/dependency-checks';
import type { JsonObject, StoredTransition } from '../../lib/domain/intents';
import { INTENT_ID_RE, intentErrors, intentWorkflowId } from '../../lib/domain/intents';
import { sessionErrors } from '../../lib/domain/sessions';
import type { SessionStore } from '../../lib/store/sessions';
import { DomainError, ErrorCode } from '../../lib/domain/errors';
import { LIMITS } from '../../lib/domain/limits';
import { IDEMPOTENCY_KEY_RE, IDEMPOTENCY_KEY_RULE } from '../../lib/domain/sessions';
import { encodeKeyset, parseCursor } from '../../lib/platform/keyset';
import { intentOfCreation, type IntentRow } from '../../lib/store/intents';
import { isMarkdown, listArtifacts as listArtifactFiles, readState, readText, renderMarkdown, resolveArtifact } from '../../lib/workspace';
import { mayAccess, ownerForCreate, principalOf, requireUnbound, type Principal } from '../auth';
import { jsonBody, parse, queryObject } from '../http';
import { route } from '../router';
import type { IntentDeps } from './deps';
import {
  createIntent,
  createIntentLog,
  getArtifact,
  getIntent,
  intentStats,
  listArtifacts,
  listIntents,
  omlHealth,
  pendingIntents,
  transitionIntent,
  verifyIntent,
  workspaceState,
} from './contract';

/** The optional Idempotency-Key request header (one value, the /v1 idempotency_key rule). */
function idempotencyKeyOf(req: Request): string | undefined {
  const v = req.headers['idempotency-key'];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !IDEMPOTENCY_KEY_RE.test(v)) throw DomainError.validation('Idempotency-Key', `header ${IDEMPOTENCY_KEY_RULE}, sent once`);
  return v;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function describeIntent(r: IntentRow) {
  return {
    event_id: r.event_id,
    domain: r.domain,
    action: r.action,
    status: r.status,
    tags: r.tags,
    data: r.data,
    note: r.last_note,
    last_data: r.last_data,
    session_id: r.session_id,
    dedupe_key: r.dedupe_key,
    ttl_s: r.ttl_s,
    agent_id: r.agent_id ?? null,
    created_at: iso(r.created_ts),
    updated_at: iso(r.updated_ts),
    created_ts: r.created_ts,
    updated_ts: r.updated_ts,
    lifecycle: r.lifecycle,
    lifecycle_text: r.lifecycle.join(' → '),
    seq: r.head_seq,
    hash: r.head_hash,
    workflow_id: r.workflow_id,
  };
}

export function describeTransition(t: StoredTransition, logIndex: number | null = null) {
  return {
    seq: t.seq,
    transition_id: t.transition_id,
    ts: t.ts,
    at: iso(t.ts),
    from: t.content.from,
    to: t.content.to,
    note: t.content.note,
    data: t.content.data,
    actor: t.content.actor,
    prev_hash: t.prev_hash,
    hash: t.hash,
    log_index: logIndex,
  };
}

/**
 * zod rebuilds records by assignment, which turns an own "__proto__" key into a prototype
 * change and silently drops it; once validated, keep the object exactly as the client sent it.
 */
const rawData = (req: Request, validated: unknown): JsonObject | undefined =>
  validated === undefined ? undefined : (req.body as { data: JsonObject }).data;

export function omlRouter({ intents, store, sessions, tlog, keys, pool, client, databaseUrl, readOnly, stateMdPath, artifactsDir, admission }: IntentDeps): Router {
  const r = Router();

  /** The intent, if it exists and is within the key's agent bounds; 404 alike otherwise. */
  async function mustExist(eventId: string, p: Principal): Promise<IntentRow> {
    const row = await store.get(eventId);
    if (!row || !mayAccess(p, row.agent_id)) throw intentErrors.notFound(eventId);
    return row;
  }
  const idOf = (req: Request) => parse(getIntent.params.shape.eventId, req.params.eventId, 'event_id');

  for (const c of [createIntent, createIntentLog]) {
    route(r, keys, c, async (req, res) => {
      const b = parse(c.body, jsonBody(req));
      const idempotencyKey = idempotencyKeyOf(req);
      const principal = principalOf(res);
      const agentId = ownerForCreate(principal, b.agent_id);
      // A linked session takes every transition into its chain: a bound key may link only its own sessions.
      if (b.session_id && principal.bounds) await sessionWithin(sessions, b.session_id, principal);
      const { transition: t, deduplicated } = await admission.run('write', `intent ${b.event_id}`, () =>
        withinDedupe(principal, intents.createOnce(
          {
        eventId: b.event_id,
        domain: b.domain,
        action: b.action,
        status: b.status,
        tags: b.tags,
        data: rawData(req, b.data),
        note: b.note,
        sessionId: b.session_id,
        dedupeKey: b.dedupe_key,
        ttlS: b.ttl_s,
        agentId,
          },
          { idempotencyKey },
        )),
      );
      // The intent as this create stored it, from its first transition: no read-back (a PATCH racing
      // the answer may already have moved it on; GET shows that). A repeat gets the same answer, 200.
      res
        .status(deduplicated ? 200 : 201)
        .location(`/api/events/${encodeURIComponent(b.event_id)}`)
        .json({ ...describeIntent(intentOfCreation(t, intentWorkflowId(b.event_id))), deduplicated });
    });
  }

  route(r, keys, transitionIntent, async (req, res) => {
    const id = idOf(req);
    const b = parse(transitionIntent.body, jsonBody(req));
    const idempotencyKey = idempotencyKeyOf(req);
    if (principalOf(res).bounds) await mustExist(id, principalOf(res));
    // Answered from the write (the row read before it, moved on by the stored transition): no read-back after it.
    const w = await admission.run('write', `intent ${id}`, () => intents.transitionOnce(id, { status: b.status, note: b.note, data: rawData(req, b.data) }, { idempotencyKey }));
    res.json({ ...describeIntent(w.intent), transition: describeTransition(w.transition), deduplicated: w.deduplicated });
  });

  route(r, keys, pendingIntents, async (req, res) => {
    const q = parse(pendingIntents.query, queryObject(req));
    const rows = await store.pending({ domain: q.domain, bounds: principalOf(res).bounds, olderThanS: q.older_than, limit: q.limit ?? LIMITS.intentPageMax });
    res.json(rows.map(describeIntent));
  });

  route(r, keys, listIntents, async (req, res) => {
    const q = parse(listIntents.query, queryObject(req));
    const limit = q.limit ?? LIMITS.intentPageDefault;
    const offset = q.offset ?? 0;
    if (q.cursor !== undefined && offset) throw DomainError.validation('cursor', 'cannot be combined with offset: a cursor says where the page starts');
    const cursor = q.cursor === undefined ? undefined : parseCursor(q.cursor, ['newest'], (id) => INTENT_ID_RE.test(id));
    const before = cursor && { createdTs: cursor.time, eventId: cursor.id };
    // One row more than asked: it says whether a next page exists.
    const { rows, total } = await store.list({ domain: q.domain, bounds: principalOf(res).bounds, status: q.status, tags: q.tags, search: q.search, limit: limit + 1, offset, before });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    res.json({ events: page.map(describeIntent), total, limit, offset, next_cursor: rows.length > limit ? encodeKeyset({ time: last.created_ts, id: last.event_id, order: 'newest' }) : null });
  });

  route(r, keys, intentStats, async (_req, res) => {
    res.json(await store.stats(principalOf(res).bounds));
  });

  // Each check within its own deadline, as /readyz: an answer in about LIMITS.readinessCheckMs whatever is down.
  route(r, keys, omlHealth, async (_req, res) => {
    const ms = LIMITS.readinessCheckMs;
    const { checks, timedOut } = await runChecks({ database: postgresCheck(pool, (reason) => reason), temporal: temporalCheck(client, ms, (reason) => reason) }, ms);
    const { database, temporal } = checks;
    res.json({ status: database === 'ok' && temporal === 'ok' ? 'ok' : 'degraded', database, temporal, timed_out: timedOut, db_path: redact(databaseUrl), read_only: readOnly });
  });

  route(r, keys, getIntent, async (req, res) => {
    const row = await mustExist(idOf(req), principalOf(res));
    const [transitions, state, logged] = await Promise.all([store.transitions(row.event_id), intents.state(row.event_id), tlog.chainLogIndexes(1, row.event_id)]);
    res.json({
      ...describeIntent(row),
      transitions: transitions.map((t) => describeTransition(t, logged.get(t.seq) ?? null)),
      workflow: { workflow_id: row.workflow_id, open: state !== undefined, next: state?.next ? { action: state.next.action, at: iso(state.next.atMs) } : null },
    });
  });

  route(r, keys, verifyIntent, async (req, res) => {
    const row = await mustExist(idOf(req), principalOf(res));
    const v = await store.verify(row.event_id);
    res.json({ event_id: row.event_id, ...v, ok: v.ok && v.header_ok });
  });

  // The workspace (STATE.md, ARTIFACTS_DIR) is the instance's, written by every agent's tasks: not for a bound key.
  route(r, keys, workspaceState, async (_req, res) => {
    requireUnbound(principalOf(res), 'the workspace state');
    res.json({ path: stateMdPath, ...(await readState(stateMdPath)) });
  });

  route(r, keys, listArtifacts, async (_req, res) => {
    requireUnbound(principalOf(res), 'the artifacts directory');
    res.json({ files: await listArtifactFiles(artifactsDir) });
  });

  route(r, keys, getArtifact, async (req, res) => {
    requireUnbound(principalOf(res), 'the artifacts directory');
    const name = req.params.filename as string;
    const file = await resolveArtifact(artifactsDir, name);
    if (isMarkdown(name)) {
      const t = await readText(file, 'filename');
      res.json({ name, size: t.size, modified: t.modified, markdown: true, raw: t.raw, html: renderMarkdown(t.raw) });
      return;
    }
    // Never rendered by the browser: a downloaded HTML or SVG artifact cannot run script in this origin.
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
    res.attachment(name);
    res.type('application/octet-stream');
    res.sendFile(file, { dotfiles: 'allow' });
  });

  /**
   * A dedupe_key held by another agent's intent is still refused (the keys are instance-wide),
   * but a bound key is not told which intent holds it, nor its result.
   */
  async function withinDedupe<T>(p: Principal, write: Promise<T>): Promise<T> {
    try {
      return await write;
    } catch (err) {
      const holder = err instanceof DomainError && err.code === ErrorCode.DuplicateIntent ? (err.extra?.existing as { event_id?: string } | undefined)?.event_id : undefined;
      if (!p.bounds || holder === undefined) throw err;
      const row = await store.get(holder);
      if (row && mayAccess(p, row.agent_id)) throw err;
      throw DomainError.field(ErrorCode.DuplicateIntent, 'dedupe_key', "already used by another agent's intent").withMessage(
        "this dedupe_key is held by an intent outside the agents this key is bound to; nothing was written",
      );
    }
  }

  return r;
}

/** 404 unless the session exists within the key's bounds (as the session routes answer it). */
async function sessionWithin(sessions: SessionStore, sessionId: string, p: Principal): Promise<void> {
  const t = await sessions.getTimeline(sessionId);
  if (!t || !mayAccess(p, t.agent_id)) throw sessionErrors.notFound(sessionId);
}
