/**
 * Request validation through the route contracts (api/sessions/contract.ts), with failures
 * turned into field errors by fromZod exactly as the routers do (api/http.ts `parse`).
 */
import { z } from 'zod';
import { fromZod } from '../../api/problem';
import { appendEvent, createSession, endSession, getSession, listEvents } from '../../api/sessions/contract';
import { ErrorCode, FieldError } from '../../lib/domain/errors';
import { LIMITS } from '../../lib/domain/limits';

/** The field errors a value gets from a schema, or null when it is accepted. */
function fieldErrors(schema: z.ZodType, value: unknown, prefix = ''): FieldError[] | null {
  const r = schema.safeParse(value);
  if (r.success) return null;
  const err = fromZod(r.error, prefix);
  expect(err.code).toBe(ErrorCode.Validation);
  return err.errors;
}
const fields = (schema: z.ZodType, value: unknown, prefix = '') => fieldErrors(schema, value, prefix)?.map((e) => e.field) ?? null;
const parsed = <T extends z.ZodType>(schema: T, value: unknown): z.output<T> => {
  const r = schema.safeParse(value);
  if (!r.success) throw new Error(`expected ${JSON.stringify(value)} to be accepted: ${fromZod(r.error).message}`);
  return r.data;
};

describe('createSession body', () => {
  const body = createSession.body;

  test('accepts a minimal and a full body', () => {
    expect(parsed(body, { session_id: 'demo-1' })).toEqual({ session_id: 'demo-1' });
    const full = { session_id: 'a.b_c:d-9', agent_id: 'agent 7 😀', channel: 'cli', metadata: { k: { nested: [1, 'x'] } }, idle_timeout_s: 1800 };
    expect(parsed(body, full)).toEqual(full);
  });

  test('names every unknown key on its own', () => {
    const errs = fieldErrors(body, { session_id: 'ok', foo: 1, bar: 'x' });
    expect(errs).toEqual([
      { field: 'foo', reason: 'is not a known field' },
      { field: 'bar', reason: 'is not a known field' },
    ]);
  });

  test('session_id is required and follows the session id rule', () => {
    expect(fieldErrors(body, {})).toEqual([{ field: 'session_id', reason: 'is required' }]);
    for (const bad of ['', '-leading-dash', '.dot', 'has space', 'slash/no', 'ü', 'a'.repeat(LIMITS.sessionIdMaxChars + 1), 42]) {
      expect(fields(body, { session_id: bad })).toEqual(['session_id']);
    }
    expect(fieldErrors(body, { session_id: '-x' })![0].reason).toMatch(/letters, digits/);
    for (const good of ['a', '9', 'A.b_c:d-e', 'a'.repeat(LIMITS.sessionIdMaxChars)]) expect(fields(body, { session_id: good })).toBeNull();
  });

  test('agent_id and channel refuse U+0000 and lone surrogates, but keep surrogate pairs', () => {
    for (const bad of ['nul\u0000here', 'lone high \ud800', 'lone low \udc00 x', '\udc00\ud800']) {
      expect(fieldErrors(body, { session_id: 'a', agent_id: bad })).toEqual([{ field: 'agent_id', reason: 'must not contain U+0000 or a lone surrogate' }]);
      expect(fields(body, { session_id: 'a', channel: bad })).toEqual(['channel']);
    }
    expect(fields(body, { session_id: 'a', agent_id: '\ud83d\ude00 pair', channel: '北京' })).toBeNull();
  });

  test('agent_id and channel have length bounds', () => {
    expect(fields(body, { session_id: 'a', agent_id: '' })).toEqual(['agent_id']);
    expect(fields(body, { session_id: 'a', agent_id: 'x'.repeat(LIMITS.agentIdMaxChars) })).toBeNull();
    expect(fields(body, { session_id: 'a', agent_id: 'x'.repeat(LIMITS.agentIdMaxChars + 1) })).toEqual(['agent_id']);
    expect(fields(body, { session_id: 'a', channel: 'x'.repeat(LIMITS.channelMaxChars + 1) })).toEqual(['channel']);
  });

  test('idle_timeout_s is an integer from 1 to the maximum', () => {
    for (const good of [1, 60, LIMITS.idleTimeoutMaxS]) expect(fields(body, { session_id: 'a', idle_timeout_s: good })).toBeNull();
    for (const bad of [0, -1, 1.5, LIMITS.idleTimeoutMaxS + 1, '60', null, Number.NaN]) {
      expect(fields(body, { session_id: 'a', idle_timeout_s: bad })).toEqual(['idle_timeout_s']);
    }
  });

  test('metadata must be an object', () => {
    for (const bad of [[1], 'x', 3, null]) expect(fields(body, { session_id: 'a', metadata: bad })).toEqual(['metadata']);
  });

  test('several problems are reported together', () => {
    expect(fields(body, { session_id: '', idle_timeout_s: 0, extra: true })?.sort()).toEqual(['extra', 'idle_timeout_s', 'session_id']);
  });
});

describe('appendEvent body', () => {
  const body = appendEvent.body;

  test('type is one of the appendable types', () => {
    for (const t of ['USER_INPUT', 'LLM_RESPONSE', 'TOOL_CALL', 'TOOL_RESULT', 'SESSION_END']) expect(fields(body, { type: t, content: {} })).toBeNull();
    for (const bad of ['SESSION_CREATE', 'user_input', 'OTHER', '', 1, undefined]) {
      const errs = fieldErrors(body, { type: bad, content: {} });
      expect(errs).toEqual([{ field: 'type', reason: 'must be one of USER_INPUT, LLM_RESPONSE, TOOL_CALL, TOOL_RESULT, SESSION_END' }]);
    }
  });

  test('content is required, but any JSON value (also null, false, 0, "") is content', () => {
    expect(fieldErrors(body, { type: 'USER_INPUT' })).toEqual([{ field: 'content', reason: 'is required' }]);
    for (const c of [null, false, 0, '', [], {}, { input: 'hi' }]) expect(parsed(body, { type: 'USER_INPUT', content: c }).content).toEqual(c);
  });

  test('idempotency_key is 1-200 printable ASCII characters', () => {
    const with_ = (k: unknown) => fields(body, { type: 'USER_INPUT', content: 1, idempotency_key: k });
    for (const good of ['a', 'call-1', '!~', 'x'.repeat(LIMITS.idempotencyKeyMaxChars)]) expect(with_(good)).toBeNull();
    for (const bad of ['', 'with space', 'tab\t', 'é', 'x'.repeat(LIMITS.idempotencyKeyMaxChars + 1), 7]) expect(with_(bad)).toEqual(['idempotency_key']);
    expect(fieldErrors(body, { type: 'USER_INPUT', content: 1, idempotency_key: 'a b' })![0].reason).toBe('must be 1-200 printable ASCII characters');
  });

  test('expected_seq is an integer of at least 1 (a JSON number, not a string)', () => {
    const with_ = (s: unknown) => fieldErrors(body, { type: 'USER_INPUT', content: 1, expected_seq: s });
    expect(with_(1)).toBeNull();
    expect(with_(123456)).toBeNull();
    expect(with_(0)).toEqual([{ field: 'expected_seq', reason: 'must be at least 1' }]);
    expect(with_(-3)).toEqual([{ field: 'expected_seq', reason: 'must be at least 1' }]);
    expect(with_(1.5)).toEqual([{ field: 'expected_seq', reason: 'must be an integer' }]);
    expect(with_('3')?.map((e) => e.field)).toEqual(['expected_seq']);
  });

  test('event_id must be a UUID and is lowercased', () => {
    const r = parsed(body, { type: 'USER_INPUT', content: 1, event_id: 'ABCDEF01-2345-4678-89AB-CDEF01234567' });
    expect(r.event_id).toBe('abcdef01-2345-4678-89ab-cdef01234567');
    expect(fields(body, { type: 'USER_INPUT', content: 1, event_id: 'not-a-uuid' })).toEqual(['event_id']);
  });

  test('unknown keys are named', () => {
    expect(fields(body, { type: 'USER_INPUT', content: 1, event_type: 'USER_INPUT' })).toEqual(['event_type']);
  });
});

describe('endSession body', () => {
  test('reason is plain text; expected_seq and idempotency_key follow the append rules', () => {
    const body = endSession.body;
    expect(parsed(body, {})).toEqual({});
    expect(parsed(body, { reason: 'user left', idempotency_key: 'end-1', expected_seq: 4 })).toEqual({ reason: 'user left', idempotency_key: 'end-1', expected_seq: 4 });
    expect(fields(body, { reason: 'x\u0000' })).toEqual(['reason']);
    expect(fields(body, { reason: 'x'.repeat(LIMITS.endReasonMaxChars + 1) })).toEqual(['reason']);
    expect(fields(body, { expected_seq: 0 })).toEqual(['expected_seq']);
    expect(fields(body, { idempotency_key: '' })).toEqual(['idempotency_key']);
  });
});

describe('listEvents query', () => {
  const query = listEvents.query;

  test('types is a comma-separated list of event types, blanks trimmed', () => {
    expect(parsed(query, { types: 'USER_INPUT, TOOL_CALL,' }).types).toEqual(['USER_INPUT', 'TOOL_CALL']);
    // Unlike appends, reads may filter on SESSION_CREATE.
    expect(parsed(query, { types: 'SESSION_CREATE' }).types).toEqual(['SESSION_CREATE']);
    for (const bad of ['USER_INPUT,NOPE', ',', '', ' , ', 'user_input']) {
      const errs = fieldErrors(query, { types: bad });
      expect(errs?.map((e) => e.field)).toEqual(['types']);
      expect(errs![0].reason).toMatch(/^must be a comma-separated list of SESSION_CREATE, /);
    }
  });

  test('limit is an integer string from 1 to the page maximum', () => {
    expect(parsed(query, { limit: '1' }).limit).toBe(1);
    expect(parsed(query, { limit: String(LIMITS.pageMax) }).limit).toBe(LIMITS.pageMax);
    for (const bad of ['0', String(LIMITS.pageMax + 1), '-5']) {
      expect(fieldErrors(query, { limit: bad })).toEqual([{ field: 'limit', reason: `must be a limit between 1 and ${LIMITS.pageMax}` }]);
    }
    for (const bad of ['1.5', 'ten', '1e2', '', ' 5']) expect(fieldErrors(query, { limit: bad })).toEqual([{ field: 'limit', reason: 'must be an integer' }]);
    // A repeated parameter arrives as an array and is refused rather than guessed at.
    expect(fields(query, { limit: ['1', '2'] })).toEqual(['limit']);
  });

  test('after_seq, from_ts and to_ts are non-negative integer strings, converted to numbers', () => {
    expect(parsed(query, { after_seq: '0', from_ts: '1700000000000', to_ts: '1700000000001' })).toEqual({ after_seq: 0, from_ts: 1700000000000, to_ts: 1700000000001 });
    expect(parsed(query, { after_seq: '0042' }).after_seq).toBe(42);
    expect(fieldErrors(query, { after_seq: '-1' })![0]).toEqual({ field: 'after_seq', reason: `must be a sequence number between 0 and ${Number.MAX_SAFE_INTEGER}` });
    for (const bad of ['1.5', 'abc', '0x10', '']) expect(fieldErrors(query, { after_seq: bad })).toEqual([{ field: 'after_seq', reason: 'must be an integer' }]);
    // Beyond 2^53 the number would not be the one sent.
    expect(fields(query, { after_seq: '9007199254740993' })).toEqual(['after_seq']);
    expect(fields(query, { from_ts: '-1' })).toEqual(['from_ts']);
    expect(fields(query, { after_seq: 5 })).toEqual(['after_seq']);
  });

  test('unknown parameters are named', () => {
    expect(fields(query, { after: '1', limit: '2' })).toEqual(['after']);
  });
});

describe('fromZod', () => {
  test('prefixes nested paths and joins them with dots', () => {
    const schema = z.object({ a: z.object({ b: z.array(z.number()) }) });
    const err = fromZod(schema.safeParse({ a: { b: [1, 'x'] } }).error!, 'query.');
    expect(err.errors.map((e) => e.field)).toEqual(['query.a.b.1']);
  });

  test('names a failing value with no path by its prefix, or "body" without one', () => {
    const r = getSession.params.shape.id.safeParse('bad id');
    expect(fromZod(r.error!, 'session_id').errors.map((e) => e.field)).toEqual(['session_id']);
    expect(fromZod(r.error!).errors.map((e) => e.field)).toEqual(['body']);
  });

  test('names unknown keys of a nested strict object with their full path', () => {
    const schema = z.strictObject({ inner: z.strictObject({ x: z.number() }) });
    expect(fields(schema, { inner: { x: 1, y: 2, z: 3 } }, 'p.')).toEqual(['p.inner.y', 'p.inner.z']);
  });

  test('the message lists every field with its reason', () => {
    const r = createSession.body.safeParse({ session_id: 'ok', foo: 1, idle_timeout_s: 0 });
    const err = fromZod(r.error!);
    expect(err.message.split('; ')).toEqual(err.errors.map((e) => `${e.field}: ${e.reason}`));
    expect(err.errors).toHaveLength(2);
    expect(err.toDetail()).toMatchObject({ code: 'validation_error', errors: err.errors });
  });
});
