/**
 * The text rules every input must keep, whatever surface it came in on (HTTP bodies, query
 * strings and forms, MCP tool arguments, a typed client called by another capability):
 *
 *   - no U+0000 (NUL): PostgreSQL text and jsonb cannot hold it;
 *   - no lone surrogate (a UTF-16 half without its pair): it is not Unicode, cannot be encoded
 *     as UTF-8, and RFC 8785 canonical JSON (the hash input) refuses it.
 *
 * Checked in every string and every object member name, with the path of the field that
 * breaks a rule, so a refusal names the field and the rule before anything reaches Temporal or
 * PostgreSQL. The byte-level rules (valid UTF-8, no duplicate member names) are the HTTP
 * gate's (api/input-gate.ts): after JSON.parse they can no longer be seen.
 *
 * Sandbox-safe (workflow validators and activities use it): no dependencies. The walk is
 * iterative, so a deeply nested value is checked without growing the stack.
 */
import type { FieldError } from './errors';

/** Why `s` breaks a text rule (naming the code unit and its index), or null. */
export function textRuleBroken(s: string): string | null {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0) return `contains U+0000 (NUL) at index ${i}; text must not contain NUL`;
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c <= 0xdbff) {
      const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
    }
    return `contains a lone surrogate \\u${c.toString(16).padStart(4, '0')} at index ${i}; text must be well-formed Unicode`;
  }
  return null;
}

/** `parent.key` as field paths are written in refusals (the same as a zod issue path joined with dots). */
export const childPath = (parent: string, key: string | number): string => (parent ? `${parent}.${key}` : String(key));

/**
 * The first string or member name in `value` that breaks a text rule, as a field error whose
 * field is the path under `root` ('' for a whole body: then a top-level member names itself).
 * A bad member name is reported on the object that holds it (the name itself is unprintable).
 */
export function hostileTextProblem(value: unknown, root = ''): FieldError | null {
  const stack: [unknown, string][] = [[value, root]];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      const why = textRuleBroken(v);
      if (why) return { field: path || 'body', reason: why };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], childPath(path, i)]);
    } else if (v !== null && typeof v === 'object') {
      const keys = Object.keys(v);
      for (const k of keys) {
        const why = textRuleBroken(k);
        if (why) return { field: path || 'body', reason: `has a member name that ${why}` };
      }
      for (let i = keys.length - 1; i >= 0; i--) stack.push([(v as Record<string, unknown>)[keys[i]], childPath(path, keys[i])]);
    }
  }
  return null;
}
