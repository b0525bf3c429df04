import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalize, CanonicalJsonError, MAX_CANONICAL_JSON_DEPTH } from '../../lib/domain/canonical-json';

interface VectorCase {
  name: string;
  input?: unknown;
  input_json?: string;
  input_number_literal?: string;
  input_ieee_hex?: string;
  canonical: string;
}
interface RejectCase {
  name: string;
  input_json: string;
  path: string;
}
const vectors: { cases: VectorCase[]; rejects: RejectCase[] } = JSON.parse(
  readFileSync(join(__dirname, '../vectors/canonical-json.json'), 'utf8'),
);

function caseInput(c: VectorCase): unknown {
  if ('input' in c) return c.input;
  if (c.input_json !== undefined) return JSON.parse(c.input_json);
  if (c.input_number_literal !== undefined) return Number(c.input_number_literal);
  if (c.input_ieee_hex !== undefined) return Buffer.from(c.input_ieee_hex, 'hex').readDoubleBE(0);
  throw new Error(`vector ${c.name} has no input`);
}

/** Runs fn, asserts it throws a CanonicalJsonError, and returns it. */
function rejection(fn: () => unknown): CanonicalJsonError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(CanonicalJsonError);
    return err as CanonicalJsonError;
  }
  throw new Error('expected a CanonicalJsonError, nothing was thrown');
}

function nestArrays(levels: number): unknown {
  let v: unknown = [];
  for (let i = 1; i < levels; i++) v = [v];
  return v;
}
function nestObjects(levels: number): unknown {
  let v: unknown = {};
  for (let i = 1; i < levels; i++) v = { a: v };
  return v;
}

describe('canonicalize: golden vectors (RFC 8785)', () => {
  it('has a healthy number of vectors', () => {
    expect(vectors.cases.length).toBeGreaterThan(40);
    expect(vectors.rejects.length).toBeGreaterThan(0);
  });

  it.each(vectors.cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    expect(canonicalize(caseInput(c))).toBe(c.canonical);
  });

  it.each(vectors.cases.map((c) => [c.name, c] as const))('is idempotent: %s', (_name, c) => {
    // Parsing canonical output and canonicalising again must give the same text.
    expect(canonicalize(JSON.parse(c.canonical))).toBe(c.canonical);
  });

  it.each(vectors.rejects.map((r) => [r.name, r] as const))('rejects %s', (_name, r) => {
    expect(rejection(() => canonicalize(JSON.parse(r.input_json))).path).toBe(r.path);
  });
});

describe('canonicalize: behaviour', () => {
  it('accepts null-prototype objects like plain ones', () => {
    const o = Object.create(null) as Record<string, unknown>;
    o.b = 1;
    o.a = [true];
    expect(canonicalize(o)).toBe('{"a":[true],"b":1}');
  });

  it('sorts by UTF-16 code units, not code points or locale', () => {
    // U+1F600 is D83D DE00 in UTF-16, so it sorts before U+FB33 (a code point sort would not).
    expect(canonicalize({ '\ufb33': 1, '\u{1f600}': 2 })).toBe('{"\u{1f600}":2,"\ufb33":1}');
    // localeCompare would put "a" before "B".
    expect(canonicalize({ a: 1, B: 2 })).toBe('{"B":2,"a":1}');
  });

  it('accepts exactly MAX_CANONICAL_JSON_DEPTH levels of nesting', () => {
    expect(MAX_CANONICAL_JSON_DEPTH).toBe(64);
    expect(canonicalize(nestArrays(64))).toBe('['.repeat(64) + ']'.repeat(64));
    expect(canonicalize(nestObjects(64))).toBe('{"a":'.repeat(63) + '{}' + '}'.repeat(63));
  });

  it('does not call toJSON (it is a function member, so it is rejected)', () => {
    const err = rejection(() => canonicalize({ x: 1, toJSON: () => 'pwned' }));
    expect(err.path).toBe('$.toJSON');
  });
});

describe('canonicalize: rejections', () => {
  const cases: Array<[string, () => unknown, string]> = [
    ['NaN', () => NaN, '$'],
    ['Infinity', () => ({ a: Infinity }), '$.a'],
    ['-Infinity', () => [1, -Infinity], '$[1]'],
    ['undefined at top level', () => undefined, '$'],
    ['undefined member', () => ({ a: { b: undefined } }), '$.a.b'],
    ['undefined array element', () => [undefined], '$[0]'],
     
    ['hole in a sparse array', () => [1, , 3], '$[1]'],
    ['function', () => ({ f() {} }), '$.f'],
    ['symbol value', () => ({ s: Symbol('x') }), '$.s'],
    ['symbol key', () => ({ [Symbol('k')]: 1, a: 1 }), '$'],
    ['bigint', () => ({ n: 10n }), '$.n'],
    ['lone high surrogate in a string', () => ({ s: 'a\ud800b' }), '$.s'],
    ['lone low surrogate at the end of a string', () => ['x\udc00'], '$[0]'],
    ['reversed surrogate pair', () => '\ude00\ud83d', '$'],
    ['lone surrogate in a key', () => ({ ['\ud83d']: 1 }), '$["\\ud83d"]'],
    ['Date', () => ({ d: new Date(0) }), '$.d'],
    ['Map', () => new Map([['a', 1]]), '$'],
    ['Set', () => ({ s: new Set([1]) }), '$.s'],
    ['RegExp', () => [/x/], '$[0]'],
    ['Uint8Array', () => ({ b: new Uint8Array([1]) }), '$.b'],
    ['Buffer', () => Buffer.from('x'), '$'],
    ['boxed String', () => ({ s: new String('x') }), '$.s'],
    ['class instance', () => ({ p: new (class Point { x = 1; })() }), '$.p'],
    ['array subclass', () => ({ a: new (class MyArray extends Array {})() }), '$.a'],
    ['arrays nested 65 deep', () => nestArrays(65), '$' + '[0]'.repeat(64)],
    ['objects nested 65 deep', () => nestObjects(65), '$' + '.a'.repeat(64)],
  ];

  it.each(cases)('%s', (_name, make, path) => {
    const err = rejection(() => canonicalize(make()));
    expect(err.path).toBe(path);
    expect(err.name).toBe('CanonicalJsonError');
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toContain(path);
  });

  it('reports a cycle as a depth error instead of overflowing the stack', () => {
    const a: Record<string, unknown> = { x: 1 };
    a.self = a;
    const err = rejection(() => canonicalize(a));
    expect(err.message).toMatch(/nesting deeper than 64/);
  });

  it('builds paths like $.a[3].b and quotes non-identifier keys', () => {
    expect(rejection(() => canonicalize({ a: [0, 1, 2, { b: NaN }] })).path).toBe('$.a[3].b');
    expect(rejection(() => canonicalize({ 'odd key': [undefined] })).path).toBe('$["odd key"][0]');
  });
});
