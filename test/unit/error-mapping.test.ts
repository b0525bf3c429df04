/**
 * The error catalogue (lib/domain/errors.ts) and how its codes become HTTP statuses on each
 * surface (api/problem.ts), and how a DomainError crosses the workflow boundary and back.
 */
import { ApplicationFailure, defaultFailureConverter, defaultPayloadConverter } from '@temporalio/common';
import { configureLogger } from '../../lib/log';
import type { Request, Response } from 'express';
import { z } from 'zod';
import { errorHandler, httpStatus, problemBody, Surface } from '../../api/problem';
import { DomainError, ErrorCode, isErrorCode } from '../../lib/domain/errors';
import { sessionErrors } from '../../lib/domain/sessions';

const ALL_CODES = Object.values(ErrorCode);

/** The status every code answers with, per surface; the table a Gateway written against either can rely on. */
const EXPECTED: Record<ErrorCode, { v1: number; seed: number }> = {
  validation_error: { v1: 400, seed: 400 },
  not_found: { v1: 404, seed: 404 },
  session_exists: { v1: 409, seed: 400 },
  session_archived: { v1: 409, seed: 400 },
  idempotency_key_reused: { v1: 409, seed: 400 },
  event_id_conflict: { v1: 409, seed: 409 },
  concurrency_conflict: { v1: 409, seed: 409 },
  wrong_expected_seq: { v1: 412, seed: 412 },
  payload_too_large: { v1: 413, seed: 413 },
  unauthorized: { v1: 401, seed: 401 },
  forbidden: { v1: 403, seed: 403 },
  rate_limited: { v1: 429, seed: 429 },
  unavailable: { v1: 503, seed: 503 },
  write_failed: { v1: 503, seed: 503 },
  internal_error: { v1: 500, seed: 500 },
  invalid_transition: { v1: 409, seed: 409 },
  intent_exists: { v1: 409, seed: 409 },
  duplicate_intent: { v1: 409, seed: 409 },
  read_only: { v1: 403, seed: 403 },
  task_exists: { v1: 409, seed: 409 },
  task_deleted: { v1: 409, seed: 409 },
  run_not_waiting: { v1: 409, seed: 409 },
  result_conflict: { v1: 409, seed: 409 },
};

describe('httpStatus', () => {
  test('the expectation table covers exactly the catalogue', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual([...ALL_CODES].sort());
  });

  test.each(ALL_CODES)('%s answers its status on /v1 and on the seed routes', (code) => {
    expect(httpStatus(code, 'v1')).toBe(EXPECTED[code].v1);
    expect(httpStatus(code, 'seed')).toBe(EXPECTED[code].seed);
  });

  test('the seed keeps 400 only for the three refusals the seed itself answered with 400', () => {
    const differs = ALL_CODES.filter((c) => httpStatus(c, 'seed') !== httpStatus(c, 'v1'));
    expect(differs.sort()).toEqual(['idempotency_key_reused', 'session_archived', 'session_exists']);
  });

  test('every status is a 4xx or 5xx', () => {
    for (const c of ALL_CODES) for (const s of ['v1', 'seed'] as Surface[]) expect(httpStatus(c, s)).toBeGreaterThanOrEqual(400);
  });
});

describe('problemBody', () => {
  test.each(ALL_CODES)('%s has a title and a type URL ending in its code', (code) => {
    const b = problemBody(new DomainError(code, 'm'), httpStatus(code, 'v1'));
    expect(typeof b.title).toBe('string');
    expect(b.title.length).toBeGreaterThan(0);
    expect(b.type).toBe(`https://timekeeper.dev/problems/${code}`);
  });

  test('titles are distinct', () => {
    const titles = ALL_CODES.map((c) => problemBody(new DomainError(c, 'm'), 400).title);
    expect(new Set(titles).size).toBe(ALL_CODES.length);
  });

  test('carries the seed envelope, the field errors and the code-specific extras', () => {
    const head = { seq: 7, hash: 'a'.repeat(64), ts: 5 };
    const b = problemBody(sessionErrors.wrongExpectedSeq(3, head), 412, '/v1/sessions/x/events');
    expect(b).toEqual({
      type: 'https://timekeeper.dev/problems/wrong_expected_seq',
      title: 'Wrong expected sequence number',
      status: 412,
      detail: 'expected_seq is 3, but the chain head is seq 7; nothing was written',
      instance: '/v1/sessions/x/events',
      errors: [{ field: 'expected_seq', reason: 'the chain head is seq 7' }],
      current_head: head,
      code: 412,
      msg: 'expected_seq is 3, but the chain head is seq 7; nothing was written',
    });
    const plain = problemBody(new DomainError(ErrorCode.Internal, 'boom'), 500);
    expect(plain).not.toHaveProperty('errors');
    expect(plain).not.toHaveProperty('instance');
  });
});

describe('DomainError across the workflow boundary', () => {
  const full = new DomainError(ErrorCode.WrongExpectedSeq, 'expected 2, head 5', [{ field: 'expected_seq', reason: 'the chain head is seq 5' }], {
    current_head: { seq: 5, hash: 'b'.repeat(64), ts: 1 },
    note: ['x', 1, null],
  });

  test('toFailure is a non-retryable ApplicationFailure typed by the code, with the error as its first detail', () => {
    const f = full.toFailure();
    expect(f).toBeInstanceOf(ApplicationFailure);
    expect(f.type).toBe('wrong_expected_seq');
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toBe('expected 2, head 5');
    expect(f.details?.[0]).toEqual(full.toDetail());
  });

  test.each(ALL_CODES)('%s: toFailure -> fromFailure keeps code, message, errors and extra', (code) => {
    const e = new DomainError(code, `message for ${code}`, [{ field: 'f', reason: 'r' }], { k: { v: [1, 2] } });
    const back = DomainError.fromFailure(e.toFailure())!;
    expect(back).toBeInstanceOf(DomainError);
    expect(back.code).toBe(code);
    expect(back.message).toBe(e.message);
    expect(back.errors).toEqual(e.errors);
    expect(back.extra).toEqual(e.extra);
  });

  test('the round trip also survives Temporal serialisation (failure proto and JSON payloads)', () => {
    const proto = defaultFailureConverter.errorToFailure(full.toFailure(), defaultPayloadConverter);
    const decoded = defaultFailureConverter.failureToError(proto, defaultPayloadConverter);
    const back = DomainError.fromFailure(decoded)!;
    expect(back.toDetail()).toEqual(full.toDetail());
  });

  test('an error without field errors or extras comes back without them', () => {
    const back = DomainError.fromFailure(new DomainError(ErrorCode.NotFound, 'gone').toFailure())!;
    expect(back.errors).toEqual([]);
    expect(back.extra).toBeUndefined();
    expect(back.toDetail()).toEqual({ code: 'not_found', message: 'gone' });
  });

  test('fromFailure of anything but a catalogue ApplicationFailure is undefined', () => {
    expect(DomainError.fromFailure(ApplicationFailure.create({ type: 'SomethingElse', message: 'x', details: [{ code: 'not_found', message: 'x' }] }))).toBeUndefined();
    expect(DomainError.fromFailure(ApplicationFailure.create({ message: 'no type' }))).toBeUndefined();
    expect(DomainError.fromFailure(new Error('plain'))).toBeUndefined();
    expect(DomainError.fromFailure(full)).toBeUndefined();
    expect(DomainError.fromFailure(undefined)).toBeUndefined();
    expect(DomainError.fromFailure({ type: 'not_found', message: 'duck-typed' })).toBeUndefined();
  });

  test('a catalogue-typed failure without a matching detail still gives its code and message', () => {
    const noDetails = DomainError.fromFailure(ApplicationFailure.create({ type: 'unavailable', message: 'down' }))!;
    expect(noDetails.code).toBe('unavailable');
    expect(noDetails.message).toBe('down');
    const mismatched = DomainError.fromFailure(ApplicationFailure.create({ type: 'unavailable', message: 'down', details: [{ code: 'not_found', message: 'other' }] }))!;
    expect(mismatched.code).toBe('unavailable');
    expect(mismatched.message).toBe('down');
  });

  test('isErrorCode knows exactly the catalogue', () => {
    for (const c of ALL_CODES) expect(isErrorCode(c)).toBe(true);
    for (const x of ['SessionArchived', 'NOT_FOUND', '', 404, undefined]) expect(isErrorCode(x)).toBe(false);
  });

  test('withMessage keeps code, errors and extra', () => {
    const e = full.withMessage('other words');
    expect(e.message).toBe('other words');
    expect(e.toDetail()).toEqual({ ...full.toDetail(), message: 'other words' });
  });
});

describe('errorHandler', () => {
  function run(err: unknown, surface?: Surface) {
    const out: { status?: number; type?: string; body?: Record<string, unknown>; headers: Record<string, string> } = { headers: {} };
    const res = {
      locals: surface ? { surface } : {},
      // The Node calls sendProblem makes (it skips Express's res.json and its ETag).
      setHeader(name: string, value: string) {
        out.headers[name.toLowerCase()] = value;
        if (name.toLowerCase() === 'content-type') out.type = value.split(';')[0];
      },
      set statusCode(s: number) {
        out.status = s;
      },
      end(b: string) {
        out.body = JSON.parse(b) as Record<string, unknown>;
      },
    } as unknown as Response;
    const req = { originalUrl: '/x', method: 'POST' } as Request;
    errorHandler(err, req, res, () => undefined);
    return out;
  }

  test('a domain error answers by the surface the router marked (v1 when unmarked)', () => {
    expect(run(sessionErrors.exists('s'), 'seed').status).toBe(400);
    expect(run(sessionErrors.exists('s'), 'v1').status).toBe(409);
    expect(run(sessionErrors.exists('s')).status).toBe(409);
    const r = run(sessionErrors.archived('s'), 'seed');
    expect(r.type).toBe('application/problem+json');
    expect(r.body).toMatchObject({ status: 400, code: 400, type: 'https://timekeeper.dev/problems/session_archived', instance: '/x' });
  });

  test('body-parser failures become 413 and 400 naming the body', () => {
    const big = run({ type: 'entity.too.large', status: 413, limit: 1234, message: 'too large' });
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ type: 'https://timekeeper.dev/problems/payload_too_large', errors: [{ field: 'body', reason: 'is larger than 1234 bytes' }] });
    const bad = run({ type: 'entity.parse.failed', status: 400, message: 'Unexpected token' });
    expect(bad.status).toBe(400);
    expect(bad.body?.errors).toEqual([{ field: 'body', reason: 'is not valid JSON: Unexpected token' }]);
  });

  test('a ZodError is a validation error naming its fields', () => {
    const r = z.strictObject({ a: z.number() }).safeParse({ a: 'x', b: 1 });
    const out = run(r.error);
    expect(out.status).toBe(400);
    expect((out.body?.errors as { field: string }[]).map((e) => e.field).sort()).toEqual(['a', 'b']);
  });

  test('refusals a retry can cure carry Retry-After: the error\'s own hint, else 1 s for 429 and 503; none for others', () => {
    expect(run(new DomainError(ErrorCode.RateLimited, 'busy').withRetryAfter(3)).headers['retry-after']).toBe('3');
    expect(run(new DomainError(ErrorCode.Unavailable, 'down')).headers['retry-after']).toBe('1');
    expect(run(new DomainError(ErrorCode.RateLimited, 'busy')).status).toBe(429);
    expect(run(sessionErrors.exists('s')).headers['retry-after']).toBeUndefined();
    // The hint survives a trip through a workflow failure and a new message.
    const e = DomainError.fromFailure(new DomainError(ErrorCode.Unavailable, 'x').withRetryAfter(2).toFailure())!.withMessage('y');
    expect(e.retryAfterS).toBe(2);
  });

  test('database outages are 503, anything unexpected a 500 without internals', () => {
    for (const e of [Object.assign(new Error('terminating connection'), { code: '57P01' }), Object.assign(new Error('x'), { code: 'ECONNREFUSED' }), new Error('timeout exceeded when trying to connect')]) {
      expect(run(e).status).toBe(503);
      expect(run(e).headers['retry-after']).toBe('1');
    }
    // The internals go to the server log (an error line with the stack), not to the caller.
    const lines: Record<string, any>[] = [];
    configureLogger({ destination: { write: (s: string) => void lines.push(JSON.parse(s)) } });
    try {
      const out = run(new Error('secret internals'));
      expect(out.status).toBe(500);
      expect(JSON.stringify(out.body)).not.toContain('secret internals');
      expect(lines).toEqual([expect.objectContaining({ level: 50, msg: 'unexpected error', err: expect.objectContaining({ message: 'secret internals' }) })]);
    } finally {
      configureLogger({ level: 'silent' });
    }
  });

  test('a malformed percent-encoding in the path is a 400', () => {
    expect(run(new URIError('URI malformed')).status).toBe(400);
  });
});
