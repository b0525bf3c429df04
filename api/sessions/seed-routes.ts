/**
 * The seed article's three endpoints, same paths, query parameters and envelope
 * `{"code":200,"msg":…,"data":…}`, so a Gateway written against the seed works unchanged.
 */
import { Router, type Request } from 'express';
import { LIMITS } from '../../lib/domain/limits';
import { EventType, sessionErrors, type JsonValue, type StoredEvent } from '../../lib/domain/sessions';
import { mayAccess, ownerForCreate, principalOf, type Principal } from '../auth';
import { Operation } from '../../lib/platform/scopes';
import { formObject, parse, queryObject } from '../http';
import { parseJsonText } from '../input-gate';
import { surface } from '../problem';
import { route } from '../router';
import type { SessionDeps } from './deps';
import { seedAppend, seedGet, seedInit } from './contract';

const ok = (msg: string, data: unknown) => ({ code: 200 as const, msg, data });

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
    occurred_at: e.occurred_at ?? null,
  };
}

/** Seed clients send parameters in the query string; a JSON or form body is accepted as well. */
function params(req: Request): Record<string, unknown> {
  return { ...formObject(req), ...queryObject(req) };
}

export function seedRouter({ sessions, store, keys, admission }: SessionDeps): Router {
  const r = Router();
  r.use('/timeline', surface('seed'));

  /** With a bound key: the session must exist within its bounds, else 404 alike (unbound keys keep the seed's answers). */
  async function mustBeWithin(sessionId: string, principal: Principal): Promise<void> {
    if (!principal.bounds) return;
    const t = await store.getTimeline(sessionId);
    if (!t || !mayAccess(principal, t.agent_id)) throw sessionErrors.notFound(sessionId);
  }

  route(r, keys, seedInit, async (req, res) => {
    const p = parse(seedInit.query, params(req));
    // The seed's init names no agent: a bound key's session belongs to its one agent (400 if it has several).
    const agentId = ownerForCreate(principalOf(res), undefined);
    const created = await admission.run('create', p.session_id, () => sessions.create({ sessionId: p.session_id, agentId, occurredAt: p.occurred_at }));
    res.json(ok('timeline initialised', { timeline_id: created.timeline_id, event_id: created.event_id }));
  });

  // Authenticated (by route) before validation, so a caller without a key learns nothing; ending needs more.
  route(r, keys, seedAppend, async (req, res) => {
    const p = parse(seedAppend.query, params(req));
    if (p.event_type === EventType.SessionEnd) keys.authorise(req.headers.authorization, Operation.EndSession);
    // Through the input gate, like a JSON body: unique member names, no NUL or lone surrogate.
    const content = parseJsonText(p.content, 'content') as JsonValue;
    await mustBeWithin(p.session_id, principalOf(res));
    const { event } = await admission.run('write', p.session_id, () =>
      sessions.append({ sessionId: p.session_id, type: p.event_type, content, idempotencyKey: p.idempotency_key, eventId: p.event_id, occurredAt: p.occurred_at }),
    );
    res.json(ok('event appended', { event_id: event.event_id, timestamp: event.ts, prev_event_hash: event.prev_hash, seq: event.seq, hash: event.hash, occurred_at: event.occurred_at ?? null }));
  });

  route(r, keys, seedGet, async (req, res) => {
    const p = parse(seedGet.query, queryObject(req));
    const limit = p.limit ?? LIMITS.seedMaxEvents;
    await mustBeWithin(p.session_id, principalOf(res));
    const events = await store.listEvents(p.session_id, { fromTs: p.from_ts, limit: limit + 1 });
    res.json(ok('events read', { events: events.slice(0, limit).map(seedEvent), has_more: events.length > limit }));
  });

  return r;
}
