/** Request helpers for the routers: parse with a contract schema; every failure names the field. */
import type { Request } from 'express';
import type { ZodType } from 'zod';
import { fromZod } from './problem';

/** Parses with a schema; a failure becomes a 400 naming `prefix + path`. */
export function parse<T>(schema: ZodType<T>, value: unknown, prefix = ''): T {
  const r = schema.safeParse(value);
  if (!r.success) throw fromZod(r.error, prefix);
  return r.data;
}

/** Query parameters arrive as string | string[]; repeated parameters are refused by the schemas, not guessed at. */
export function queryObject(req: Request): Record<string, unknown> {
  return { ...(req.query as Record<string, unknown>) };
}

/** A JSON body, or {} when there is none. */
export function jsonBody(req: Request): unknown {
  return req.body === undefined ? {} : req.body;
}
