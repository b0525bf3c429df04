/**
 * The session rules every writer applies (lib/domain/sessions/index.ts): what an append request
 * must look like, which content can be stored, and when a retry is the same request.
 */
import { canonicalize } from '../../lib/domain/canonical-json';
import { DomainError, ErrorCode } from '../../lib/domain/errors';
import {
  AppendRequest,
  StoredEvent,
  appendRequestProblem,
  containsNul,
  contentProblem,
  endReasonOf,
  header,
  sameRequest,
  sessionErrors,
  utf8Length,
} from '../../lib/domain/sessions';

const EVENT_ID = '0b6f2c3e-8f1a-4d2b-9c7e-1a2b3c4d5e6f';
const ok: AppendRequest = { eventId: EVENT_ID, type: 'USER_INPUT', content: { input: 'hi' } };
const problem = (patch: Partial<AppendRequest> | Record<string, unknown>, max = 1000) => appendRequestProblem({ ...ok, ...patch } as AppendRequest, max);

function expectField(p: DomainError | null, code: ErrorCode, field: string): DomainError {
  expect(p).toBeInstanceOf(DomainError);
  expect(p!.code).toBe(code);
  expect(p!.errors.map((e) => e.field)).toEqual([field]);
  return p!;
}

describe('contentProblem', () => {
  test('accepts JSON data up to the limit, counted in UTF-8 bytes of canonical JSON', () => {
    // {"a":"..."} is 8 bytes of syntax around the string.
    expect(contentProblem({ a: 'x'.repeat(92) }, 100)).toBeNull();
    expect(canonicalize({ a: 'x'.repeat(92) }).length).toBe(100);
    const over = expectField(contentProblem({ a: 'x'.repeat(93) }, 100), ErrorCode.TooLarge, 'content');
    expect(over.errors[0].reason).toBe('is 101 bytes of canonical JSON; the limit is 100');
  });

  test('counts multi-byte characters by their UTF-8 size, not their UTF-16 length', () => {
    // "€" is 3 bytes, "😀" 4 bytes (2 UTF-16 units): "€😀" in quotes is 9 bytes.
    expect(contentProblem('€😀', 9)).toBeNull();
    expect(contentProblem('€😀', 8)?.code).toBe(ErrorCode.TooLarge);
  });

  test('whitespace in the original does not count: the canonical form is measured', () => {
    const spaced = JSON.parse('{ "b" : 1 ,   "a" : [ 1 , 2 ] }');
    expect(contentProblem(spaced, '{"a":[1,2],"b":1}'.length)).toBeNull();
  });

  test('names the field it is told to (metadata), also for size', () => {
    expectField(contentProblem({ k: 'v'.repeat(50) }, 10, 'metadata'), ErrorCode.TooLarge, 'metadata');
    expectField(contentProblem({ k: 'a\u0000' }, 1000, 'metadata'), ErrorCode.Validation, 'metadata');
  });

  test('refuses U+0000 in strings and in keys, at any depth', () => {
    for (const c of ['\u0000', { a: 'x\u0000y' }, [1, ['\u0000']], { 'k\u0000': 1 }, { deep: { er: [{ s: '\u0000' }] } }]) {
      const p = expectField(contentProblem(c, 1000), ErrorCode.Validation, 'content');
      expect(p.errors[0].reason).toBe('must not contain the character U+0000');
    }
    // The escaped text "\\u0000" is six ordinary characters, not a NUL.
    expect(contentProblem('\\u0000', 1000)).toBeNull();
  });

  test('refuses values that are not JSON data, with the canonical-JSON reason', () => {
    const cases: [unknown, RegExp][] = [
      [undefined, /undefined is not JSON at \$/],
      [{ a: undefined }, /undefined is not JSON at \$\.a/],
      [Number.NaN, /non-finite number NaN/],
      [{ n: Infinity }, /non-finite number Infinity at \$\.n/],
      [[1, () => 1], /function is not JSON at \$\[1\]/],
      [new Date(0), /non-plain object \(Date\)/],
      [10n, /bigint/],
      ['lone \ud800', /lone surrogate/],
    ];
    for (const [value, reason] of cases) {
      const p = expectField(contentProblem(value, 1000), ErrorCode.Validation, 'content');
      expect(p.errors[0].reason).toMatch(reason);
    }
  });

  test('accepts every JSON value kind', () => {
    for (const c of [null, true, 0, -1.5, '', 'text', [], {}, { nested: [{ a: null }] }]) expect(contentProblem(c, 1000)).toBeNull();
  });
});

describe('appendRequestProblem', () => {
  test('a well-formed request has no problem', () => {
    expect(problem({})).toBeNull();
    expect(problem({ idempotencyKey: 'k-1', expectedSeq: 1, clientEventId: true })).toBeNull();
    expect(problem({ type: 'SESSION_END', content: { reason: 'done' } })).toBeNull();
  });

  test('event_id must be a lowercase UUID', () => {
    for (const bad of [EVENT_ID.toUpperCase(), 'not-a-uuid', '', EVENT_ID + '0', undefined, 5]) {
      const p = expectField(problem({ eventId: bad }), ErrorCode.Validation, 'event_id');
      expect(p.message).toBe('event_id must be a lowercase UUID');
    }
  });

  test('event_type must be appendable: SESSION_CREATE and unknown types are refused', () => {
    for (const bad of ['SESSION_CREATE', 'user_input', 'NOPE', '', undefined]) {
      const p = expectField(problem({ type: bad }), ErrorCode.Validation, 'event_type');
      expect(p.errors[0].reason).toBe('must be one of USER_INPUT, LLM_RESPONSE, TOOL_CALL, TOOL_RESULT, SESSION_END');
    }
  });

  test('idempotency_key, when given, must be 1-200 printable ASCII characters', () => {
    for (const bad of ['', 'a b', 'ключ', 'x'.repeat(201), 12]) expectField(problem({ idempotencyKey: bad }), ErrorCode.Validation, 'idempotency_key');
    expect(problem({ idempotencyKey: 'x'.repeat(200) })).toBeNull();
  });

  test('expected_seq, when given, must be a safe integer of at least 1', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Infinity, 2 ** 53, '1']) {
      const p = expectField(problem({ expectedSeq: bad }), ErrorCode.Validation, 'expected_seq');
      expect(p.errors[0].reason).toBe('must be an integer of at least 1');
    }
    expect(problem({ expectedSeq: Number.MAX_SAFE_INTEGER })).toBeNull();
  });

  test('content goes through contentProblem: too large is payload_too_large on field content', () => {
    const p = expectField(problem({ content: 'x'.repeat(200) }, 100), ErrorCode.TooLarge, 'content');
    expect(p.message).toMatch(/^content is 202 bytes of canonical JSON; the limit is 100$/);
    expectField(problem({ content: { s: '\u0000' } }), ErrorCode.Validation, 'content');
    expectField(problem({ content: undefined as never }), ErrorCode.Validation, 'content');
    expectField(problem({ content: Number.NaN }), ErrorCode.Validation, 'content');
  });

  test('the first problem is reported: the id is checked before the content', () => {
    expectField(problem({ eventId: 'bad', content: 'x'.repeat(5000) }, 10), ErrorCode.Validation, 'event_id');
    expectField(problem({ type: 'NOPE', expectedSeq: 0 }), ErrorCode.Validation, 'event_type');
  });
});

describe('sameRequest', () => {
  const stored: StoredEvent = {
    session_id: 's',
    seq: 3,
    event_id: EVENT_ID,
    event_type: 'TOOL_CALL',
    ts: 1,
    content: { tool_name: 'weather', params: { city: '北京', days: 2 } },
    prev_hash: 'a'.repeat(64),
    hash: 'b'.repeat(64),
    idempotency_key: 'call-1',
  };

  test('same type and canonically equal content (key order does not matter)', () => {
    expect(sameRequest(stored, { type: 'TOOL_CALL', content: { params: { days: 2, city: '北京' }, tool_name: 'weather' } })).toBe(true);
  });

  test('another type or other content is another request', () => {
    expect(sameRequest(stored, { type: 'TOOL_RESULT', content: stored.content })).toBe(false);
    expect(sameRequest(stored, { type: 'TOOL_CALL', content: { tool_name: 'weather', params: { city: '北京', days: 3 } } })).toBe(false);
    expect(sameRequest(stored, { type: 'TOOL_CALL', content: { tool_name: 'weather', params: { city: '北京', days: '2' } } })).toBe(false);
  });

  test('header drops only the content', () => {
    const h = header(stored);
    expect(h).not.toHaveProperty('content');
    const { content: _content, ...rest } = stored;
    expect(h).toEqual(rest);
    expect(Object.keys(h).sort()).toEqual(['event_id', 'event_type', 'hash', 'idempotency_key', 'prev_hash', 'seq', 'session_id', 'ts']);
  });
});

describe('small helpers', () => {
  test('utf8Length agrees with Buffer.byteLength for well-formed text', () => {
    for (const s of ['', 'ascii', 'é', '€', '😀', 'mixed é€😀 text', '\u07ff\u0800']) expect(utf8Length(s)).toBe(Buffer.byteLength(s, 'utf8'));
  });

  test('containsNul looks into strings, keys and nested values only', () => {
    expect(containsNul({ a: [1, { b: 'ok' }] })).toBe(false);
    expect(containsNul({ a: [1, { b: 'n\u0000' }] })).toBe(true);
    expect(containsNul(0)).toBe(false);
  });

  test('endReasonOf reads a string reason, or says "ended"', () => {
    expect(endReasonOf({ reason: 'idle' })).toBe('idle');
    for (const c of [null, 'idle', ['idle'], { reason: 5 }, {}]) expect(endReasonOf(c)).toBe('ended');
  });

  test('sessionErrors.wrongExpectedSeq carries the current head (or null) in extra', () => {
    const head = { seq: 4, hash: 'c'.repeat(64), ts: 99 };
    const e = sessionErrors.wrongExpectedSeq(2, head);
    expect(e.code).toBe(ErrorCode.WrongExpectedSeq);
    expect(e.extra).toEqual({ current_head: head });
    expect(e.errors).toEqual([{ field: 'expected_seq', reason: 'the chain head is seq 4' }]);
    expect(sessionErrors.wrongExpectedSeq(1, null).extra).toEqual({ current_head: null });
    expect(sessionErrors.wrongExpectedSeq(1, null).message).toMatch(/chain head is seq 0/);
  });
});
