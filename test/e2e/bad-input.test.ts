/**
 * Every bad input gets a 4xx problem (application/problem+json) naming the offending field
 * in errors[0].field, and writes nothing: no row in timeline_sessions or timeline_events,
 * no session workflow. Nothing a client sends may produce a 500.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import type { RawOptions, TimekeeperClient } from '../../sdk/client';
import { startTestSystem, TestSystem, uniqueSessionId, expectProblem } from '../support';

const MAX_CONTENT = 1024;
let sys: TestSystem;
/** Raw requests with a deadline, so a request that hangs fails here instead of at the test timeout. */
let tk: TimekeeperClient;
let sid: string;
const PREFIX = `bad_${process.pid}_`;

beforeAll(async () => {
  sys = await startTestSystem({ config: { maxContentBytes: MAX_CONTENT } });
  tk = sys.tk.with({ timeoutMs: 20_000 });
  sid = uniqueSessionId('bad');
  expect((await tk.call('createSession', { body: { session_id: sid } })).status).toBe(201);
  expect((await tk.call('appendEvent', { params: { id: sid }, body: { type: 'USER_INPUT', content: { input: 'hi' } } })).status).toBe(201);
});
afterAll(async () => {
  await sys?.stop();
});

async function counts() {
  const one = async (table: string) =>
    (await sys.pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE starts_with(session_id, $1)`, [PREFIX])).rows[0].n as number;
  return { sessions: await one('timeline_sessions'), events: await one('timeline_events') };
}

/** Runs fn and checks that none of this file's rows appeared meanwhile. */
async function writesNothing(fn: () => Promise<void>): Promise<void> {
  const before = await counts();
  await fn();
  expect(await counts()).toEqual(before);
}

async function noSessionRow(id: string) {
  const { rows } = await sys.pool.query('SELECT count(*)::int AS n FROM timeline_sessions WHERE session_id = $1', [id]);
  expect(rows[0].n).toBe(0);
}

async function noWorkflow(id: string) {
  await expect(sys.client.workflow.getHandle(`session/${id}`).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
}

const enc = encodeURIComponent;
const b64 = (s: string) => Buffer.from(s).toString('base64url');
const events = () => `/v1/sessions/${sid}/events`;

describe('session ids', () => {
  test.each<[string, unknown]>([
    ['missing', undefined],
    ['empty', ''],
    ['spaces', 'a b'],
    ['200 characters', 'a'.repeat(200)],
    ['../x', '../x'],
    ['a slash', 'a/b'],
    ['a leading dot', '.hidden'],
    ['a number', 12345],
    ['null', null],
    ['U+0000', 'a\u0000b'],
  ])('POST /v1/sessions with session_id %s is 400 session_id', async (_name, value) => {
    await writesNothing(async () => {
      const body = value === undefined ? { agent_id: 'x' } : { session_id: value };
      expectProblem(await tk.raw('POST', '/v1/sessions', { body }), 400, 'session_id');
    });
    // (PostgreSQL cannot even be asked about a text containing U+0000.)
    if (typeof value === 'string' && !value.includes('\u0000')) await noSessionRow(value);
  });

  // Always three values per row: with fewer, jest would pass its `done` callback as `json`.
  const routes: [string, string, unknown][] = [
    ['GET', '', undefined],
    ['POST', '/events', { type: 'USER_INPUT', content: 1 }],
    ['GET', '/events', undefined],
    ['POST', '/end', {}],
    ['GET', '/verify', undefined],
    ['GET', '/context', undefined],
    ['GET', '/workflow', undefined],
  ];
  const badIds = [enc('a b'), 'a'.repeat(200), enc('../x'), enc('é'), enc('-leading-dash')];
  test.each(routes)('%s /v1/sessions/<malformed>%s is 400 session_id', async (method, suffix, json) => {
    await writesNothing(async () => {
      for (const id of badIds) expectProblem(await tk.raw(method, `/v1/sessions/${id}${suffix}`, { body: json }), 400, 'session_id');
    });
  });

  test('seed endpoints: missing or malformed session_id is 400 session_id', async () => {
    await writesNothing(async () => {
      expectProblem(await tk.raw('POST', '/timeline/init'), 400, 'session_id');
      expectProblem(await tk.raw('POST', `/timeline/init?session_id=${enc('../x')}`), 400, 'session_id');
      expectProblem(await tk.raw('POST', `/timeline/append?event_type=USER_INPUT&content=%7B%7D`), 400, 'session_id');
      expectProblem(await tk.raw('GET', `/timeline/get?session_id=${'a'.repeat(200)}`), 400, 'session_id');
    });
  });
});

describe('append bodies', () => {
  test.each<[string, Record<string, unknown>, string]>([
    ['unknown event type', { type: 'DELETE_ALL', content: {} }, 'type'],
    ['SESSION_CREATE', { type: 'SESSION_CREATE', content: {} }, 'type'],
    ['a lower-case type', { type: 'user_input', content: {} }, 'type'],
    ['no type', { content: {} }, 'type'],
    ['missing content', { type: 'USER_INPUT' }, 'content'],
    ['U+0000 in a string', { type: 'USER_INPUT', content: { input: 'a\u0000b' } }, 'content.input'],
    ['U+0000 in a key', { type: 'USER_INPUT', content: { 'a\u0000': 1 } }, 'content'],
    ['U+0000 as the whole content', { type: 'USER_INPUT', content: '\u0000' }, 'content'],
    ['a lone surrogate', { type: 'USER_INPUT', content: { input: '\ud800' } }, 'content.input'],
    ['an unknown field', { type: 'USER_INPUT', content: {}, extra: true }, 'extra'],
    ['idempotency_key too long', { type: 'USER_INPUT', content: {}, idempotency_key: 'k'.repeat(201) }, 'idempotency_key'],
    ['idempotency_key non-ASCII', { type: 'USER_INPUT', content: {}, idempotency_key: 'ключ' }, 'idempotency_key'],
    ['idempotency_key with a space', { type: 'USER_INPUT', content: {}, idempotency_key: 'a b' }, 'idempotency_key'],
    ['idempotency_key empty', { type: 'USER_INPUT', content: {}, idempotency_key: '' }, 'idempotency_key'],
    ['idempotency_key a number', { type: 'USER_INPUT', content: {}, idempotency_key: 7 }, 'idempotency_key'],
    ['event_id not a UUID', { type: 'USER_INPUT', content: {}, event_id: 'not-a-uuid' }, 'event_id'],
    ['event_id in braces', { type: 'USER_INPUT', content: {}, event_id: '{6f1c2b8e-4c1a-4d7e-9a3b-1f2e3d4c5b6a}' }, 'event_id'],
    ['event_id a number', { type: 'USER_INPUT', content: {}, event_id: 123 }, 'event_id'],
  ])('%s is 400 naming the field', async (_name, body, field) => {
    await writesNothing(async () => {
      expectProblem(await tk.raw('POST', events(), { body }), 400, field);
    });
  });

  test('content nested deeper than the canonical JSON limit, or with a non-finite number, is 400 content', async () => {
    await writesNothing(async () => {
      const deep = '['.repeat(100) + ']'.repeat(100);
      expectProblem(await tk.raw('POST', events(), { body: `{"type":"USER_INPUT","content":${deep}}` }), 400, 'content');
      expectProblem(await tk.raw('POST', events(), { body: '{"type":"USER_INPUT","content":{"n":1e400}}' }), 400, 'content');
    });
  });

  test('seed append: non-JSON content, U+0000, unknown or SESSION_CREATE type are 400', async () => {
    const seed = (p: Record<string, string>) => tk.raw('POST', `/timeline/append?${new URLSearchParams({ session_id: sid, ...p })}`);
    await writesNothing(async () => {
      expectProblem(await seed({ event_type: 'USER_INPUT', content: '{not json' }), 400, 'content');
      expectProblem(await seed({ event_type: 'USER_INPUT', content: '' }), 400, 'content');
      expectProblem(await seed({ event_type: 'USER_INPUT', content: '{"input":"a\\u0000b"}' }), 400, 'content.input');
      expectProblem(await seed({ event_type: 'USER_INPUT' }), 400, 'content');
      expectProblem(await seed({ event_type: 'DELETE_ALL', content: '{}' }), 400, 'event_type');
      expectProblem(await seed({ event_type: 'SESSION_CREATE', content: '{}' }), 400, 'event_type');
      expectProblem(await seed({ event_type: 'USER_INPUT', content: '{}', idempotency_key: 'ключ' }), 400, 'idempotency_key');
      expectProblem(await seed({ event_type: 'USER_INPUT', content: '{}', event_id: 'nope' }), 400, 'event_id');
    });
  });
});

describe('create and end bodies', () => {
  test.each<[string, Record<string, unknown>, string]>([
    ['agent_id with U+0000', { agent_id: 'a\u0000b' }, 'agent_id'],
    ['channel with U+0000', { channel: '\u0000' }, 'channel'],
    ['agent_id with a lone surrogate', { agent_id: '\udc00x' }, 'agent_id'],
    ['agent_id too long', { agent_id: 'a'.repeat(129) }, 'agent_id'],
    ['agent_id empty', { agent_id: '' }, 'agent_id'],
    ['agent_id a number', { agent_id: 5 }, 'agent_id'],
    ['metadata an array', { metadata: [1, 2] }, 'metadata'],
    ['metadata a string', { metadata: 'x' }, 'metadata'],
    ['metadata with U+0000', { metadata: { note: 'a\u0000' } }, 'metadata.note'],
    ['idle_timeout_s zero', { idle_timeout_s: 0 }, 'idle_timeout_s'],
    ['idle_timeout_s fractional', { idle_timeout_s: 1.5 }, 'idle_timeout_s'],
    ['idle_timeout_s a string', { idle_timeout_s: '60' }, 'idle_timeout_s'],
    ['an unknown field', { owner: 'me' }, 'owner'],
  ])('POST /v1/sessions with %s is 400 naming the field, and starts no workflow', async (_name, extra, field) => {
    const id = uniqueSessionId('bad');
    await writesNothing(async () => {
      expectProblem(await tk.raw('POST', '/v1/sessions', { body: { session_id: id, ...extra } }), 400, field);
    });
    await noSessionRow(id);
    await noWorkflow(id);
  });

  test('POST /end with a bad reason, key or unknown field is 400 naming the field; the session stays open', async () => {
    await writesNothing(async () => {
      expectProblem(await tk.raw('POST', `/v1/sessions/${sid}/end`, { body: { reason: 'a\u0000' } }), 400, 'reason');
      expectProblem(await tk.raw('POST', `/v1/sessions/${sid}/end`, { body: { reason: '' } }), 400, 'reason');
      expectProblem(await tk.raw('POST', `/v1/sessions/${sid}/end`, { body: { reason: 'r'.repeat(201) } }), 400, 'reason');
      expectProblem(await tk.raw('POST', `/v1/sessions/${sid}/end`, { body: { idempotency_key: 'x y' } }), 400, 'idempotency_key');
      expectProblem(await tk.raw('POST', `/v1/sessions/${sid}/end`, { body: { force: true } }), 400, 'force');
    });
    expect((await tk.session(sid)).status).toBe('open');
  });
});

describe('sizes', () => {
  test(`content over maxContentBytes (${MAX_CONTENT}) is 413 content; at the limit it is accepted`, async () => {
    await writesNothing(async () => {
      // Canonical JSON of a string of n ASCII letters is n + 2 bytes.
      const over = await tk.raw('POST', events(), { body: { type: 'USER_INPUT', content: 'x'.repeat(MAX_CONTENT - 1) } });
      expectProblem(over, 413, 'content');
      expect(over.body.type).toMatch(/payload_too_large$/);
      // Multi-byte characters count as their UTF-8 bytes: 400 × 3 bytes.
      expectProblem(await tk.raw('POST', events(), { body: { type: 'USER_INPUT', content: '語'.repeat(400) } }), 413, 'content');
      expectProblem(await tk.raw('POST', `/timeline/append?${new URLSearchParams({ session_id: sid, event_type: 'USER_INPUT', content: JSON.stringify('y'.repeat(2000)) })}`), 413, 'content');
    });
    const id = uniqueSessionId('bad');
    await writesNothing(async () => {
      expectProblem(await tk.raw('POST', '/v1/sessions', { body: { session_id: id, metadata: { blob: 'z'.repeat(2000) } } }), 413, 'metadata');
    });
    await noWorkflow(id);
    const atLimit = await tk.call('appendEvent', { params: { id: sid }, body: { type: 'TOOL_RESULT', content: 'x'.repeat(MAX_CONTENT - 2) } });
    expect(atLimit.status).toBe(201);
  });

  test('a body larger than the parser limit is 413 body', async () => {
    const limit = MAX_CONTENT * 2 + 64 * 1024;
    await writesNothing(async () => {
      const big = JSON.stringify({ type: 'USER_INPUT', content: 'x'.repeat(limit + 10) });
      expectProblem(await tk.raw('POST', events(), { body: big }), 413, 'body');
      expectProblem(await tk.raw('POST', '/v1/sessions', { body: JSON.stringify({ session_id: uniqueSessionId('bad'), metadata: { b: 'y'.repeat(limit) } }) }), 413, 'body');
    });
  });

  test('malformed or non-object JSON bodies are 400 body', async () => {
    await writesNothing(async () => {
      for (const raw of ['{"type":"USER_INPUT",', '{type: USER_INPUT}', 'null', '"a string"', '[1,2]', '42']) {
        expectProblem(await tk.raw('POST', events(), { body: raw }), 400, 'body');
        expectProblem(await tk.raw('POST', '/v1/sessions', { body: raw }), 400, 'body');
        expectProblem(await tk.raw('POST', `/v1/sessions/${sid}/end`, { body: raw }), 400, 'body');
      }
    });
  });
});

describe('query parameters', () => {
  test.each<[string, string]>([
    ['limit=0', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=100000', 'limit'],
    ['limit=1.5', 'limit'],
    ['limit=', 'limit'],
    ['limit=1&limit=2', 'limit'],
    ['after_seq=-1', 'after_seq'],
    ['after_seq=1e3', 'after_seq'],
    ['after_seq=99999999999999999999', 'after_seq'],
    ['from_ts=1.5', 'from_ts'],
    ['from_ts=yesterday', 'from_ts'],
    ['to_ts=-5', 'to_ts'],
    ['types=FOO', 'types'],
    ['types=', 'types'],
    ['types=,', 'types'],
    ['types=USER_INPUT,NOPE', 'types'],
    ['types=user_input', 'types'],
    ['sort=desc', 'sort'],
  ])('GET events?%s is 400 %s', async (query, field) => {
    expectProblem(await tk.raw('GET', `${events()}?${query}`), 400, field);
  });

  test.each<[string, string]>([
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['status=closed', 'status'],
    ['agent_id=', 'agent_id'],
    ['agent_id=%00', 'agent_id'],
    ['channel=a%00b', 'channel'],
    ['cursor=garbage!!', 'cursor'],
    ['cursor=%25%25%25', 'cursor'],
    [`cursor=${b64('[1.5,"x"]')}`, 'cursor'],
    [`cursor=${b64('[1e300,"x"]')}`, 'cursor'],
    [`cursor=${b64('[-1,"x"]')}`, 'cursor'],
    [`cursor=${b64('[1,"a\\u0000"]')}`, 'cursor'],
    [`cursor=${b64('[1,"../x"]')}`, 'cursor'],
    [`cursor=${b64('{"a":1}')}`, 'cursor'],
    [`cursor=${b64('null')}`, 'cursor'],
    ['session_id=x', 'session_id'],
  ])('GET /v1/sessions?%s is 400 %s', async (query, field) => {
    expectProblem(await tk.raw('GET', `/v1/sessions?${query}`), 400, field);
  });

  test.each<[string, string]>([
    ['as_of_seq=-1', 'as_of_seq'],
    ['as_of_ts=1.5', 'as_of_ts'],
    ['max_events=0', 'max_events'],
    ['max_events=1001', 'max_events'],
    ['lang=fr', 'lang'],
    ['timestamps=yes', 'timestamps'],
    ['format=xml', 'format'],
  ])('GET context?%s is 400 %s', async (query, field) => {
    expectProblem(await tk.raw('GET', `/v1/sessions/${sid}/context?${query}`), 400, field);
  });

  test('seed get: bad from_ts and limit are 400', async () => {
    expectProblem(await tk.raw('GET', `/timeline/get?session_id=${sid}&from_ts=1.5`), 400, 'from_ts');
    expectProblem(await tk.raw('GET', `/timeline/get?session_id=${sid}&limit=0`), 400, 'limit');
    expectProblem(await tk.raw('GET', `/timeline/get?session_id=${sid}&limit=10001`), 400, 'limit');
  });
});

describe('unknown routes and sessions', () => {
  test.each<[string, string]>([
    ['GET', '/nope'],
    ['GET', '/v1'],
    ['POST', '/v1/nothing'],
    ['GET', '/v1/sessions/x/unknown'],
    ['DELETE', '/v1/sessions/x'],
    ['PUT', '/v1/sessions/x/events'],
    ['GET', '/timeline/delete'],
  ])('%s %s is a 404 problem', async (method, path) => {
    expectProblem(await tk.raw(method, path), 404, 'path');
    expect((await tk.raw(method, path)).body.type).toMatch(/not_found$/);
  });

  test('a path that is not valid percent-encoding is 400 path', async () => {
    expectProblem(await tk.raw('GET', '/v1/sessions/%E0%A4%A/events'), 400, 'path');
    expectProblem(await tk.raw('GET', '/v1/sessions/%ZZ'), 400, 'path');
  });

  test('an unknown session is 404 session_id on every /v1/sessions/:id route, and nothing is created', async () => {
    const ghost = uniqueSessionId('bad_ghost');
    await writesNothing(async () => {
      const routes: [string, string, unknown?][] = [
        ['GET', ''],
        ['POST', '/events', { type: 'USER_INPUT', content: { input: 'anyone?' } }],
        ['POST', '/events', { type: 'SESSION_END', content: { reason: 'x' } }],
        ['POST', '/events', { type: 'USER_INPUT', content: 1, idempotency_key: 'k1' }],
        ['GET', '/events'],
        ['POST', '/end', { reason: 'nobody here' }],
        ['POST', '/end'],
        ['GET', '/verify'],
        ['GET', '/context'],
        ['GET', '/workflow'],
      ];
      for (const [method, suffix, json] of routes) {
        const r = await tk.raw(method, `/v1/sessions/${ghost}${suffix}`, { body: json });
        expectProblem(r, 404, 'session_id');
        expect(r.body.type).toMatch(/not_found$/);
      }
    });
    await noSessionRow(ghost);
    await noWorkflow(ghost);
  });
});

describe('no input produces a 500', () => {
  test('a batch of hostile requests: every answer is a 4xx problem, nothing is written', async () => {
    const ghost = uniqueSessionId('bad_ghost');
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    const batch: [string, string, RawOptions?][] = [
      ['POST', '/v1/sessions', { body: {} }],
      ['POST', '/v1/sessions', { body: { session_id: 'a'.repeat(10_000) } }],
      ['POST', '/v1/sessions', { body: { session_id: uniqueSessionId('bad'), agent_id: 'a\u0000' } }],
      ['POST', '/v1/sessions', { body: { session_id: uniqueSessionId('bad'), channel: '\ud800' } }],
      ['POST', '/v1/sessions', { body: { session_id: uniqueSessionId('bad'), metadata: { k: '\u0000' } } }],
      ['POST', '/v1/sessions', { body: { session_id: uniqueSessionId('bad'), metadata: JSON.parse(`{"d":${'['.repeat(100)}${']'.repeat(100)}}`) } }],
      ['POST', '/v1/sessions', { body: { session_id: uniqueSessionId('bad'), idle_timeout_s: 1e12 } }],
      ['POST', '/v1/sessions', { body: '{"session_id":' }],
      ['POST', '/v1/sessions', { body: Buffer.from([0xff, 0xfe, 0x00, 0x7b]) }],
      ['POST', '/v1/sessions', { body: '{"session_id":"x"}', headers: { 'content-type': 'application/json; charset=latin1' } }],
      ['POST', '/v1/sessions', { body: 'not gzip', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } }],
      ['POST', '/v1/sessions', { body: 'x', headers: { 'content-type': 'application/json', 'content-encoding': 'made-up' } }],
      ['POST', '/v1/sessions', { body: 'session_id=', headers: { 'content-type': 'application/x-www-form-urlencoded' } }],
      ['POST', '/v1/sessions', { body: 'session_id=a b', headers: { 'content-type': 'text/plain' } }],
      ['POST', events(), { body: `{"type":"USER_INPUT","content":${deep}}` }],
      ['POST', events(), { body: '{"type":"USER_INPUT","content":-1e999}' }],
      ['POST', events(), { body: '{"type":"USER_INPUT","content":"\\udfff"}' }],
      ['POST', events(), { body: '{"type":"USER_INPUT","content":{"__proto__":{"x":"\\u0000"}}}' }],
      ['POST', events(), { body: { type: ['USER_INPUT'], content: 1 } }],
      ['POST', events(), { body: { type: 'USER_INPUT', content: 1, event_id: '00000000-0000-0000-0000-00000000000g' } }],
      ['POST', events(), { body: { type: 'USER_INPUT', content: 'x'.repeat(5000) } }],
      ['POST', events(), { body: 'x'.repeat(200_000) }],
      ['POST', `/v1/sessions/${sid}/end`, { body: { reason: 5 } }],
      ['POST', `/v1/sessions/${ghost}/events`, { body: { type: 'TOOL_CALL', content: {} } }],
      ['POST', `/v1/sessions/${ghost}/end`, { body: {} }],
      ['GET', `${events()}?limit=-0`],
      ['GET', `${events()}?after_seq=9223372036854775808`],
      ['GET', `${events()}?from_ts=99999999999999999999999`],
      ['GET', `${events()}?__proto__=1`],
      ['GET', `${events()}?constructor=1`],
      ['GET', `${events()}?limit[]=1`],
      ['GET', `${events()}?types=${'NOPE,'.repeat(500)}`],
      ['GET', `${events()}?types=USER_INPUT&types=TOOL_CALL`],
      ['GET', `/v1/sessions?cursor=${b64('[9007199254740993,"x"]')}`],
      ['GET', `/v1/sessions?cursor=${b64('["1","x"]')}`],
      ['GET', `/v1/sessions?cursor=${b64(`[1,"${'a'.repeat(500)}"]`)}`],
      ['GET', `/v1/sessions?agent_id=${enc('\u0000')}&channel=${enc('\u0000')}`],
      ['GET', `/v1/sessions?agent_id=${'a'.repeat(5000)}`],
      ['GET', `/v1/sessions/${sid}/context?as_of_ts=9223372036854775808`],
      ['GET', `/v1/sessions/${sid}/context?max_events=1e3`],
      ['GET', '/v1/sessions/%00'],
      ['GET', '/v1/sessions/%E0%A4%A/verify'],
      ['GET', `/v1/sessions/${enc('\ud83d\ude00')}/verify`],
      ['GET', `/timeline/get?session_id=${sid}&from_ts=-1`],
      ['GET', `/timeline/get?session_id=${sid}&session_id=${sid}`],
      ['POST', `/timeline/append?session_id=${sid}&event_type=USER_INPUT&content=${enc('{"a":"\\ud800"}')}`],
      ['POST', `/timeline/append?session_id=${sid}&event_type=USER_INPUT`, { body: '{"content":{"a":1}}' }],
      ['POST', `/timeline/init?session_id=${enc('a\u0000')}`],
      ['POST', `/timeline/init`, { body: '{"session_id":["a","b"]}' }],
    ];
    const failures: string[] = [];
    await writesNothing(async () => {
      for (const [method, path, opts] of batch) {
        const r = await tk.raw(method, path, opts);
        const isProblem = /^application\/problem\+json/.test(r.headers.get('content-type') ?? '');
        if (r.status < 400 || r.status >= 500 || !isProblem || !r.body?.errors?.[0]?.field) {
          failures.push(`${method} ${path.slice(0, 80)} → ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
        }
      }
    });
    expect(failures).toEqual([]);
    await noWorkflow(ghost);
  });
});
