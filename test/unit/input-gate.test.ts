/** The input gate's pieces: the text rules, the UTF-8 check, the duplicate-name scan, the zod messages. */
import { z } from 'zod';
import { deterministicFailure, requestFieldOf } from '../../activities/intents';
import '../../api/contract'; // installs the one zod error map
import { parseJsonBytes, parseJsonText, scanJson, utf8ErrorOffset } from '../../api/input-gate';
import { fromZod } from '../../api/problem';
import { CanonicalJsonError } from '../../lib/domain/canonical-json';
import { DomainError } from '../../lib/domain/errors';
import { hostileTextProblem, textRuleBroken } from '../../lib/domain/input-gate';

function refusal(fn: () => unknown): { field: string; reason: string } {
  try {
    fn();
  } catch (e) {
    if (e instanceof DomainError) return e.errors[0];
    throw e;
  }
  throw new Error('not refused');
}

describe('text rules', () => {
  test.each([
    ['', null],
    ['plain', null],
    ['emoji 😀 pair', null],
    ['a\u0000', /U\+0000 \(NUL\) at index 1/],
    ['\udc00', /lone surrogate \\udc00 at index 0/],
    ['x\ud800', /lone surrogate \\ud800 at index 1/],
    ['\ud800\ud800\udc00', /lone surrogate \\ud800 at index 0/],
  ])('%j', (s, rule) => {
    const r = textRuleBroken(s);
    if (rule === null) expect(r).toBeNull();
    else expect(r).toMatch(rule);
  });

  test('the walk names the path of the first bad string, and the object of a bad member name', () => {
    expect(hostileTextProblem({ a: [1, 'ok', { b: 'x\u0000' }] })).toEqual({ field: 'a.2.b', reason: expect.stringMatching(/NUL/) });
    expect(hostileTextProblem({ a: { ['k\udc00']: 1 } })).toEqual({ field: 'a', reason: expect.stringMatching(/^has a member name that contains a lone surrogate/) });
    expect(hostileTextProblem('\u0000', 'content')?.field).toBe('content');
    expect(hostileTextProblem({ ok: ['a', { b: 'c' }] })).toBeNull();
    // Deep values cost no stack.
    let deep: unknown = 'x\u0000';
    for (let i = 0; i < 50_000; i++) deep = [deep];
    expect(hostileTextProblem(deep)?.field).toMatch(/^0(\.0)+$/);
  });
});

describe('UTF-8', () => {
  const bad = (...bytes: number[]) => utf8ErrorOffset(Buffer.from([0x61, ...bytes, 0x62]));
  test('valid text, including 4-byte sequences, has no error', () => {
    expect(utf8ErrorOffset(Buffer.from('aé北😀'))).toBe(-1);
  });
  test.each([
    ['a lone continuation byte', [0x80]],
    ['0xff', [0xff]],
    ['an overlong /', [0xc0, 0xaf]],
    ['an overlong 3-byte form', [0xe0, 0x80, 0xaf]],
    ['an encoded surrogate', [0xed, 0xa0, 0x80]],
    ['above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
    ['a truncated sequence', [0xe5, 0x8c]],
  ])('%s is found at its offset', (_name, bytes) => {
    expect(bad(...bytes)).toBe(1);
  });

  test('a body with a bad byte in a string names that string; outside any string, the body', () => {
    const body = Buffer.concat([Buffer.from('{"a":{"b":["x","y'), Buffer.from([0xff]), Buffer.from('"]}}')]);
    expect(refusal(() => parseJsonBytes(body))).toEqual({ field: 'a.b.1', reason: expect.stringMatching(/^is not valid UTF-8 \(byte 0xff at offset 17/) });
    const key = Buffer.concat([Buffer.from('{"a":{"k'), Buffer.from([0xc0, 0xaf]), Buffer.from('":1}}')]);
    expect(refusal(() => parseJsonBytes(key)).field).toBe('a.k\ufffd\ufffd');
    expect(refusal(() => parseJsonBytes(Buffer.from([0x7b, 0xff, 0x7d]))).field).toBe('body');
  });

  test('a byte order mark is dropped; an empty body is {}; a scalar body is refused', () => {
    expect(parseJsonBytes(Buffer.from('\ufeff{"a":1}'))).toEqual({ a: 1 });
    expect(parseJsonBytes(Buffer.alloc(0))).toEqual({});
    expect(refusal(() => parseJsonBytes(Buffer.from('"x"')))).toEqual({ field: 'body', reason: 'must be a JSON object or array' });
  });
});

describe('duplicate member names', () => {
  test.each([
    ['{"a":1,"a":2}', 'a'],
    ['{"a":1,"\\u0061":2}', 'a'],
    ['{"x":[{"k":1},{"k":1,"k":2}]}', 'x.1.k'],
    ['{"s":"}{\\"a\\":1,","a":1,"a":2}', 'a'],
    [' { "o" : { "p" : [ ] , "p" : { } } } ', 'o.p'],
  ])('%s names %s', (text, field) => {
    expect(scanJson(text).duplicate?.field).toBe(field);
    expect(refusal(() => parseJsonText(text)).field).toBe(field);
  });

  test.each(['{}', '[]', '{"a":{"a":{"a":1}}}', '[{"a":1},{"a":2}]', '{"a":"\\"a\\":"}', '{"__proto__":1,"constructor":2}'])('%s has none', (text) => {
    expect(scanJson(text).duplicate).toBeUndefined();
    expect(() => parseJsonText(text)).not.toThrow();
  });

  test('__proto__ stays an own member', () => {
    expect(Object.keys(parseJsonText('{"__proto__":{"x":1}}') as object)).toEqual(['__proto__']);
  });
});

describe('messages state the rule', () => {
  const reason = (schema: z.ZodType, v: unknown) => fromZod(schema.safeParse(v).error!).errors[0].reason;
  test.each<[string, z.ZodType, unknown, string]>([
    ['missing', z.object({ a: z.string() }), {}, 'is required'],
    ['a number for a string', z.string(), 5, 'must be a string, not a number'],
    ['null for a number', z.number(), null, 'must be a number, not null'],
    ['an array for an object', z.object({}), [], 'must be a JSON object, not an array'],
    ['a fraction for an integer', z.number().int(), 1.5, 'must be an integer, not a number'],
    ['too long', z.string().max(3), 'abcd', 'must have at most 3 characters (this one has 4)'],
    ['empty', z.string().min(1), '', 'must not be empty'],
    ['too many items', z.array(z.number()).max(1), [1, 2], 'must have at most 1 items (this one has 2)'],
    ['too big a number', z.number().max(9), 10, 'must be at most 9'],
    ['not an allowed value', z.enum(['a', 'b']), 'c', 'must be one of "a", "b"'],
    ['a pattern', z.string().regex(/^x+$/), 'y', 'must match the pattern /^x+$/'],
  ])('%s', (_name, schema, value, message) => {
    expect(reason(schema, value)).toBe(message);
  });
});

describe('a canonicalisation failure names the request field', () => {
  test.each([
    ['$.content.note', 'note'],
    ['$.content.intent.action', 'action'],
    ['$.content.intent.tags[1]', 'tags.1'],
    ['$.content.data.a["odd key"][0]', 'data.a.odd key.0'],
    ['$', 'body'],
  ])('%s → %s', (path, field) => {
    expect(requestFieldOf(path)).toBe(field);
  });

  test('CanonicalJsonError and DomainError are non-retryable; anything else is left to retry', () => {
    const f = deterministicFailure(new CanonicalJsonError('string has a lone surrogate \\udc00 at index 0', '$.content.note'));
    expect(f?.nonRetryable).toBe(true);
    expect(DomainError.fromFailure(f)?.errors[0]).toEqual({ field: 'note', reason: expect.stringMatching(/^cannot be stored: string has a lone surrogate/) });
    expect(deterministicFailure(DomainError.validation('x', 'bad'))?.nonRetryable).toBe(true);
    expect(deterministicFailure(new Error('connection reset'))).toBeUndefined();
  });
});
