/**
 * How a refusal of a request's value is worded and reported, below every caller that checks
 * one with zod: the API's routers (api/contract.ts re-exports this, api/http.ts parse), the
 * task definition (lib/task-definition.ts, also for the worker's follow-up tasks). Importing
 * it installs issueMessage as zod's error map. Pure: zod, the error catalogue and the text rules
 * of lib/domain/input-gate.ts only.
 */
import { z, type ZodError, type ZodType } from 'zod';
import { DomainError, ErrorCode } from '../errors';
import { textRuleBroken } from '../input-gate';

/**
 * zod issue → the message a refusal gives: the one place that words them, so every message
 * states the rule that failed (the type expected and the type sent, the length and the limit,
 * the pattern, the allowed values) instead of zod's generic English or a schema's catch-all.
 * Installed below as zod's global error map; a check's own message (a pattern's
 * rule, a refine's reason) still wins over it.
 *
 * Schema-level messages are the trap this avoids: zod applies `z.string({ error: 'is required' })`
 * to every issue of the schema, so a number was "required" and a 4,001-character note "must be a
 * string". `required` and `mistyped` say their words only where they are true.
 */
type RawIssue = z.core.$ZodRawIssue;

const article = (w: string) => (/^[aeiou]/.test(w) ? `an ${w}` : `a ${w}`);

/** What was sent, in the words of the rule: "a number", "null", "an array". */
export function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  return article(typeof v);
}

const EXPECTED: Record<string, string> = { int: 'an integer', object: 'a JSON object', array: 'an array', record: 'a JSON object' };

const units = (origin: string) => (origin === 'string' ? ' characters' : origin === 'array' || origin === 'set' ? ' items' : '');

export function issueMessage(iss: RawIssue): string | undefined {
  switch (iss.code) {
    case 'invalid_type': {
      if (iss.input === undefined) return 'is required';
      const expected = EXPECTED[iss.expected] ?? article(iss.expected);
      return `must be ${expected}, not ${kindOf(iss.input)}`;
    }
    case 'too_big': {
      const origin = String(iss.origin);
      const got = typeof iss.input === 'string' || Array.isArray(iss.input) ? ` (this one has ${iss.input.length})` : '';
      if (origin === 'string' || origin === 'array' || origin === 'set') return `must have at most ${iss.maximum}${units(origin)}${got}`;
      return iss.inclusive === false ? `must be less than ${iss.maximum}` : `must be at most ${iss.maximum}`;
    }
    case 'too_small': {
      const origin = String(iss.origin);
      if ((origin === 'string' || origin === 'array') && Number(iss.minimum) === 1) return origin === 'string' ? 'must not be empty' : 'must have at least 1 item';
      if (origin === 'string' || origin === 'array' || origin === 'set') return `must have at least ${iss.minimum}${units(origin)}`;
      return iss.inclusive === false ? `must be greater than ${iss.minimum}` : `must be at least ${iss.minimum}`;
    }
    case 'invalid_format':
      if (iss.format === 'regex') return `must match the pattern ${(iss as { pattern?: string }).pattern ?? ''}`.trimEnd();
      return `must be a valid ${iss.format}`;
    case 'not_multiple_of':
      return `must be a multiple of ${iss.divisor}`;
    case 'invalid_value':
      return `must be one of ${iss.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'invalid_union':
      return 'matches none of the allowed shapes';
    case 'invalid_key':
      return 'has a member name that breaks the rule for names';
    case 'invalid_element':
      return 'has an element that breaks the rule for elements';
    case 'unrecognized_keys':
      return 'is not a known field';
    default:
      return undefined;
  }
}

type ErrorMap = { error: (iss: RawIssue) => string | undefined };

/** "is required" only when the field is missing; any other issue gets its rule from issueMessage. */
export const required = (what = ''): ErrorMap => ({ error: (iss) => (iss.input === undefined ? `is required${what}` : undefined) });

/** A wrong type's own wording (`message`), "is required" when missing; every other issue its rule. */
export const mistyped = (message: string): ErrorMap => ({
  error: (iss) => (iss.code !== 'invalid_type' ? undefined : iss.input === undefined ? 'is required' : message),
});

z.config({ customError: issueMessage });

/**
 * Free text stored in a text column or sent as a search attribute: PostgreSQL cannot hold
 * U+0000 and a lone surrogate is not Unicode, and either would stall the session's writer.
 */
export const plainText = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((s) => textRuleBroken(s) === null, 'must not contain U+0000 or a lone surrogate');

/** A zod failure as a validation DomainError naming each field `prefix + path`. */
export function fromZod(err: ZodError, prefix = ''): DomainError {
  // With no path the failure is the value itself: the prefix names it (e.g. a path parameter).
  const at = (path: PropertyKey[]) => (path.length ? prefix + path.join('.') : prefix || 'body');
  // A strict object reports unknown keys on the object itself: name each key instead.
  const errors = err.issues.flatMap((i) =>
    i.code === 'unrecognized_keys'
      ? i.keys.map((k) => ({ field: at([...i.path, k]), reason: 'is not a known field' }))
      : [{ field: at(i.path), reason: i.message }],
  );
  return new DomainError(ErrorCode.Validation, errors.map((e) => `${e.field}: ${e.reason}`).join('; '), errors);
}

/** Parses with a schema; a failure becomes a 400 naming `prefix + path`. */
export function parse<T>(schema: ZodType<T>, value: unknown, prefix = ''): T {
  const r = schema.safeParse(value);
  if (!r.success) throw fromZod(r.error, prefix);
  return r.data;
}
