/** The /v1 session resource API: JSON bodies, cursor paging, problem-details errors. */
import { Router, type Request } from 'express';
import { LIMITS } from '../../lib/domain/limits';
import { EventType, SESSION_ID_RE, sessionErrors, type JsonValue, type StoredEvent } from '../../lib/domain/sessions';
import { DEFAULT_LIST_ORDER, LIST_ORDERS, type ListOrder } from '../../lib/domain/list-order';
import { encodeKeyset, pageOrder, parseCursor, type Keyset } from '../../lib/platform/keyset';
import { TimelineRow, timelineHead } from '../../lib/store/sessions';
import { jsonBody, parse, queryObject } from '../http';
import { mayAccess, ownerForCreate, principalOf, type Principal } from '../auth';
import { Operation } from '../../lib/platform/scopes';
import { route } from '../router';
import { formatContext, Lang, toMessage } from './context';
import { NO_WITNESSES } from '../../lib/tlog/chain-check';
import type { SessionDeps } from './deps';
import { appendEvent, createSession, endSession, getContext, getSession, getWorkflow, listEvents, listSessions, verifySession } from './contract';

export function v1Event(e: StoredEvent, logIndex: number | null = null) {
  return {
    session_id: e.session_id,
    seq: e.seq,
    event_id: e.event_id,
    type: e.event_type,
    ts: e.ts,
    content: e.content,
    prev_hash: e.prev_hash,
    hash: e.hash,
    idempotency_key: e.idempotency_key,
    log_index: logIndex,
    occurred_at: e.occurred_at ?? null,
  };
}

/**
 * zod rebuilds records by assignment, which turns an own "__proto__" key into a prototype
 * change and silently drops it; once validated, keep the object exactly as the client sent it.
 */
function rawMetadata(req: Request, validated: unknown): { [k: string]: JsonValue } | undefined {
  return validated === undefined ? undefined : (req.body as { metadata: { [k: string]: JsonValue } }).metadata;
}

/** Cursors before lists took an order were `[created_ts, session_id]`, issued oldest first. */
function decodeCursor(c: string): Keyset<ListOrder> {
  return parseCursor(c, LIST_ORDERS, (id) => SESSION_ID_RE.test(id), 'oldest');
}

export function v1Router({ sessions, store, tlog, keys, temporalUiUrl, temporalNamespace, admission, witnessTrust }: SessionDeps): Router {
  const r = Router();

  /** A write's answer: a new event is not in the log yet; a deduplicated one may be. */
  const written = async (e: StoredEvent, deduplicated: boolean) => ({
    ...v1Event(e, deduplicated ? ((await tlog.logIndexes(0, e.session_id, [e.seq])).get(e.seq) ?? null) : null),
    deduplicated,
  });

  /** The session, if it exists and is within the key's agent bounds; 404 alike otherwise (its existence is not revealed). */
  async function mustExist(id: string, p: Principal): Promise<TimelineRow> {
    const t = await store.getTimeline(id);
    if (!t || !mayAccess(p, t.agent_id)) throw sessionErrors.notFound(id).withMessage(`session ${id} not found`);
    return t;
  }
  /** Before a write with a bound key: the session must be within its bounds (an unbound key's write needs no read). */
  const mustBeWithin = async (id: string, p: Principal) => void (p.bounds && (await mustExist(id, p)));
  const idOf = (req: Request) => parse(getSession.params.shape.id, req.params.id, 'session_id');

  function describe(t: TimelineRow) {
    return {
      session_id: t.session_id,
      timeline_id: t.timeline_id,
      status: t.status,
      agent_id: t.agent_id,
      channel: t.channel,
      metadata: t.metadata,
      idle_timeout_s: t.idle_timeout_s,
      created_ts: t.created_ts,
      archived_ts: t.archived_ts,
      head: timelineHead(t),
      workflow: {
        workflow_id: t.workflow_id,
        ui_url: `${temporalUiUrl}/namespaces/${encodeURIComponent(temporalNamespace)}/workflows/${encodeURIComponent(t.workflow_id)}`,
      },
    };
  }

  route(r, keys, createSession, async (req, res) => {
    const b = parse(createSession.body, jsonBody(req));
    const agentId = ownerForCreate(principalOf(res), b.agent_id);
    await admission.run('create', b.session_id, () =>
      sessions.create({ sessionId: b.session_id, agentId, channel: b.channel, metadata: rawMetadata(req, b.metadata), idleTimeoutS: b.idle_timeout_s, occurredAt: b.occurred_at }),
    );
    const t = await mustExist(b.session_id, principalOf(res));
    res.status(201).location(`/v1/sessions/${encodeURIComponent(b.session_id)}`).json(describe(t));
  });

  route(r, keys, listSessions, async (req, res) => {
    const q = parse(listSessions.query, queryObject(req));
    const limit = q.limit ?? LIMITS.pageDefault;
    const cursor = q.cursor ? decodeCursor(q.cursor) : undefined;
    const order = pageOrder(q.order, cursor, DEFAULT_LIST_ORDER);
    const rows = await store.listTimelines({
      status: q.status,
      agentId: q.agent_id,
      channel: q.channel,
      bounds: principalOf(res).bounds,
      order,
      after: cursor ? { createdTs: cursor.time, sessionId: cursor.id } : undefined,
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    res.json({ sessions: page.map(describe), next_cursor: rows.length > limit ? encodeKeyset({ time: last.created_ts, id: last.session_id, order }) : null });
  });

  route(r, keys, getSession, async (req, res) => {
    const t = await mustExist(idOf(req), principalOf(res));
    const counts = await store.countEventsByType(t.session_id);
    const state = t.status === 'open' ? await sessions.state(t.session_id) : undefined;
    const d = describe(t);
    res.json({
      ...d,
      counts: { events: Object.values(counts).reduce((a, b) => a + b, 0), by_type: counts },
      workflow: { ...d.workflow, ...(state ? { run: state.run, status: state.status, queued: state.queued } : {}) },
    });
  });

  route(r, keys, appendEvent, async (req, res) => {
    const id = idOf(req);
    const b = parse(appendEvent.body, jsonBody(req));
    if (b.type === EventType.SessionEnd) keys.authorise(req.headers.authorization, Operation.EndSession);
    await mustBeWithin(id, principalOf(res));
    const { event: e, deduplicated } = await admission.run('write', id, () =>
      sessions.append({
        sessionId: id,
        type: b.type,
        content: b.content as JsonValue,
        idempotencyKey: b.idempotency_key,
        eventId: b.event_id,
        expectedSeq: b.expected_seq,
        occurredAt: b.occurred_at,
      }),
    );
    res.status(deduplicated ? 200 : 201).json(await written(e, deduplicated));
  });

  route(r, keys, listEvents, async (req, res) => {
    const id = idOf(req);
    const q = parse(listEvents.query, queryObject(req));
    await mustExist(id, principalOf(res));
    const limit = q.limit ?? LIMITS.pageDefault;
    const rows = await store.listEvents(id, { afterSeq: q.after_seq, fromTs: q.from_ts, toTs: q.to_ts, types: q.types, limit: limit + 1 });
    const page = rows.slice(0, limit);
    const logged = await tlog.logIndexes(0, id, page.map((e) => e.seq));
    res.json({ events: page.map((e) => v1Event(e, logged.get(e.seq) ?? null)), next_after_seq: rows.length > limit ? page[page.length - 1].seq : null });
  });

  route(r, keys, endSession, async (req, res) => {
    const id = idOf(req);
    const b = parse(endSession.body, jsonBody(req));
    await mustBeWithin(id, principalOf(res));
    const { event: e, deduplicated } = await admission.run('write', id, () =>
      sessions.end(id, { reason: b.reason ?? 'ended', idempotencyKey: b.idempotency_key, expectedSeq: b.expected_seq, occurredAt: b.occurred_at }),
    );
    res.status(200).json(await written(e, deduplicated));
  });

  route(r, keys, verifySession, async (req, res) => {
    const id = idOf(req);
    const t = await mustExist(id, principalOf(res));
    // Read the anchor first: appends after this point only add rows beyond it.
    const anchor = await sessions.head(id, t.status);
    const result = await store.verify(id);
    // With witnesses, against the newest checkpoint they cosigned (a log-signed one only while none is).
    const logCheck = await tlog.checkChain(0, id, witnessTrust ?? NO_WITNESSES);
    const withLog = <T extends { ok: boolean }>(body: T) =>
      body.ok && !logCheck.ok
        ? { ...body, ok: false, first_bad_seq: logCheck.first_bad_seq, reason: 'log_mismatch', detail: logCheck.detail, log: logCheck }
        : { ...body, log: logCheck };
    if (!anchor) return void res.json(withLog({ session_id: id, ...result, anchor: null }));
    const stored = await store.hashAt(id, anchor.seq);
    const anchorOk = stored === anchor.hash;
    const anchorInfo = { source: 'workflow', seq: anchor.seq, hash: anchor.hash, ok: anchorOk };
    if (anchorOk || !result.ok) return void res.json(withLog({ session_id: id, ...result, anchor: anchorInfo }));
    res.json({
      session_id: id,
      ...result,
      ok: false,
      first_bad_seq: stored ? anchor.seq : (result.head_seq ?? 0) + 1,
      reason: 'anchor_mismatch',
      detail: stored
        ? `the session workflow recorded hash ${anchor.hash} for seq ${anchor.seq}; the table holds ${stored}`
        : `the session workflow recorded seq ${anchor.seq}, but the table ends at seq ${result.head_seq}: events were removed`,
      anchor: anchorInfo,
      log: logCheck,
    });
  });

  route(r, keys, getContext, async (req, res) => {
    const id = idOf(req);
    const q = parse(getContext.query, queryObject(req));
    await mustExist(id, principalOf(res));
    const maxEvents = q.max_events ?? LIMITS.contextDefaultEvents;
    // The last max_events events at or before the as-of point, oldest first.
    const newestFirst = await store.listEvents(id, { maxSeq: q.as_of_seq, toTs: q.as_of_ts, limit: maxEvents + 1, descending: true });
    const truncated = newestFirst.length > maxEvents;
    const events = newestFirst.slice(0, maxEvents).reverse();
    const lang: Lang = q.lang ?? 'en';
    const last = events[events.length - 1];
    res.json({
      session_id: id,
      as_of: { seq: last?.seq ?? null, ts: last?.ts ?? null, requested_seq: q.as_of_seq ?? null, requested_ts: q.as_of_ts ?? null },
      events_included: events.length,
      truncated,
      text: formatContext(events, lang, q.timestamps !== 'false'),
      messages: events.map((e) => toMessage(e, lang)),
    });
  });

  route(r, keys, getWorkflow, async (req, res) => {
    const t = await mustExist(idOf(req), principalOf(res));
    res.json({ workflow_id: t.workflow_id, state: (await sessions.state(t.session_id)) ?? null });
  });

  return r;
}
