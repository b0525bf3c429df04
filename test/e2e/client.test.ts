/**
 * The typed HTTP client itself (sdk/client.ts): what it puts on the wire (against a
 * recording fetch), how it reports refusals and contract violations, that it can run
 * outside Node (its run-time imports), and its convenience methods against the real system.
 */
import { builtinModules } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { TimekeeperApiError, TimekeeperClient, TimekeeperClientOptions, TimekeeperContractError } from '../../sdk/client';
import { startTestSystem, TestSystem, uniqueSessionId } from '../support';

const ROOT = path.resolve(__dirname, '..', '..');

// ---- on the wire, against a recording fetch -----------------------------------------------

interface Sent {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | Uint8Array | undefined;
}

interface Reply {
  status?: number;
  body?: unknown;
  type?: string;
}

/** A client whose fetch records each request and answers with `reply` (JSON unless a string). */
function recording(reply: Reply | ((sent: Sent) => Reply) = {}, opts: Partial<TimekeeperClientOptions> = {}) {
  const sent: Sent[] = [];
  const tk = new TimekeeperClient({
    baseUrl: 'http://tk.test:1234/',
    ...opts,
    fetch: async (url, init) => {
      const req = { url, method: String(init.method), headers: { ...(init.headers as Record<string, string>) }, body: init.body as Sent['body'] };
      sent.push(req);
      const r = typeof reply === 'function' ? reply(req) : reply;
      const text = typeof r.body === 'string' ? r.body : JSON.stringify(r.body ?? {});
      return new Response(text, { status: r.status ?? 200, headers: { 'content-type': r.type ?? 'application/json' } });
    },
  });
  return { tk, sent };
}

const problem = (status: number, code: string, extra: Record<string, unknown> = {}) => ({
  type: `https://timekeeper.dev/problems/${code}`,
  title: code,
  status,
  detail: `${code} happened`,
  errors: [{ field: 'expected_seq', reason: 'the chain head is seq 3' }],
  code: status,
  msg: `${code} happened`,
  ...extra,
});

describe('requests on the wire', () => {
  test('path parameters are percent-encoded; query values (strings and numbers) go in order; undefined ones are left out', async () => {
    const { tk, sent } = recording({ body: { events: [], next_after_seq: null } });
    await tk.call('listEvents', { params: { id: 'a:b.c' }, query: { after_seq: 3, types: 'USER_INPUT,TOOL_CALL', limit: undefined, from_ts: '17' } });
    expect(sent).toEqual([
      {
        url: 'http://tk.test:1234/v1/sessions/a%3Ab.c/events?after_seq=3&types=USER_INPUT%2CTOOL_CALL&from_ts=17',
        method: 'GET',
        headers: { accept: 'application/json, application/problem+json' },
        body: undefined,
      },
    ]);
  });

  test('a body is JSON with its content type; the API key is a Bearer token; call headers win, whatever their case', async () => {
    const { tk, sent } = recording({ status: 201, body: {} }, { apiKey: 'key-12345678', headers: { 'x-trace': 'a' } });
    await tk.call('appendEvent', { params: { id: 's1' }, body: { type: 'USER_INPUT', content: { input: '北京' }, expected_seq: 4 } });
    await tk.call('appendEvent', { params: { id: 's1' }, body: { type: 'USER_INPUT', content: 2 }, headers: { Authorization: 'Bearer other-key', 'X-Trace': 'b' } });
    expect(sent[0]).toMatchObject({
      url: 'http://tk.test:1234/v1/sessions/s1/events',
      method: 'POST',
      headers: { authorization: 'Bearer key-12345678', 'content-type': 'application/json', 'x-trace': 'a' },
      body: '{"type":"USER_INPUT","content":{"input":"北京"},"expected_seq":4}',
    });
    expect(sent[1].headers).toEqual({ accept: 'application/json, application/problem+json', 'content-type': 'application/json', Authorization: 'Bearer other-key', 'X-Trace': 'b' });
    // with(): the same client with other options; the original is unchanged.
    const anonymous = tk.with({ apiKey: undefined });
    await anonymous.call('appendEvent', { params: { id: 's1' }, body: { type: 'USER_INPUT', content: 3 } });
    expect(sent[2].headers.authorization).toBeUndefined();
    await tk.call('appendEvent', { params: { id: 's1' }, body: { type: 'USER_INPUT', content: 4 } });
    expect(sent[3].headers.authorization).toBe('Bearer key-12345678');
  });

  test('seed routes take their parameters in the query string, with no body', async () => {
    const { tk, sent } = recording({ body: { code: 200, msg: 'ok', data: {} } });
    await tk.seed.init('s 1');
    await tk.seed.append({ session_id: 's1', event_type: 'USER_INPUT', content: '{"input":"a&b=c"}', idempotency_key: 'k-1' });
    await tk.seed.get({ session_id: 's1', from_ts: 5, limit: 2 });
    expect(sent.map((s) => `${s.method} ${s.url.replace('http://tk.test:1234', '')} ${s.body}`)).toEqual([
      'POST /timeline/init?session_id=s+1 undefined',
      'POST /timeline/append?session_id=s1&event_type=USER_INPUT&content=%7B%22input%22%3A%22a%26b%3Dc%22%7D&idempotency_key=k-1 undefined',
      'GET /timeline/get?session_id=s1&from_ts=5&limit=2 undefined',
    ]);
    expect(new URL(sent[1].url).searchParams.get('content')).toBe('{"input":"a&b=c"}');
  });

  test('each convenience method calls its route', async () => {
    // Creates and appends answer 201, the rest 200.
    const { tk, sent } = recording((r) => ({ status: r.method === 'POST' && !r.url.endsWith('/end') ? 201 : 200, body: {} }));
    await tk.health();
    await tk.createSession({ session_id: 's1' });
    await tk.listSessions({ limit: 2 });
    await tk.session('s1');
    await tk.append('s1', { type: 'USER_INPUT', content: 1 });
    await tk.end('s1');
    await tk.events('s1', { after_seq: 1 });
    await tk.context('s1', { lang: 'zh' });
    await tk.verify('s1');
    await tk.workflow('s1');
    expect(sent.map((s) => `${s.method} ${s.url.replace('http://tk.test:1234', '')}`)).toEqual([
      'GET /healthz',
      'POST /v1/sessions',
      'GET /v1/sessions?limit=2',
      'GET /v1/sessions/s1',
      'POST /v1/sessions/s1/events',
      'POST /v1/sessions/s1/end',
      'GET /v1/sessions/s1/events?after_seq=1',
      'GET /v1/sessions/s1/context?lang=zh',
      'GET /v1/sessions/s1/verify',
      'GET /v1/sessions/s1/workflow',
    ]);
  });

  test('tk.sessions.* are the session routes, namespaced like tk.intents: the same requests as the flat methods', async () => {
    const reply = (r: Sent) => ({ status: r.method === 'POST' && !r.url.endsWith('/end') ? 201 : 200, body: {} });
    const flat = recording(reply);
    const spaced = recording(reply);
    type Call = (tk: TimekeeperClient) => Promise<unknown>;
    const pairs: [Call, Call][] = [
      [(tk) => tk.createSession({ session_id: 's1' }), (tk) => tk.sessions.create({ session_id: 's1' })],
      [(tk) => tk.listSessions({ limit: 2 }), (tk) => tk.sessions.list({ limit: 2 })],
      [(tk) => tk.session('s1'), (tk) => tk.sessions.get('s1')],
      [(tk) => tk.append('s1', { type: 'USER_INPUT', content: 1 }), (tk) => tk.sessions.append('s1', { type: 'USER_INPUT', content: 1 })],
      [(tk) => tk.end('s1'), (tk) => tk.sessions.end('s1')],
      [(tk) => tk.events('s1', { after_seq: 1 }), (tk) => tk.sessions.events('s1', { after_seq: 1 })],
      [(tk) => tk.context('s1', { lang: 'zh' }), (tk) => tk.sessions.context('s1', { lang: 'zh' })],
      [(tk) => tk.verify('s1'), (tk) => tk.sessions.verify('s1')],
      [(tk) => tk.workflow('s1'), (tk) => tk.sessions.workflow('s1')],
    ];
    for (const [old, namespaced] of pairs) {
      await old(flat.tk);
      await namespaced(spaced.tk);
    }
    expect(spaced.sent.map((s) => [s.method, s.url, s.body])).toEqual(flat.sent.map((s) => [s.method, s.url, s.body]));
    expect(spaced.sent).toHaveLength(9);
  });

  test('raw() sends strings and bytes verbatim, anything else as JSON, and keeps repeated parameters', async () => {
    const { tk, sent } = recording({ status: 400, body: problem(400, 'validation_error') });
    const bytes = Uint8Array.from([0xff, 0xfe, 0x00]);
    const r = await tk.raw('post', '/v1/sessions?limit=1&limit=2&x=%ZZ', { body: '{"a":' });
    await tk.raw('POST', '/v1/sessions', { body: bytes, headers: { 'Content-Type': 'text/plain' } });
    await tk.raw('POST', '/v1/sessions', { body: { a: [1] } });
    await tk.raw('GET', '/v1/sessions');
    expect(r.status).toBe(400);
    expect(r.body.type).toMatch(/validation_error$/);
    expect(sent[0]).toMatchObject({ method: 'POST', url: 'http://tk.test:1234/v1/sessions?limit=1&limit=2&x=%ZZ', body: '{"a":' });
    expect(sent[0].headers['content-type']).toBe('application/json');
    expect(sent[1].body).toBe(bytes);
    expect(sent[1].headers).toMatchObject({ 'Content-Type': 'text/plain' });
    expect(sent[1].headers['content-type']).toBeUndefined();
    expect(sent[2].body).toBe('{"a":[1]}');
    expect(sent[3]).toMatchObject({ method: 'GET', body: undefined });
    expect(sent[3].headers['content-type']).toBeUndefined();
  });

  test('a missing path parameter or a query value that is not text is a TypeError before anything is sent', async () => {
    const { tk, sent } = recording();
    await expect(tk.call('getSession', { params: {} as { id: string } })).rejects.toThrow(TypeError);
    await expect(tk.call('listEvents', { params: { id: 's' }, query: { limit: [1] as unknown as number } })).rejects.toThrow(/must be a string or a number/);
    expect(sent).toEqual([]);
  });

  test('timeoutMs aborts a request that does not answer', async () => {
    const tk = new TimekeeperClient({
      baseUrl: 'http://tk.test',
      timeoutMs: 50,
      fetch: (_url, init) => new Promise((_resolve, reject) => init.signal!.addEventListener('abort', () => reject(init.signal!.reason))),
    });
    await expect(tk.call('health')).rejects.toMatchObject({ name: 'TimeoutError' });
  });
});

describe('answers', () => {
  test('a documented status resolves with its status, body and headers, also a non-2xx one (readiness 503)', async () => {
    const checks = { postgres: 'ok', temporal: 'unreachable' };
    const { tk } = recording({ status: 503, body: { status: 'not ready', checks } });
    const r = await tk.call('readiness');
    expect(r).toMatchObject({ status: 503, body: { status: 'not ready', checks } });
    expect(r.headers.get('content-type')).toBe('application/json');
  });

  test('any other status rejects with a TimekeeperApiError carrying the problem', async () => {
    const body = problem(412, 'wrong_expected_seq', { current_head: { seq: 3, hash: 'h', ts: 1 } });
    const { tk } = recording({ status: 412, body, type: 'application/problem+json' });
    const err = await tk.call('appendEvent', { params: { id: 's1' }, body: { type: 'USER_INPUT', content: 1, expected_seq: 2 } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimekeeperApiError);
    const e = err as TimekeeperApiError;
    expect(e).toMatchObject({ name: 'TimekeeperApiError', route: 'appendEvent', status: 412, problem: body, body, errorCode: 'wrong_expected_seq', detail: 'wrong_expected_seq happened' });
    expect(e.type).toBe('https://timekeeper.dev/problems/wrong_expected_seq');
    expect(e.errors).toEqual([{ field: 'expected_seq', reason: 'the chain head is seq 3' }]);
    expect(e.problem.current_head).toEqual({ seq: 3, hash: 'h', ts: 1 });
    expect(e.message).toBe('appendEvent: HTTP 412 wrong_expected_seq: wrong_expected_seq happened');
    expect(e.headers.get('content-type')).toBe('application/problem+json');
  });

  test('an error body that is not a problem becomes an about:blank stand-in; the body is kept as received', async () => {
    const { tk } = recording({ status: 502, body: '<html>Bad Gateway</html>', type: 'text/html' });
    const e = (await tk.call('health').catch((x: unknown) => x)) as TimekeeperApiError;
    expect(e).toBeInstanceOf(TimekeeperApiError);
    expect(e.problem).toEqual({ type: 'about:blank', title: 'HTTP 502', status: 502, detail: '<html>Bad Gateway</html>', code: 502, msg: '<html>Bad Gateway</html>' });
    expect(e.body).toBe('<html>Bad Gateway</html>');
    expect(e.errors).toEqual([]);
  });

  test('validateResponses: a body, content type or status the contract does not describe is a TimekeeperContractError', async () => {
    const wrongBody = recording({ body: { status: 'fine' } }, { validateResponses: true }).tk;
    await expect(wrongBody.call('health')).rejects.toThrow(TimekeeperContractError);
    await expect(wrongBody.call('health')).rejects.toThrow(/status/);
    const wrongType = recording({ body: { status: 'ok' }, type: 'text/plain' }, { validateResponses: true }).tk;
    await expect(wrongType.call('health')).rejects.toThrow(/content-type text\/plain/);
    const undocumented = recording({ status: 418, body: problem(418, 'teapot'), type: 'application/problem+json' }, { validateResponses: true }).tk;
    await expect(undocumented.call('getSession', { params: { id: 's' } })).rejects.toThrow(/status 418 is not among the documented 200, 400, 401, 403, 404, 503/);
    const notAProblem = recording({ status: 404, body: { error: 'nope' }, type: 'application/problem+json' }, { validateResponses: true }).tk;
    await expect(notAProblem.call('getSession', { params: { id: 's' } })).rejects.toThrow(/not a problem/);
    // Without the option the same answers pass through (or reject as API errors).
    expect((await recording({ body: { status: 'fine' } }).tk.call('health')).body).toEqual({ status: 'fine' });
    await expect(recording({ status: 418, body: problem(418, 'teapot') }).tk.call('health')).rejects.toThrow(TimekeeperApiError);
  });
});

// ---- what it imports at run time --------------------------------------------------------

/** Value (not type-only) imports of a module, resolved to project files or package names. */
function runtimeImports(file: string): string[] {
  const src = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const out: string[] = [];
  for (const st of src.statements) {
    let spec: ts.Expression | undefined;
    if (ts.isImportDeclaration(st)) {
      const clause = st.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      const typeOnly = clause?.isTypeOnly || (clause && !clause.name && named && named.length > 0 && named.every((e) => e.isTypeOnly));
      if (!typeOnly) spec = st.moduleSpecifier;
    } else if (ts.isExportDeclaration(st) && st.moduleSpecifier && !st.isTypeOnly) {
      const named = st.exportClause && ts.isNamedExports(st.exportClause) ? st.exportClause.elements : undefined;
      if (!(named && named.length > 0 && named.every((e) => e.isTypeOnly))) spec = st.moduleSpecifier;
    }
    if (spec && ts.isStringLiteral(spec)) out.push(spec.text);
  }
  return out;
}

test('sdk/client.ts reaches no Node built-in and no server code at run time: only contracts (also the task definition schema and the scopes below the API), lib/domain and zod', () => {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const spec of runtimeImports(file)) {
      if (spec.startsWith('.')) {
        const base = path.resolve(path.dirname(file), spec);
        visit([`${base}.ts`, path.join(base, 'index.ts')].find((f) => fs.existsSync(f)) ?? `${base} (unresolved)`);
      } else {
        packages.add(spec);
      }
    }
  };
  visit(path.join(ROOT, 'sdk', 'client.ts'));

  const local = [...files].map((f) => path.relative(ROOT, f)).sort();
  const allowed = /^(sdk\/(client|transport)\.ts|api\/contract\.ts|api\/routes\.ts|lib\/platform\/scopes\.ts|lib\/task-definition-schema\.ts|api\/[a-z-]+\/([a-z-]+-)?contract\.ts|lib\/domain\/([a-z-]+\/)?[a-z-]+\.ts)$/;
  expect(local.filter((f) => !allowed.test(f))).toEqual([]);
  const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
  expect([...packages].filter((p) => p.startsWith('node:') || builtins.has(p))).toEqual([]);
  // zod for the schemas; @temporalio/common comes in through lib/domain/errors.ts (ApplicationFailure);
  // croner through lib/domain/tasks/schedule.ts (the task contract checks cron expressions), and with it
  // chinese-days' holiday table (37 kB of JSON data, lib/domain/tasks/calendars.ts). All pure JS or data.
  expect([...packages].sort()).toEqual(['@temporalio/common', 'chinese-days/dist/chinese-days.json', 'croner', 'zod']);
});

// ---- against the real system ------------------------------------------------------------

describe('against the running API', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startTestSystem();
  });
  afterAll(async () => {
    await sys?.stop();
  });

  test('the convenience methods walk a session from creation to verified end', async () => {
    const tk = sys.tk;
    const id = uniqueSessionId('client');
    expect(await tk.health()).toEqual({ status: 'ok' });
    const created = await tk.createSession({ session_id: id, agent_id: 'client-test', channel: 'cli', metadata: { k: 1 } });
    expect(created).toMatchObject({ session_id: id, status: 'open', agent_id: 'client-test', head: { seq: 1 } });
    const a = await tk.append(id, { type: 'USER_INPUT', content: { input: 'Wie spät ist es?' }, idempotency_key: 'q-1', expected_seq: 1 });
    expect(a).toMatchObject({ seq: 2, deduplicated: false });
    expect(await tk.append(id, { type: 'USER_INPUT', content: { input: 'Wie spät ist es?' }, idempotency_key: 'q-1' })).toMatchObject({ seq: 2, deduplicated: true });
    await tk.append(id, { type: 'LLM_RESPONSE', content: { response: 'Zeit für Tests.' } });
    expect((await tk.events(id, { after_seq: 1, limit: 1 })).next_after_seq).toBe(2);
    expect((await tk.context(id, { timestamps: 'false' })).text.split('\n')).toEqual(['Session created', 'User: Wie spät ist es?', 'Agent: Zeit für Tests.']);
    expect((await tk.session(id)).counts.events).toBe(3);
    expect((await tk.workflow(id)).state?.head?.seq).toBe(3);
    expect((await tk.listSessions({ agent_id: 'client-test' })).sessions.map((s) => s.session_id)).toContain(id);
    const end = await tk.end(id, { reason: 'done' });
    expect(end).toMatchObject({ type: 'SESSION_END', seq: 4 });
    expect(await tk.verify(id)).toMatchObject({ ok: true, checked: 4, head_seq: 4 });

    const seedId = uniqueSessionId('client_seed');
    expect((await tk.seed.init(seedId)).code).toBe(200);
    const appended = await tk.seed.append({ session_id: seedId, event_type: 'TOOL_CALL', content: JSON.stringify({ tool_name: 'clock' }) });
    expect(appended.data.seq).toBe(2);
    expect((await tk.seed.get({ session_id: seedId, limit: 5 })).data.events.map((e) => e.event_type)).toEqual(['SESSION_CREATE', 'TOOL_CALL']);
  });

  test('a refusal from the server arrives as a TimekeeperApiError with its problem', async () => {
    const e = (await sys.tk.session(uniqueSessionId('nobody')).catch((x: unknown) => x)) as TimekeeperApiError;
    expect(e).toBeInstanceOf(TimekeeperApiError);
    expect(e.status).toBe(404);
    expect(e.errorCode).toBe('not_found');
    expect(e.errors[0]?.field).toBe('session_id');
    expect(e.problem.instance).toMatch(/^\/v1\/sessions\//);
  });
});
