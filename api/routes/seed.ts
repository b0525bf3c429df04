/**
 * The seed article's three endpoints, same paths, query parameters and envelope
 * `{"code":200,"msg":…,"data":…}`, so a Gateway written against the seed works unchanged.
 */
import { Router } from 'express';
import { z } from 'zod';
import { listEvents } from '../../lib/timeline-queries';
import type { StoredEvent } from '../../workflows/messages';
import { Operation, KeyStore, requireScope } from '../auth';
import { HttpError } from '../errors';
import type { TimelineService } from '../timeline-service';
import type { Pool } from 'pg';
import { eventIdParam, eventTypeParam, idempotencyKey, limitParam, parse, queryObject, sessionId, tsParam } from '../validation';
import { EventType } from '../../workflows/messages';

/** The seed returned every event when no limit was given; we cap a single read here. */
export const SEED_MAX_EVENTS = 10_000;

const ok = (msg: string, data: unknown) => ({ code: 200, msg, data });

export function seedEvent(e: StoredEvent) {
  return {
    event_id: e.event_id,
    session_id: e.session_id,
    timestamp: e.ts,
    content: e.content,
    prev_event_hash: e.prev_hash,
    event_type: e.event_type,
    seq: e.seq,
    hash: e.hash,
  };
}

/** Seed clients send parameters in the query string; a JSON or form body is accepted as well. */
function params(req: import('express').Request): Record<string, unknown> {
  const body = req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? req.body : {};
  return { ...body, ...queryObject(req) };
}

const initSchema = z.object({ session_id: sessionId });
const appendSchema = z.object({
  session_id: sessionId,
  event_type: eventTypeParam,
  content: z.string({ error: 'is required (a JSON document as text)' }),
  idempotency_key: idempotencyKey.optional(),
  event_id: eventIdParam.optional(),
});
const getSchema = z.object({
  session_id: sessionId,
  from_ts: tsParam.optional(),
  limit: limitParam(SEED_MAX_EVENTS).optional(),
});

export function seedRouter(service: TimelineService, pool: Pool, keys: KeyStore): Router {
  const r = Router();

  r.post('/timeline/init', requireScope(keys, Operation.CreateSession), async (req, res) => {
    const p = parse(initSchema, params(req));
    const created = await service.createSession({ sessionId: p.session_id }, 'seed');
    res.json(ok('timeline initialised', { timeline_id: created.timeline_id, event_id: created.event_id }));
  });

  // Authenticate before validating, so a caller without a key learns nothing; ending needs more.
  r.post('/timeline/append', requireScope(keys, Operation.Append), async (req, res) => {
    const p = parse(appendSchema, params(req));
    if (p.event_type === EventType.SessionEnd) keys.authorise(req.headers.authorization, Operation.EndSession);
    let content: unknown;
    try {
      content = JSON.parse(p.content);
    } catch (err) {
      throw HttpError.validation('content', `must be a JSON document: ${(err as Error).message}`);
    }
    const { event } = await service.append(
      { sessionId: p.session_id, type: p.event_type, content: content as never, idempotencyKey: p.idempotency_key, eventId: p.event_id },
      'seed',
    );
    res.json(
      ok('event appended', { event_id: event.event_id, timestamp: event.ts, prev_event_hash: event.prev_hash, seq: event.seq, hash: event.hash }),
    );
  });

  r.get('/timeline/get', requireScope(keys, Operation.Read), async (req, res) => {
    const p = parse(getSchema, queryObject(req));
    const limit = p.limit ?? SEED_MAX_EVENTS;
    const events = await listEvents(pool, p.session_id, { fromTs: p.from_ts, limit: limit + 1 });
    const more = events.length > limit;
    res.json(ok('events read', { events: events.slice(0, limit).map(seedEvent), has_more: more }));
  });

  return r;
}
