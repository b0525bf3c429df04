/** zod schemas for request parsing; every failure names the field and the reason. */
import type { Request } from 'express';
import { z, ZodType } from 'zod';
import { APPENDABLE_EVENT_TYPES, EVENT_TYPES, IDEMPOTENCY_KEY_RE, SESSION_ID_RE } from '../workflows/messages';
import { fromZod } from './errors';

export const sessionId = z
  .string({ error: 'is required' })
  .regex(SESSION_ID_RE, 'must be 1-128 characters: letters, digits and . _ : - (starting with a letter or digit)');

const intString = (what: string, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .regex(/^-?\d+$/, `must be an integer`)
    .transform(Number)
    .refine((n) => n >= min && n <= max, `must be ${what} between ${min} and ${max}`);

export const tsParam = intString('a millisecond timestamp', 0);
export const seqParam = intString('a sequence number', 0);
export const limitParam = (max: number) => intString('a limit', 1, max);

export const eventTypeParam = z.enum(APPENDABLE_EVENT_TYPES as [string, ...string[]], {
  error: `must be one of ${APPENDABLE_EVENT_TYPES.join(', ')}`,
});
export const typesFilter = z
  .string()
  .transform((s) => s.split(',').map((t) => t.trim()).filter(Boolean))
  .refine((ts) => ts.length > 0 && ts.every((t) => (EVENT_TYPES as readonly string[]).includes(t)), {
    message: `must be a comma-separated list of ${EVENT_TYPES.join(', ')}`,
  });
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

export const idempotencyKey = z.string().regex(IDEMPOTENCY_KEY_RE, 'must be 1-200 printable ASCII characters');
export const eventIdParam = z.string().uuid('must be a UUID').transform((s) => s.toLowerCase());

/** Any JSON value; `undefined` (absent) is refused by the caller where content is required. */
export const jsonValue: ZodType<unknown> = z.unknown();

/** Parses with a schema; a failure becomes a 400 naming `prefix + path`. */
export function parse<T>(schema: ZodType<T>, value: unknown, prefix = ''): T {
  const r = schema.safeParse(value);
  if (!r.success) throw fromZod(r.error, prefix);
  return r.data;
}

/** Query parameters arrive as string | string[]; repeated parameters are refused, not guessed at. */
export function queryObject(req: Request): Record<string, unknown> {
  return { ...(req.query as Record<string, unknown>) };
}
