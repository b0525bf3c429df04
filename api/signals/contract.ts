/**
 * POST /v1/signals: a named event, with an optional value and fields, for tasks whose
 * `delay` or `condition` trigger listens to its name (lib/domain/signals/index.ts). Shape only;
 * the reserved `task_run:` prefix and the idempotency check are the route's.
 * GET /v1/signals and /v1/signals/:id: the stored signals, newest first.
 */
import { z } from 'zod';
import { LIMITS } from '../../lib/domain/limits';
import { SIGNAL_ID_RE, SIGNAL_ID_RULE, SIGNAL_NAME_RE, SIGNAL_NAME_RULE, TASK_RUN_SIGNAL_PREFIX } from '../../lib/domain/signals';
import { defineRoute, limitParam, required } from '../contract';
import { Operation } from '../../lib/platform/scopes';

const scalar = z.union([z.number(), z.string().max(LIMITS.signalStringMaxChars, `must be at most ${LIMITS.signalStringMaxChars} characters`), z.boolean(), z.null()], {
  error: 'must be a number, a string, a boolean or null',
});

export const SendSignalBody = z
  .strictObject({
    name: z
      .string(required())
      .regex(SIGNAL_NAME_RE, SIGNAL_NAME_RULE)
      .refine((n) => !n.startsWith(TASK_RUN_SIGNAL_PREFIX), `is reserved: names starting with ${TASK_RUN_SIGNAL_PREFIX} are the outcome signals task runs emit`),
    value: scalar.optional().describe('the reading a condition compares (default null)'),
    values: z
      .record(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'keys must be 1-64 letters, digits, "_", ".", "-"'), scalar)
      .refine((o) => Object.keys(o).length <= LIMITS.signalValuesMax, `must have at most ${LIMITS.signalValuesMax} fields`)
      .optional()
      .describe('named fields: a dedupe key ({{values.host}}) or a condition (`field`) reads them'),
    at: z.iso.datetime({ offset: true, error: 'must be an ISO-8601 date-time with a zone (Z or ±hh:mm)' }).optional().describe('when it happened (default: when it was received)'),
    signal_id: z.string().regex(SIGNAL_ID_RE, SIGNAL_ID_RULE).optional().describe('idempotency id: sending it again stores nothing new and delivers it again (default: generated)'),
  })
  .meta({ id: 'SendSignal' });

export const SignalAccepted = z
  .object({
    signal_id: z.string(),
    seq: z.number().int().describe('position in the signals table'),
    name: z.string(),
    at: z.string(),
    deduplicated: z.boolean().describe('true when this signal_id was stored before (a retry)'),
    delivered_to: z.array(z.string()).describe('the enabled tasks whose trigger listens to this name, and whose schedulers took it'),
  })
  .meta({ id: 'SignalAccepted' });

export const sendSignal = defineRoute({
  method: 'post',
  path: '/v1/signals',
  tag: 'tasks',
  summary: 'Send a named event to the delay and condition triggers that listen to it (stored append-only, then delivered)',
  scopes: Operation.SendSignals,
  body: SendSignalBody,
  responses: { 202: SignalAccepted },
  errors: [400, 401, 403, 409, 503],
  example: { name: 'error_rate', value: 0.07, values: { host: 'web-1' }, signal_id: 'web-1-2026-03-09T09:00:00Z' },
});

export const StoredSignal = z
  .object({
    signal_id: z.string(),
    seq: z.number().int().describe('position in the signals table: the list order (newest first)'),
    name: z.string(),
    value: z.union([z.number(), z.string(), z.boolean(), z.null()]),
    values: z.record(z.string(), z.union([z.number(), z.string(), z.boolean(), z.null()])),
    at: z.string().describe('when it happened (the sender\'s `at`, else when it was received)'),
    recorded_at: z.string().describe('when it was stored'),
    source: z.enum(['api', 'task_run']).describe('api: POST /v1/signals; task_run: the outcome signal a finished run emits'),
    agents: z.array(z.string()).nullable().describe('the agent bounds of the key that sent it (ids, and prefixes ending in *): only tasks of those agents take it in; null: every listening task'),
  })
  .meta({ id: 'StoredSignal' });

export const listSignals = defineRoute({
  method: 'get',
  path: '/v1/signals',
  tag: 'tasks',
  summary: 'Stored signals, newest first, with cursor paging; a key bound to agents sees only signals sent by keys within its bounds',
  scopes: Operation.ReadTasks,
  query: z.object({
    name: z.string().regex(SIGNAL_NAME_RE, SIGNAL_NAME_RULE).optional().describe('only signals of this name (including task_run:<task_id>)'),
    source: z.enum(['api', 'task_run']).optional().describe('only signals sent through the API, or only run outcomes'),
    limit: limitParam(LIMITS.pageMax).optional(),
    cursor: z.string().max(200).optional().describe('next_cursor of the previous page'),
  }),
  responses: { 200: z.object({ signals: z.array(StoredSignal), next_cursor: z.string().nullable().describe('pass back as cursor for the next page; null on the last') }) },
  errors: [400, 401, 403, 503],
});

export const getSignal = defineRoute({
  method: 'get',
  path: '/v1/signals/:id',
  tag: 'tasks',
  summary: 'One stored signal by its signal_id (percent-encoded); 404 for a signal outside a bound key\'s bounds',
  scopes: Operation.ReadTasks,
  parameterExamples: { id: 'web-1-2026-03-09T09:00:00Z' },
  params: z.object({ id: z.string().regex(SIGNAL_ID_RE, SIGNAL_ID_RULE) }),
  responses: { 200: StoredSignal },
  errors: [400, 401, 403, 404, 503],
});

export const signalRoutes = { sendSignal, listSignals, getSignal } as const;
