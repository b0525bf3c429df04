/**
 * What every route contract is made of: the route definition itself, the field schemas
 * shared by all capabilities, and the problem-details response. Each capability's
 * `api/<capability>/contract.ts` defines its routes with these; the routers validate with
 * them, the typed HTTP client (sdk/client.ts) takes its types from them, and
 * /openapi.json (api/openapi.ts) is generated from them. Pure zod: no Express, no I/O.
 */
import { z, ZodType } from 'zod';
import { IDEMPOTENCY_KEY_RE, IDEMPOTENCY_KEY_RULE, SESSION_ID_RE, SESSION_ID_RULE } from '../lib/domain/sessions';
import type { Operation } from './auth';
import { required } from '../lib/domain/platform/refusals';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** One HTTP route: where it is, what it takes, what it answers. */
export interface RouteContract {
  method: Method;
  /** Express-style path: `/v1/sessions/:id`. */
  path: string;
  summary: string;
  description?: string;
  tag: string;
  /** Scopes that may call it (see api/auth.ts). */
  scopes: Operation;
  /** Path parameters, by name. */
  params?: z.ZodObject;
  /** Query parameters (seed routes also accept them in a form or JSON body). */
  query?: z.ZodObject;
  body?: ZodType;
  /** Success responses by status. */
  responses: Record<number, ZodType>;
  /** The success responses' media type; default application/json. text/plain ones are a z.string(). */
  contentType?: 'application/json' | 'text/plain';
  /** Error statuses the route may answer with a problem (documentation). */
  errors: number[];
  /** Example request body for the docs. */
  example?: unknown;
  /** Example values of path and query parameters, by name, for the docs (/docs fills them in). */
  parameterExamples?: Record<string, string | number>;
}

export const defineRoute = <R extends RouteContract>(r: R): R => r;

// ---- refusal messages ---------------------------------------------------------------

/** How every refusal is worded (zod's error map, installed on import): lib/domain/platform/refusals.ts. */
export { issueMessage, kindOf, mistyped, plainText, required } from '../lib/domain/platform/refusals';

// ---- field schemas ---------------------------------------------------------------------

export const sessionId = z.string(required()).regex(SESSION_ID_RE, SESSION_ID_RULE);

const intString = (what: string, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .regex(/^-?\d+$/, `must be an integer`)
    .transform(Number)
    .refine((n) => n >= min && n <= max, `must be ${what} between ${min} and ${max}`);

export const tsParam = intString('a millisecond timestamp', 0);
export const seqParam = intString('a sequence number', 0);
export const limitParam = (max: number) => intString('a limit', 1, max);

export const idempotencyKey = z.string().regex(IDEMPOTENCY_KEY_RE, IDEMPOTENCY_KEY_RULE);
export const eventIdParam = z.string().uuid('must be a UUID').transform((s) => s.toLowerCase());
export const hash = z.string().regex(/^[0-9a-f]{64}$/);
/**
 * When an event happened (docs/api.md "Event time"): an RFC 3339 date-time with `Z` or an
 * offset, as milliseconds since the epoch (what is stored and hashed; finer fractions are cut
 * to the millisecond, the offset is not kept). zod's own ISO check holds the calendar rules.
 */
export const occurredAt = z.iso
  .datetime({ offset: true, error: 'must be an RFC 3339 date-time with Z or an offset, e.g. 2026-12-01T18:27:59.120Z or 2026-12-01T19:27:59+01:00' })
  .transform((s) => Date.parse(s))
  .refine((ms) => ms >= 0, 'must not be before 1970-01-01T00:00:00Z')
  .describe('when the event happened (RFC 3339 with Z or an offset), from the hook or client; stored and hashed beside ts, which stays the order');
export const jsonValue = z.json();

// ---- errors -------------------------------------------------------------------------

export const FieldErrorSchema = z.object({ field: z.string(), reason: z.string() });

/** RFC 9457 problem details, with the seed envelope's `code` (the status) and `msg`. */
export const ProblemSchema = z
  .object({
    type: z.string().describe('https://timekeeper.dev/problems/<error code>'),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    instance: z.string().optional(),
    errors: z.array(FieldErrorSchema).optional(),
    code: z.number().int(),
    msg: z.string(),
  })
  .loose()
  .meta({ id: 'Problem' });

/** The chain checked against a checkpoint of the transparency log (lib/tlog/chain-check.ts). */
export const LogCheckSchema = z
  .object({
    ok: z.boolean(),
    checkpoint: z
      .object({ tree_size: z.number().int(), root_hash: z.string().describe('base64'), witnessed: z.boolean().describe('the cosignatures that verify with the LOG_WITNESSES keys meet LOG_WITNESS_QUORUM (counted by verify, not read from the database)'), cosignatures: z.number().int().describe('distinct configured witnesses whose cosignature on it verifies') })
      .nullable()
      .describe('the checkpoint checked against (its signature checked with the log key): with LOG_WITNESSES configured the newest witnessed one (the latest while none is), else the latest; null: the log has none yet'),
    proven: z.number().int().describe('records included in that checkpoint whose inclusion proof verified'),
    pending: z.number().int().describe('records not in that checkpoint yet (logged within seconds)'),
    first_bad_seq: z.number().int().optional().describe('the first record that is not the one the checkpoint committed to: its seq (a session event, an intent transition), version (task history) or log row id (run log)'),
    detail: z.string().optional(),
  })
  .meta({ id: 'LogCheck' });
