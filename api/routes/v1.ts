/** The resource API: JSON bodies, cursor paging, problem-details errors. */
import { Router } from 'express';
import type { Pool } from 'pg';
import { z } from 'zod';
import { countEventsByType, getTimeline, listEvents, listTimelines, TimelineRow, verifyTimeline } from '../../lib/timeline-queries';
import type { Config } from '../../lib/config';
import { JsonValue, SESSION_ID_RE, StoredEvent, sessionWorkflowId } from '../../workflows/messages';
import { KeyStore, Operation, requireScope } from '../auth';
import { formatContext, Lang, toMessage } from '../context';
import { HttpError, ProblemType } from '../errors';
import type { TimelineService } from '../timeline-service';
import {
  eventIdParam,
  eventTypeParam,
  idempotencyKey,
  limitParam,
  parse,
  plainText,
  queryObject,
  seqParam,
  sessionId,
  tsParam,
  typesFilter,
} from '../validation';

const MAX_PAGE = 1000;

const createBody = z.strictObject({
  session_id: sessionId,
  agent_id: plainText(128).optional(),
  channel: plainText(64).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  idle_timeout_s: z.number().int().min(1).max(30 * 24 * 3600).optional(),
});
const appendBody = z.strictObject({
  type: eventTypeParam,
  content: z.unknown().refine((v) => v !== undefined, 'is required'),
  idempotency_key: idempotencyKey.optional(),
  event_id: eventIdParam.optional(),
});
const endBody = z.strictObject({
  reason: plainText(200).optional(),
  idempotency_key: idempotencyKey.optional(),
});
const eventsQuery = z.strictObject({
  after_seq: seqParam.optional(),
  from_ts: tsParam.optional(),
  to_ts: tsParam.optional(),
  types: typesFilter.optional(),
  limit: limitParam(MAX_PAGE).optional(),
});
const sessionsQuery = z.strictObject({
  status: z.enum(['open', 'archived']).optional(),
  agent_id: plainText(128).optional(),
  channel: plainText(64).optional(),
  cursor: z.string().optional(),
  limit: limitParam(MAX_PAGE).optional(),
});
const contextQuery = z.strictObject({
  as_of_seq: seqParam.optional(),
  as_of_ts: tsParam.optional(),
  max_events: limitParam(MAX_PAGE).optional(),
  lang: z.enum(['en', 'zh']).optional(),
  timestamps: z.enum(['true', 'false']).optional(),
});

function event(e: StoredEvent) {
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
  };
}

/**
 * zod rebuilds records by assignment, which turns an own "__proto__" key into a prototype
 * change and silently drops it; once validated, keep the object exactly as the client sent it.
 */
function rawMetadata(req: import('express').Request, validated: unknown): { [k: string]: JsonValue } | undefined {
  return validated === undefined ? undefined : ((req.body as { metadata: { [k: string]: JsonValue } }).metadata);
}

function body(req: import('express').Request): unknown {
  return req.body === undefined ? {} : req.body;
}

function encodeCursor(t: TimelineRow): string {
  return Buffer.from(JSON.stringify([t.created_ts, t.session_id])).toString('base64url');
}

function decodeCursor(c: string): { createdTs: number; sessionId: string } {
  try {
    const [createdTs, sid] = JSON.parse(Buffer.from(c, 'base64url').toString('utf8'));
    // Both go to PostgreSQL as a bigint and a session id: anything else would be a 500 there.
    if (Number.isSafeInteger(createdTs) && createdTs >= 0 && typeof sid === 'string' && SESSION_ID_RE.test(sid)) return { createdTs, sessionId: sid };
  } catch {
    /* fall through */
  }
  throw HttpError.validation('cursor', 'is not a cursor returned by this endpoint');
}

export function v1Router(service: TimelineService, pool: Pool, keys: KeyStore, config: Config): Router {
  const r = Router();

  async function mustExist(id: string): Promise<TimelineRow> {
    const t = await getTimeline(pool, id);
    if (!t) throw new HttpError(404, ProblemType.NotFound, `session ${id} not found`, [{ field: 'session_id', reason: 'unknown session' }]);
    return t;
  }
  const idOf = (req: import('express').Request) => parse(sessionId, req.params.id, 'session_id');

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
      head: t.head_seq === null ? null : { seq: t.head_seq, hash: t.head_hash, ts: t.head_ts },
      workflow: {
        workflow_id: t.workflow_id,
        ui_url: `${config.temporalUiUrl}/namespaces/${encodeURIComponent(config.temporalNamespace)}/workflows/${encodeURIComponent(t.workflow_id)}`,
      },
    };
  }

  r.post('/sessions', requireScope(keys, Operation.CreateSession), async (req, res) => {
    const b = parse(createBody, body(req));
    await service.createSession(
      { sessionId: b.session_id, agentId: b.agent_id, channel: b.channel, metadata: rawMetadata(req, b.metadata), idleTimeoutS: b.idle_timeout_s },
      'v1',
    );
    const t = await mustExist(b.session_id);
    res.status(201).location(`/v1/sessions/${encodeURIComponent(b.session_id)}`).json(describe(t));
  });

  r.get('/sessions', requireScope(keys, Operation.Read), async (req, res) => {
    const q = parse(sessionsQuery, queryObject(req));
    const limit = q.limit ?? 100;
    const rows = await listTimelines(pool, {
      status: q.status,
      agentId: q.agent_id,
      channel: q.channel,
      after: q.cursor ? decodeCursor(q.cursor) : undefined,
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    res.json({ sessions: page.map(describe), next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1]) : null });
  });

  r.get('/sessions/:id', requireScope(keys, Operation.Read), async (req, res) => {
    const t = await mustExist(idOf(req));
    const counts = await countEventsByType(pool, t.session_id);
    const state = t.status === 'open' ? await service.workflowState(t.session_id) : undefined;
    const d = describe(t);
    res.json({
      ...d,
      counts: { events: Object.values(counts).reduce((a, b) => a + b, 0), by_type: counts },
      workflow: { ...d.workflow, ...(state ? { run: state.run, status: state.status, queued: state.queued } : {}) },
    });
  });

  r.post('/sessions/:id/events', requireScope(keys, Operation.Append), async (req, res) => {
    const id = idOf(req);
    const b = parse(appendBody, body(req));
    if (b.type === 'SESSION_END') keys.authorise(req.headers.authorization, Operation.EndSession);
    const { event: e, deduplicated } = await service.append(
      { sessionId: id, type: b.type, content: b.content as JsonValue, idempotencyKey: b.idempotency_key, eventId: b.event_id },
      'v1',
    );
    res.status(deduplicated ? 200 : 201).json({ ...event(e), deduplicated });
  });

  r.get('/sessions/:id/events', requireScope(keys, Operation.Read), async (req, res) => {
    const id = idOf(req);
    const q = parse(eventsQuery, queryObject(req));
    await mustExist(id);
    const limit = q.limit ?? 100;
    const rows = await listEvents(pool, id, { afterSeq: q.after_seq, fromTs: q.from_ts, toTs: q.to_ts, types: q.types, limit: limit + 1 });
    const page = rows.slice(0, limit);
    res.json({ events: page.map(event), next_after_seq: rows.length > limit ? page[page.length - 1].seq : null });
  });

  r.post('/sessions/:id/end', requireScope(keys, Operation.EndSession), async (req, res) => {
    const id = idOf(req);
    const b = parse(endBody, body(req));
    const { event: e, deduplicated } = await service.end(id, b.reason ?? 'ended', b.idempotency_key, 'v1');
    res.status(200).json({ ...event(e), deduplicated });
  });

  r.get('/sessions/:id/verify', requireScope(keys, Operation.Verify), async (req, res) => {
    const id = idOf(req);
    const t = await mustExist(id);
    // Read the anchor first: appends after this point only add rows beyond it.
    const anchor = await service.workflowHead(id, t.status);
    const result = await verifyTimeline(pool, id);
    if (!anchor) return res.json({ session_id: id, ...result, anchor: null });
    const { rows } = await pool.query('SELECT hash FROM timeline_events WHERE session_id = $1 AND seq = $2', [id, anchor.seq]);
    const anchorOk = rows[0]?.hash === anchor.hash;
    const anchorInfo = { source: 'workflow', seq: anchor.seq, hash: anchor.hash, ok: anchorOk };
    if (anchorOk || !result.ok) return res.json({ session_id: id, ...result, anchor: anchorInfo });
    res.json({
      session_id: id,
      ...result,
      ok: false,
      first_bad_seq: rows[0] ? anchor.seq : (result.head_seq ?? 0) + 1,
      reason: 'anchor_mismatch',
      detail: rows[0]
        ? `the session workflow recorded hash ${anchor.hash} for seq ${anchor.seq}; the table holds ${rows[0].hash}`
        : `the session workflow recorded seq ${anchor.seq}, but the table ends at seq ${result.head_seq}: events were removed`,
      anchor: anchorInfo,
    });
  });

  r.get('/sessions/:id/context', requireScope(keys, Operation.Read), async (req, res) => {
    const id = idOf(req);
    const q = parse(contextQuery, queryObject(req));
    await mustExist(id);
    const maxEvents = q.max_events ?? 200;
    // The last max_events events at or before the as-of point, oldest first.
    const newestFirst = await listEvents(pool, id, { maxSeq: q.as_of_seq, toTs: q.as_of_ts, limit: maxEvents + 1, descending: true });
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

  r.get('/sessions/:id/workflow', requireScope(keys, Operation.Read), async (req, res) => {
    const t = await mustExist(idOf(req));
    res.json({ workflow_id: sessionWorkflowId(t.session_id), state: (await service.workflowState(t.session_id)) ?? null });
  });

  return r;
}
