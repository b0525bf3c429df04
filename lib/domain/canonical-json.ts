/**
 * RFC 8785 JSON Canonicalization Scheme (JCS).
 *
 * The event hash chain (lib/hash-chain.ts) hashes the canonical form of each event, so this
 * function must produce byte-identical output for equal JSON data in every implementation
 * (TypeScript here, Python/Go/... in verifiers). Hand-written and dependency-free on purpose:
 * a change in a third-party serialiser would silently change every hash.
 *
 * RFC 8785 in short:
 *   - no whitespace;
 *   - object members sorted by their keys compared as arrays of UTF-16 code units;
 *   - numbers serialised exactly like ECMAScript Number.prototype.toString (IEEE 754 doubles);
 *   - strings serialised with the minimal JSON escaping that ECMAScript JSON.stringify uses;
 *   - only I-JSON data: finite numbers, well-formed Unicode strings.
 *
 * Anything that is not plain JSON data is rejected with a CanonicalJsonError instead of being
 * coerced the way JSON.stringify would coerce it (dropping undefined, calling toJSON, turning
 * NaN into null, Date into a string): a hash over silently altered data is worse than an error.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };

/**
 * Maximum nesting depth of arrays/objects. The root container is depth 1, so a value may sit
 * inside at most 64 containers. Also bounds recursion, so cyclic structures fail with a
 * CanonicalJsonError rather than a stack overflow.
 */
export const MAX_CANONICAL_JSON_DEPTH = 64;

export class CanonicalJsonError extends Error {
  /** JSONPath-like location of the offending value, e.g. `$.a[3].b` or `$["odd key"]`. */
  readonly path: string;

  constructor(message: string, path: string) {
    super(`${message} at ${path}`);
    this.name = 'CanonicalJsonError';
    this.path = path;
  }
}

/** Serialise `value` to its RFC 8785 canonical JSON text. Throws CanonicalJsonError. */
export function canonicalize(value: unknown): string {
  return serialize(value, '$', 0);
}

function serialize(value: unknown, path: string, depth: number): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      // JSON has no NaN/Infinity; RFC 8785 section 3.2.2.3 says they must be rejected.
      if (!Number.isFinite(value)) throw new CanonicalJsonError(`non-finite number ${value}`, path);
      // For finite numbers JSON.stringify applies Number::toString, which is exactly the
      // RFC 8785 number format (shortest round-trip digits, exponent from 1e21 / below 1e-6),
      // and it already prints -0 as "0" as RFC 8785 requires.
      return JSON.stringify(value);
    case 'string':
      return serializeString(value, path);
    case 'undefined':
      // JSON.stringify would drop the member or write null; either changes the data.
      throw new CanonicalJsonError('undefined is not JSON', path);
    case 'bigint':
      // No lossless JSON mapping that every verifier agrees on; callers convert explicitly.
      throw new CanonicalJsonError('bigint is not JSON (convert to number or string first)', path);
    case 'function':
      throw new CanonicalJsonError('function is not JSON', path);
    case 'symbol':
      throw new CanonicalJsonError('symbol is not JSON', path);
    case 'object':
      break;
    default:
      throw new CanonicalJsonError(`unsupported type ${typeof value}`, path);
  }

  const obj = value as object;
  if (depth + 1 > MAX_CANONICAL_JSON_DEPTH) {
    throw new CanonicalJsonError(`nesting deeper than ${MAX_CANONICAL_JSON_DEPTH} levels (or a cycle)`, path);
  }

  const proto = Object.getPrototypeOf(obj);
  if (Array.isArray(obj)) {
    // Subclasses of Array might carry behaviour; accept only real arrays.
    if (proto !== Array.prototype) throw new CanonicalJsonError('array subclass is not plain JSON', path);
    const parts: string[] = [];
    // Index loop (not forEach/map) so holes in sparse arrays are visited and rejected as
    // undefined instead of being skipped or turned into null.
    for (let i = 0; i < obj.length; i++) {
      parts.push(serialize(obj[i], `${path}[${i}]`, depth + 1));
    }
    return `[${parts.join(',')}]`;
  }

  // Only plain objects: Date, Map, RegExp, Buffer, boxed primitives and class instances have
  // another prototype. Their JSON.stringify output (toJSON, {} for Map) is lossy or surprising.
  if (proto !== Object.prototype && proto !== null) {
    const name = (proto && (proto as { constructor?: { name?: string } }).constructor?.name) || 'unknown';
    throw new CanonicalJsonError(`non-plain object (${name}) is not JSON`, path);
  }
  if (Object.getOwnPropertySymbols(obj).length > 0) {
    // Symbol keys would be silently ignored by Object.keys; refuse rather than drop data.
    throw new CanonicalJsonError('object has symbol keys', path);
  }

  const record = obj as Record<string, unknown>;
  // RFC 8785 section 3.2.3: sort by UTF-16 code units. JS `<` on strings compares code units,
  // which is exactly that (localeCompare would apply locale collation rules and is wrong).
  // Note this is NOT code point order: U+1F600 (surrogates D83D DE00) sorts before U+FB33.
  const keys = Object.keys(record).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const parts: string[] = [];
  for (const key of keys) {
    const childPath = memberPath(path, key);
    // Keys are strings too and must be well-formed; report the error at the member's path.
    parts.push(`${serializeString(key, childPath)}:${serialize(record[key], childPath, depth + 1)}`);
  }
  return `{${parts.join(',')}}`;
}

function serializeString(s: string, path: string): string {
  const bad = loneSurrogateIndex(s);
  if (bad >= 0) {
    const unit = s.charCodeAt(bad).toString(16).padStart(4, '0');
    throw new CanonicalJsonError(`string has a lone surrogate \\u${unit} at index ${bad}`, path);
  }
  // JSON.stringify escapes exactly what RFC 8785 section 3.2.2.2 prescribes: \" \\ \b \f \n \r \t,
  // other U+0000..U+001F as \u00xx (lowercase hex), everything else (including non-ASCII,
  // U+007F, U+2028/2029) left as is. Its only other escaping - lone surrogates as \udxxx since
  // ES2019 - cannot happen here because they were rejected above.
  return JSON.stringify(s);
}

/**
 * Index of the first unpaired UTF-16 surrogate, or -1. Such strings cannot be encoded as UTF-8
 * (the hash is taken over UTF-8 bytes), so RFC 8785 treats them as invalid input.
 */
function loneSurrogateIndex(s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c <= 0xdbff) {
      const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++; // well-formed pair, skip the low half
        continue;
      }
    }
    return i; // high surrogate without a low one, or a low surrogate on its own
  }
  return -1;
}

/** `$.name` for identifier-like keys, `$["other key"]` otherwise, for readable error paths. */
function memberPath(parent: string, key: string): string {
  if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key)) return `${parent}.${key}`;
  // JSON.stringify is safe here even for lone surrogates (it escapes them).
  return `${parent}[${JSON.stringify(key)}]`;
}
