/**
 * The OML-compatible intent routes (/api/*): the same paths, fields and codes as the OML
 * Event Log, so agents, tools and skills written for OML work unchanged. Each route's
 * request and response schemas are defined here once; see api/contract.ts for how they are
 * used (validation, /openapi.json, the client helpers and the tool definitions).
 *
 * Unknown request fields are ignored rather than refused, as OML does.
 */
import { z } from 'zod';
import {
  DEDUPE_KEY_RE,
  DEDUPE_KEY_RULE,
  DOMAIN_RE,
  DOMAIN_RULE,
  INTENT_ID_RE,
  INTENT_ID_RULE,
  INTENT_STATUSES,
} from '../../lib/domain/intents';
import { LIMITS } from '../../lib/domain/limits';
import { Operation } from '../../lib/platform/scopes';
import { defineRoute, hash, jsonValue, mistyped, plainText, required, sessionId } from '../contract';

// ---- fields -----------------------------------------------------------------------------

const statusRule = `must be one of ${INTENT_STATUSES.join(', ')}`;
export const intentId = z.string(required()).regex(INTENT_ID_RE, INTENT_ID_RULE);
export const intentStatus = z.enum(INTENT_STATUSES, { error: statusRule });
const domain = z.string(required()).regex(DOMAIN_RE, DOMAIN_RULE);
const action = plainText(LIMITS.intentActionMaxChars).describe('what the agent is about to do, e.g. send-daily-summary');
const tags = z
  .array(plainText(LIMITS.intentTagMaxChars), mistyped('must be an array of strings'))
  .max(LIMITS.intentTagsMax, `must have at most ${LIMITS.intentTagsMax} tags`);
const data = z.record(z.string(), z.unknown(), mistyped('must be a JSON object'));
const note = z.string().max(LIMITS.intentNoteMaxChars);
const intPart = (what: string, min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a non-negative integer')
    .transform(Number)
    .refine((n) => n >= min && n <= max, `must be ${what} from ${min} to ${max}`);

export const intentIdPath = z.object({ eventId: intentId });

// ---- responses --------------------------------------------------------------------------

export const Transition = z
  .object({
    seq: z.number().int(),
    transition_id: z.string(),
    ts: z.number().int().describe('milliseconds since the epoch, database clock'),
    at: z.string().describe('ts as ISO-8601'),
    from: intentStatus.nullable(),
    to: intentStatus,
    note: z.string().nullable(),
    data: z.record(z.string(), jsonValue),
    actor: z.enum(['agent', 'system']),
    prev_hash: hash.nullable(),
    hash,
    log_index: z.number().int().nullable().describe('its leaf index in the transparency log (GET /v1/log/proof/inclusion); null until the log builder has taken it, within seconds'),
  })
  .meta({ id: 'IntentTransition' });

export const Intent = z
  .object({
    event_id: z.string(),
    domain: z.string(),
    action: z.string(),
    status: intentStatus,
    tags: z.array(z.string()),
    data: z.record(z.string(), jsonValue).describe('data of the creating request: what the work is'),
    note: z.string().nullable().describe('note of the latest transition'),
    last_data: z.record(z.string(), jsonValue).describe('data of the latest transition: the result when done, error and next_step when blocked'),
    session_id: z.string().nullable(),
    dedupe_key: z.string().nullable(),
    ttl_s: z.number().int(),
    agent_id: z.string().nullable().describe('the agent the intent belongs to (keys bound to agents see only theirs)'),
    created_at: z.string(),
    updated_at: z.string(),
    created_ts: z.number().int(),
    updated_ts: z.number().int(),
    lifecycle: z.array(intentStatus).describe('every state in order'),
    lifecycle_text: z.string().describe('e.g. "requested → in-progress → done"'),
    seq: z.number().int().describe('number of transitions'),
    hash: hash.describe('hash of the latest transition (the chain head)'),
    workflow_id: z.string(),
  })
  .meta({ id: 'Intent' });

const deduplicated = z.boolean().describe('true when an earlier request stored this (a retry): nothing was written now');

/** A create's answer: the intent as the create stored it. */
export const IntentWrite = Intent.extend({ deduplicated }).meta({ id: 'IntentWrite' });

export const IntentDetail = Intent.extend({
  transitions: z.array(Transition),
  workflow: z.object({
    workflow_id: z.string(),
    open: z.boolean(),
    next: z.object({ action: z.enum(['expire', 'retry', 'close']), at: z.string() }).nullable(),
  }),
}).meta({ id: 'IntentDetail' });

// ---- routes -----------------------------------------------------------------------------

const createBody = z.object({
  event_id: intentId,
  domain,
  action,
  status: intentStatus.optional().describe('default requested; OML allows creating in any state'),
  tags: tags.optional(),
  data: data.optional(),
  note: note.optional(),
  session_id: sessionId.optional().describe('append every transition to this session timeline (INTENT_TRANSITION)'),
  dedupe_key: z.string().regex(DEDUPE_KEY_RE, DEDUPE_KEY_RULE).optional().describe('refuse a create while an intent with this key is done, requested or in-progress'),
  ttl_s: z
    .number()
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .max(LIMITS.intentTtlMaxS, `must be at most ${LIMITS.intentTtlMaxS}`)
    .optional()
    .describe('seconds it may stay requested or in-progress before it is blocked as expired'),
  agent_id: plainText(LIMITS.agentIdMaxChars)
    .optional()
    .describe("the agent the intent belongs to; a key bound to one agent fills in its own, a key bound to several must name one of them"),
});

const createExample = {
  event_id: 'EMAIL-20231027-001',
  domain: 'communication',
  action: 'send-daily-summary',
  status: 'requested',
  tags: ['automation', 'user-john'],
  data: { recipient: 'john@example.com', report_date: '2023-10-27', template: 'summary_v2' },
};

const createRoute = (path: string, summary: string) =>
  defineRoute({
    method: 'post',
    path,
    tag: 'intents',
    summary,
    scopes: Operation.WriteIntent,
    description:
      'Idempotent per request: the same create again (same event_id and body) answers 200 with the first answer and `deduplicated: true`, writing nothing; a different body for a taken event_id is 409 intent_exists. An optional `Idempotency-Key` header (1-255 printable ASCII) names the request: the same key with a different body is 409 idempotency_key_reused.',
    body: createBody,
    responses: { 201: IntentWrite, 200: IntentWrite },
    errors: [400, 401, 403, 404, 409, 413, 503],
    example: createExample,
  });

export const createIntent = createRoute('/api/events', 'Record an intent before acting (OML: log an event)');
export const createIntentLog = createRoute('/api/events/log', 'Alias of POST /api/events');

export const transitionIntent = defineRoute({
  method: 'patch',
  path: '/api/events/:eventId/status',
  tag: 'intents',
  summary: 'Move an intent to its next state (in-progress, done, blocked; from blocked: requested again, or done)',
  description:
    'Illegal transitions answer 409 with current_status and allowed_next. Blocked needs data.error and data.next_step; with data.retry true and data.retry_after the intent re-opens itself at that time. Idempotent per request: the same body as the transition that put the intent in its current state answers that transition with `deduplicated: true` and writes nothing; with an `Idempotency-Key` header (1-255 printable ASCII) a retry gets its own transition back even after later ones, and the same key with a different body is 409 idempotency_key_reused.',
  scopes: Operation.WriteIntent,
  parameterExamples: { eventId: 'EMAIL-1' },
  params: intentIdPath,
  body: z.object({ status: intentStatus, note: note.optional(), data: data.optional() }),
  responses: { 200: Intent.extend({ transition: Transition, deduplicated }) },
  errors: [400, 401, 403, 404, 409, 413, 503],
  example: { status: 'blocked', note: 'Failed to connect to SMTP server', data: { error: 'Connection timeout after 10s', next_step: 'Retry in 5 minutes.', retry: true, retry_after: '2023-10-27T12:05:00Z' } },
});

export const pendingIntents = defineRoute({
  method: 'get',
  path: '/api/events/pending',
  tag: 'intents',
  summary: 'Intents requested (or in progress) and not yet done or blocked, oldest first: the recovery entry point',
  scopes: Operation.ReadIntents,
  query: z.object({
    older_than: intPart('seconds', 0, LIMITS.intentTtlMaxS).optional().describe('only intents created at least this many seconds ago'),
    domain: domain.optional(),
    limit: intPart('a limit', 1, LIMITS.intentPageMax).optional(),
  }),
  responses: { 200: z.array(Intent) },
  errors: [400, 401, 403, 503],
});

export const listIntents = defineRoute({
  method: 'get',
  path: '/api/events',
  tag: 'intents',
  summary: 'Intents, newest first, each with its merged lifecycle',
  scopes: Operation.ReadIntents,
  parameterExamples: { domain: 'communication', status: 'requested' },
  query: z.object({
    domain: domain.optional(),
    status: intentStatus.optional().describe('current state'),
    tags: z
      .string()
      .transform((s) => s.split(',').map((t) => t.trim()).filter(Boolean))
      .optional()
      .describe('comma separated; all must match'),
    search: z.string().min(1).max(200).optional().describe('substring of the action or of any note'),
    limit: intPart('a limit', 1, LIMITS.intentPageMax).optional(),
    offset: intPart('an offset', 0, 1_000_000).optional(),
    cursor: z.string().max(1000).optional().describe('next_cursor of the previous page: the intents after it (instead of offset, which shifts as intents arrive)'),
  }),
  responses: {
    200: z.object({
      events: z.array(Intent),
      total: z.number().int(),
      limit: z.number().int(),
      offset: z.number().int(),
      next_cursor: z.string().nullable().describe('pass back as cursor for the next page; null on the last'),
    }),
  },
  errors: [400, 401, 403, 503],
});

export const getIntent = defineRoute({
  method: 'get',
  path: '/api/events/:eventId',
  tag: 'intents',
  summary: 'One intent with every transition (time, from, to, note, data, hash)',
  scopes: Operation.ReadIntents,
  parameterExamples: { eventId: 'EMAIL-1' },
  params: intentIdPath,
  responses: { 200: IntentDetail },
  errors: [400, 401, 403, 404, 503],
});

export const verifyIntent = defineRoute({
  method: 'get',
  path: '/api/events/:eventId/verify',
  tag: 'intents',
  summary: "Recompute the intent's hash chain (and check its header against the first transition)",
  scopes: Operation.ReadIntents,
  parameterExamples: { eventId: 'EMAIL-1' },
  params: intentIdPath,
  responses: {
    200: z.object({
      event_id: z.string(),
      ok: z.boolean(),
      checked: z.number().int(),
      head_seq: z.number().int().nullable(),
      head_hash: hash.nullable(),
      header_ok: z.boolean(),
      first_bad_seq: z.number().int().optional(),
      reason: z.string().optional(),
      detail: z.string().optional(),
    }),
  },
  errors: [400, 401, 403, 404, 503],
});

export const intentStats = defineRoute({
  method: 'get',
  path: '/api/stats',
  tag: 'intents',
  summary: 'Intent counts by current status and by domain',
  scopes: Operation.ReadIntents,
  responses: {
    200: z.object({ total: z.number().int(), pending: z.number().int(), by_status: z.record(z.string(), z.number().int()), by_domain: z.record(z.string(), z.number().int()) }),
  },
  errors: [401, 403, 503],
});

export const omlHealth = defineRoute({
  method: 'get',
  path: '/api/health',
  tag: 'intents',
  summary: 'Service, database and Temporal status, and the database URL without secrets (OML health)',
  description: 'Each check answers within its own deadline (LIMITS.readinessCheckMs, 800 ms), as /readyz: a check that passed it reads "timed out after 800 ms" and is named in `timed_out`.',
  scopes: Operation.Public,
  responses: {
    200: z.object({
      status: z.enum(['ok', 'degraded']),
      database: z.string(),
      temporal: z.string(),
      timed_out: z.array(z.enum(['database', 'temporal'])).describe('the checks whose deadline (800 ms each, as /readyz) passed'),
      db_path: z.string().describe('the event database URL, password removed'),
      read_only: z.boolean(),
    }),
  },
  errors: [],
});

// ---- workspace (read-only files) --------------------------------------------------------------

export const workspaceState = defineRoute({
  method: 'get',
  path: '/api/state',
  tag: 'intents',
  summary: 'The Markdown file at STATE_MD_PATH: raw and rendered (sanitised) HTML',
  scopes: Operation.ReadIntents,
  responses: { 200: z.object({ path: z.string(), exists: z.boolean(), raw: z.string(), html: z.string(), modified: z.string().nullable() }) },
  errors: [401, 403, 413],
});

const ArtifactFile = z.object({ name: z.string(), size: z.number().int(), modified: z.string(), markdown: z.boolean() });

export const listArtifacts = defineRoute({
  method: 'get',
  path: '/api/artifacts',
  tag: 'intents',
  summary: 'Files directly under ARTIFACTS_DIR (links that leave it are not listed)',
  scopes: Operation.ReadIntents,
  responses: { 200: z.object({ files: z.array(ArtifactFile) }) },
  errors: [401, 403],
});

export const getArtifact = defineRoute({
  method: 'get',
  path: '/api/artifacts/:filename',
  tag: 'intents',
  summary: 'One artifact: Markdown as raw text and sanitised HTML, any other file as a download',
  description: 'The name is one path segment inside ARTIFACTS_DIR; a name that would leave the folder (.., encoded separators, symbolic links) answers 400 or 404.',
  scopes: Operation.ReadIntents,
  parameterExamples: { filename: 'report.md' },
  params: z.object({ filename: z.string() }),
  responses: { 200: ArtifactFile.extend({ raw: z.string(), html: z.string() }) },
  errors: [400, 401, 403, 404, 413],
});

export const intentRoutes = {
  createIntent,
  createIntentLog,
  transitionIntent,
  pendingIntents,
  listIntents,
  getIntent,
  verifyIntent,
  intentStats,
  omlHealth,
  workspaceState,
  listArtifacts,
  getArtifact,
} as const;
