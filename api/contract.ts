/**
 * What every route contract is made of: the route definition itself, the field schemas
 * shared by all capabilities, and the problem-details response. Each capability's
 * `api/<capability>/contract.ts` defines its routes with these; the routers validate with
 * them, the typed HTTP client (api/client.ts) takes its types from them, and
 * /openapi.json (api/openapi.ts) is generated from them. Pure zod: no Express, no I/O.
 */
import { z, ZodType } from 'zod';
import { IDEMPOTENCY_KEY_RE, IDEMPOTENCY_KEY_RULE, SESSION_ID_RE, SESSION_ID_RULE } from '../lib/domain/sessions';
import type { Operation } from './auth';
import { issueMessage, required } from './issue-messages';

// Every refusal states the rule that failed (api/issue-messages.ts): zod's one global error map.
z.config({ customError: issueMessage });

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
  /** Error statuses the route may answer with a problem (documentation). */
  errors: number[];
  /** Example request body for the docs. */
  example?: unknown;
  /** Example values of path and query parameters, by name, for the docs (/docs fills them in). */
  parameterExamples?: Record<string, string | number>;
}

export const defineRoute = <R extends RouteContract>(r: R): R => r;

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

/**
 * Free text stored in a text column or sent as a search attribute: PostgreSQL cannot hold
 * U+0000 and a lone surrogate is not Unicode, and either would stall the session's writer.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
export const plainText = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((s) => !s.includes('\u0000') && !LONE_SURROGATE.test(s), 'must not contain U+0000 or a lone surrogate');

export const idempotencyKey = z.string().regex(IDEMPOTENCY_KEY_RE, IDEMPOTENCY_KEY_RULE);
export const eventIdParam = z.string().uuid('must be a UUID').transform((s) => s.toLowerCase());
export const hash = z.string().regex(/^[0-9a-f]{64}$/);
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
