/**
 * The session timeline routes: the seed's three endpoints (parameters in the query string,
 * envelope `{code, msg, data}`) and the /v1 resource API. Each route's request and response
 * schemas are defined here once; see api/contract.ts for how they are used.
 */
import { z } from 'zod';
import { LIMITS } from '../../lib/domain/limits';
import { LIST_ORDERS } from '../../lib/domain/list-order';
import { APPENDABLE_EVENT_TYPES, EVENT_TYPES, TIMELINE_STATUSES } from '../../lib/domain/sessions';
import { Operation } from '../../lib/platform/scopes';
import { defineRoute, eventIdParam, LogCheckSchema, hash, idempotencyKey, jsonValue, limitParam, occurredAt, plainText, required, seqParam, sessionId, tsParam } from '../contract';

// ---- fields -----------------------------------------------------------------------------

export const eventTypeParam = z.enum(APPENDABLE_EVENT_TYPES as [string, ...string[]], {
  error: `must be one of ${APPENDABLE_EVENT_TYPES.join(', ')}`,
});
export const typesFilter = z
  .string()
  .transform((s) => s.split(',').map((t) => t.trim()).filter(Boolean))
  .refine((ts) => ts.length > 0 && ts.every((t) => (EVENT_TYPES as readonly string[]).includes(t)), {
    message: `must be a comma-separated list of ${EVENT_TYPES.join(', ')}`,
  });
const expectedSeq = z
  .number()
  .int('must be an integer')
  .min(1, 'must be at least 1')
  .describe('append only if the chain head is this seq (optimistic concurrency); otherwise 412 with current_head, and nothing is written');
const sessionIdPath = z.object({ id: sessionId });

// ---- seed surface -----------------------------------------------------------------------

const occurredAtOut = z.number().int().nullable().describe('when the event happened (ms since the epoch) as its writer said, or null; ts is when it was stored');

const envelope = <T extends z.ZodType>(data: T) => z.object({ code: z.literal(200), msg: z.string(), data });

export const SeedEvent = z
  .object({
    event_id: z.string(),
    session_id: z.string(),
    timestamp: z.number().int(),
    content: jsonValue,
    prev_event_hash: hash.nullable(),
    event_type: z.string(),
    seq: z.number().int(),
    hash,
    occurred_at: occurredAtOut,
  })
  .meta({ id: 'SeedEvent' });

export const seedInit = defineRoute({
  method: 'post',
  path: '/timeline/init',
  tag: 'seed',
  summary: 'Initialise a session timeline (seed API)',
  scopes: Operation.CreateSession,
  parameterExamples: { session_id: 'sess_demo_1' },
  query: z.object({ session_id: sessionId, occurred_at: occurredAt.optional() }),
  responses: { 200: envelope(z.object({ timeline_id: z.string(), event_id: z.string() })) },
  errors: [400, 401, 403, 413, 503],
});

export const seedAppend = defineRoute({
  method: 'post',
  path: '/timeline/append',
  tag: 'seed',
  summary: 'Append an event (seed API); content is a JSON document as text',
  scopes: Operation.Append,
  parameterExamples: { session_id: 'sess_demo_1', event_type: 'USER_INPUT', content: '{"input":"What is the weather in Beijing?"}', idempotency_key: 'turn-1' },
  query: z.object({
    session_id: sessionId,
    event_type: eventTypeParam,
    content: z.string(required(' (a JSON document as text)')),
    idempotency_key: idempotencyKey.optional(),
    event_id: eventIdParam.optional(),
    occurred_at: occurredAt.optional(),
  }),
  responses: {
    200: envelope(z.object({ event_id: z.string(), timestamp: z.number().int(), prev_event_hash: hash.nullable(), seq: z.number().int(), hash, occurred_at: occurredAtOut })),
  },
  errors: [400, 401, 403, 404, 409, 413, 503],
});

export const seedGet = defineRoute({
  method: 'get',
  path: '/timeline/get',
  tag: 'seed',
  summary: 'Read a session timeline in order (seed API)',
  scopes: Operation.Read,
  parameterExamples: { session_id: 'sess_demo_1', from_ts: 0, limit: 100 },
  query: z.object({ session_id: sessionId, from_ts: tsParam.optional(), limit: limitParam(LIMITS.seedMaxEvents).optional() }),
  responses: { 200: envelope(z.object({ events: z.array(SeedEvent), has_more: z.boolean() })) },
  errors: [400, 401, 403, 503],
});

// ---- /v1 --------------------------------------------------------------------------------

export const ChainHeadSchema = z.object({ seq: z.number().int(), hash, ts: z.number().int() }).meta({ id: 'ChainHead' });

export const Event = z
  .object({
    session_id: z.string(),
    seq: z.number().int(),
    event_id: z.string(),
    type: z.string(),
    ts: z.number().int().describe('milliseconds since the epoch, from the database clock'),
    content: jsonValue,
    prev_hash: hash.nullable(),
    hash,
    idempotency_key: z.string().nullable(),
    log_index: z.number().int().nullable().describe('its leaf index in the transparency log (GET /v1/log/proof/inclusion); null until the log builder has taken it, within seconds'),
    occurred_at: occurredAtOut,
  })
  .meta({ id: 'Event' });

export const AppendedEvent = Event.extend({ deduplicated: z.boolean() }).meta({ id: 'AppendedEvent' });

export const Session = z
  .object({
    session_id: z.string(),
    timeline_id: z.string(),
    status: z.enum(TIMELINE_STATUSES),
    agent_id: z.string().nullable(),
    channel: z.string().nullable(),
    metadata: z.record(z.string(), jsonValue),
    idle_timeout_s: z.number().int().nullable(),
    created_ts: z.number().int(),
    archived_ts: z.number().int().nullable(),
    head: ChainHeadSchema.nullable(),
    workflow: z.object({
      workflow_id: z.string(),
      ui_url: z.string(),
      run: z.number().int().optional(),
      status: z.string().optional(),
      queued: z.number().int().optional(),
    }),
  })
  .meta({ id: 'Session' });

export const SessionDetail = Session.extend({
  counts: z.object({ events: z.number().int(), by_type: z.record(z.string(), z.number().int()) }),
}).meta({ id: 'SessionDetail' });

export const createSession = defineRoute({
  method: 'post',
  path: '/v1/sessions',
  tag: 'sessions',
  summary: 'Create a session and its timeline (writes SESSION_CREATE)',
  scopes: Operation.CreateSession,
  body: z.strictObject({
    session_id: sessionId,
    agent_id: plainText(LIMITS.agentIdMaxChars).optional(),
    channel: plainText(LIMITS.channelMaxChars).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    idle_timeout_s: z.number().int().min(1).max(LIMITS.idleTimeoutMaxS).optional(),
    occurred_at: occurredAt.optional(),
  }),
  responses: { 201: Session },
  errors: [400, 401, 403, 409, 413, 503],
  example: { session_id: 'demo-1', agent_id: 'agent-7', channel: 'cli', idle_timeout_s: 1800 },
});

export const listSessions = defineRoute({
  method: 'get',
  path: '/v1/sessions',
  tag: 'sessions',
  summary: 'List sessions, newest first (order=oldest for the other way), with cursor paging',
  scopes: Operation.Read,
  parameterExamples: { status: 'active', limit: 20 },
  query: z.strictObject({
    status: z.enum(TIMELINE_STATUSES).optional(),
    agent_id: plainText(LIMITS.agentIdMaxChars).optional(),
    channel: plainText(LIMITS.channelMaxChars).optional(),
    order: z.enum(LIST_ORDERS, { error: `must be one of ${LIST_ORDERS.join(', ')}` }).optional().describe('by creation time (created_ts, then session_id); default newest'),
    cursor: z.string().max(1000).optional().describe('next_cursor of the previous page (it continues that page\'s order)'),
    limit: limitParam(LIMITS.pageMax).optional(),
  }),
  responses: { 200: z.object({ sessions: z.array(Session), next_cursor: z.string().nullable() }) },
  errors: [400, 401, 403, 503],
});

export const getSession = defineRoute({
  method: 'get',
  path: '/v1/sessions/:id',
  tag: 'sessions',
  summary: 'Describe a session: status, head, event counts, workflow',
  scopes: Operation.Read,
  parameterExamples: { id: 'sess_demo_1' },
  params: sessionIdPath,
  responses: { 200: SessionDetail },
  errors: [400, 401, 403, 404, 503],
});

export const appendEvent = defineRoute({
  method: 'post',
  path: '/v1/sessions/:id/events',
  tag: 'sessions',
  summary: 'Append an event (201), or answer a retry with the stored event (200, deduplicated)',
  scopes: Operation.Append,
  parameterExamples: { id: 'sess_demo_1' },
  params: sessionIdPath,
  body: z.strictObject({
    type: eventTypeParam,
    content: z.unknown().refine((v) => v !== undefined, 'is required'),
    idempotency_key: idempotencyKey.optional(),
    event_id: eventIdParam.optional(),
    expected_seq: expectedSeq.optional(),
    occurred_at: occurredAt.optional(),
  }),
  responses: { 201: AppendedEvent, 200: AppendedEvent },
  errors: [400, 401, 403, 404, 409, 412, 413, 503],
  example: { type: 'TOOL_CALL', content: { tool_name: 'weather', params: { city: '北京' } }, idempotency_key: 'call-1', occurred_at: '2026-12-01T18:27:59.120Z' },
});

export const listEvents = defineRoute({
  method: 'get',
  path: '/v1/sessions/:id/events',
  tag: 'sessions',
  summary: 'Read events in seq order, paged by after_seq',
  scopes: Operation.Read,
  parameterExamples: { id: 'sess_demo_1', after_seq: 0, limit: 100 },
  params: sessionIdPath,
  query: z.strictObject({
    after_seq: seqParam.optional(),
    from_ts: tsParam.optional(),
    to_ts: tsParam.optional(),
    types: typesFilter.optional(),
    limit: limitParam(LIMITS.pageMax).optional(),
  }),
  responses: { 200: z.object({ events: z.array(Event), next_after_seq: z.number().int().nullable() }) },
  errors: [400, 401, 403, 404, 503],
});

export const endSession = defineRoute({
  method: 'post',
  path: '/v1/sessions/:id/end',
  tag: 'sessions',
  summary: 'End a session: append SESSION_END and archive the timeline',
  scopes: Operation.EndSession,
  parameterExamples: { id: 'sess_demo_1' },
  params: sessionIdPath,
  body: z.strictObject({
    reason: plainText(LIMITS.endReasonMaxChars).optional(),
    idempotency_key: idempotencyKey.optional(),
    expected_seq: expectedSeq.optional(),
    occurred_at: occurredAt.optional(),
  }),
  responses: { 200: AppendedEvent },
  errors: [400, 401, 403, 404, 409, 412, 503],
  example: { reason: 'user left' },
});

const ChainBreakReasonSchema = z.enum(['content_changed', 'link_broken', 'gap', 'order', 'session_mismatch', 'anchor_mismatch', 'log_mismatch']);

export const verifySession = defineRoute({
  method: 'get',
  path: '/v1/sessions/:id/verify',
  tag: 'sessions',
  summary: "Recompute the hash chain, check its head against the session workflow's and every logged event against a checkpoint of the transparency log (the newest witnessed one when LOG_WITNESSES is set)",
  scopes: Operation.Verify,
  parameterExamples: { id: 'sess_demo_1' },
  params: sessionIdPath,
  responses: {
    200: z.object({
      session_id: z.string(),
      ok: z.boolean(),
      checked: z.number().int(),
      head_seq: z.number().int().nullable(),
      head_hash: hash.nullable(),
      first_bad_seq: z.number().int().optional(),
      reason: ChainBreakReasonSchema.optional(),
      detail: z.string().optional(),
      anchor: z.object({ source: z.literal('workflow'), seq: z.number().int(), hash, ok: z.boolean() }).nullable(),
      log: LogCheckSchema,
    }),
  },
  errors: [400, 401, 403, 404, 503],
});

export const getContext = defineRoute({
  method: 'get',
  path: '/v1/sessions/:id/context',
  tag: 'sessions',
  summary: 'History formatted for an LLM, as of a seq or time',
  scopes: Operation.Read,
  parameterExamples: { id: 'sess_demo_1' },
  params: sessionIdPath,
  query: z.strictObject({
    as_of_seq: seqParam.optional(),
    as_of_ts: tsParam.optional(),
    max_events: limitParam(LIMITS.pageMax).optional(),
    lang: z.enum(['en', 'zh']).optional(),
    timestamps: z.enum(['true', 'false']).optional(),
  }),
  responses: {
    200: z.object({
      session_id: z.string(),
      as_of: z.object({
        seq: z.number().int().nullable(),
        ts: z.number().int().nullable(),
        requested_seq: z.number().int().nullable(),
        requested_ts: z.number().int().nullable(),
      }),
      events_included: z.number().int(),
      truncated: z.boolean(),
      text: z.string(),
      messages: z.array(z.object({ role: z.enum(['system', 'user', 'assistant', 'tool']), content: z.string(), seq: z.number().int(), ts: z.number().int(), occurred_at: occurredAtOut })),
    }),
  },
  errors: [400, 401, 403, 404, 503],
});

export const getWorkflow = defineRoute({
  method: 'get',
  path: '/v1/sessions/:id/workflow',
  tag: 'sessions',
  summary: "The session workflow's live state (null once it is gone)",
  scopes: Operation.Read,
  parameterExamples: { id: 'sess_demo_1' },
  params: sessionIdPath,
  responses: {
    200: z.object({
      workflow_id: z.string(),
      state: z
        .object({
          sessionId: z.string(),
          status: z.enum(['open', 'ending', 'archived']),
          head: ChainHeadSchema.nullable(),
          run: z.number().int(),
          appendsThisRun: z.number().int(),
          appendsTotal: z.number().int(),
          queued: z.number().int(),
        })
        .nullable(),
    }),
  },
  errors: [400, 401, 403, 404, 503],
});

export const sessionRoutes = {
  seedInit,
  seedAppend,
  seedGet,
  createSession,
  listSessions,
  getSession,
  appendEvent,
  listEvents,
  endSession,
  verifySession,
  getContext,
  getWorkflow,
} as const;
