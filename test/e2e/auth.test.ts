/**
 * Bearer API keys and scopes, end to end: who may create, append, end, read and verify,
 * on both the /v1 and the seed surface; health endpoints stay open. Plus the start-up
 * guards: an open API only on loopback, and a key store that refuses bad keys.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { assertSafeBinding, loadKeyStore, Operation } from '../../api/auth';
import { DomainError } from '../../lib/domain/errors';
import { call, startTestSystem, TestSystem, uniqueSessionId } from '../support/system';

const KEYS = { gateway: 'gw-key-123456', agent: 'agent-key-1234', auditor: 'audit-key-1234', admin: 'admin-key-12345' } as const;
type Who = keyof typeof KEYS | 'none' | 'wrong';

let sys: TestSystem;
beforeAll(async () => {
  sys = await startTestSystem({
    apiKeys: `${KEYS.gateway}:gateway,${KEYS.agent}:agent,${KEYS.auditor}:auditor,${KEYS.admin}:admin`,
  });
});
afterAll(async () => {
  await sys?.stop();
});

function headersFor(who: Who): Record<string, string> {
  if (who === 'none') return {};
  if (who === 'wrong') return { authorization: 'Bearer not-a-real-key-000' };
  return { authorization: `Bearer ${KEYS[who]}` };
}
const as = (who: Who, method: string, p: string, body?: unknown) => call(sys.baseUrl, method, p, body, headersFor(who));
const seedQ = (o: Record<string, string>) => '?' + new URLSearchParams(o).toString();

function expectDenied(r: { status: number; body: any; headers: Headers }, status: 401 | 403): void {
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(r.body.type).toMatch(status === 401 ? /unauthorized$/ : /forbidden$/);
  expect(r.body.errors[0].field).toBe('authorization');
}

async function rows(sid: string): Promise<{ sessions: number; events: number }> {
  const s = await sys.pool.query('SELECT count(*)::int AS n FROM timeline_sessions WHERE session_id = $1', [sid]);
  const e = await sys.pool.query('SELECT count(*)::int AS n FROM timeline_events WHERE session_id = $1', [sid]);
  return { sessions: s.rows[0].n, events: e.rows[0].n };
}

/** A session created by the gateway with one USER_INPUT, for the other roles to act on. */
async function gatewaySession(): Promise<string> {
  const sid = uniqueSessionId('auth');
  expect((await as('gateway', 'POST', '/v1/sessions', { session_id: sid })).status).toBe(201);
  expect((await as('gateway', 'POST', `/v1/sessions/${sid}/events`, { type: 'USER_INPUT', content: { input: 'hi' } })).status).toBe(201);
  return sid;
}

const READS = (sid: string) => [`/v1/sessions/${sid}`, `/v1/sessions/${sid}/events`, `/v1/sessions/${sid}/context`, `/v1/sessions/${sid}/workflow`, '/v1/sessions'];

describe('authentication', () => {
  test('no key and a wrong key are 401 on every operation, and write nothing', async () => {
    const sid = await gatewaySession();
    const ghost = uniqueSessionId('auth_ghost');
    for (const who of ['none', 'wrong'] as const) {
      expectDenied(await as(who, 'POST', '/v1/sessions', { session_id: ghost }), 401);
      expectDenied(await as(who, 'POST', `/v1/sessions/${sid}/events`, { type: 'USER_INPUT', content: 1 }), 401);
      expectDenied(await as(who, 'POST', `/v1/sessions/${sid}/end`, {}), 401);
      expectDenied(await as(who, 'GET', `/v1/sessions/${sid}/verify`), 401);
      for (const p of READS(sid)) expectDenied(await as(who, 'GET', p), 401);
      expectDenied(await as(who, 'POST', `/timeline/init${seedQ({ session_id: ghost })}`), 401);
      expectDenied(await as(who, 'POST', `/timeline/append${seedQ({ session_id: sid, event_type: 'USER_INPUT', content: '{}' })}`), 401);
      expectDenied(await as(who, 'GET', `/timeline/get${seedQ({ session_id: sid })}`), 401);
    }
    expect(await rows(sid)).toEqual({ sessions: 1, events: 2 });
    expect(await rows(ghost)).toEqual({ sessions: 0, events: 0 });
  });

  test('authentication comes before validation: a bad request without a key is 401, not 400', async () => {
    const sid = await gatewaySession();
    expectDenied(await as('none', 'POST', '/v1/sessions', { session_id: '../x' }), 401);
    expectDenied(await as('none', 'POST', `/v1/sessions/${sid}/events`, { type: 'NOPE' }), 401);
    expectDenied(await as('none', 'GET', `/v1/sessions/${sid}/events?limit=0`), 401);
    expectDenied(await as('none', 'POST', `/timeline/append${seedQ({ session_id: sid, event_type: 'NOPE', content: '{' })}`), 401);
    expectDenied(await as('none', 'POST', '/timeline/init'), 401);
  });

  test.each([
    ['a Basic header', `Basic ${Buffer.from(`x:${KEYS.admin}`).toString('base64')}`],
    ['the key without a scheme', KEYS.admin],
    ['a key with trailing junk', `Bearer ${KEYS.admin} extra`],
    ['a prefix of a valid key', `Bearer ${KEYS.admin.slice(0, -1)}`],
    ['a valid key plus one character', `Bearer ${KEYS.admin}x`],
    ['an empty Bearer', 'Bearer '],
  ])('%s is 401', async (_name, header) => {
    expectDenied(await call(sys.baseUrl, 'GET', '/v1/sessions', undefined, { authorization: header }), 401);
  });

  test('the scheme is case-insensitive', async () => {
    const r = await call(sys.baseUrl, 'GET', '/v1/sessions?limit=1', undefined, { authorization: `bearer ${KEYS.admin}` });
    expect(r.status).toBe(200);
  });
});

describe('scopes', () => {
  test('gateway: creates, appends and ends; may not read (403) or verify (403)', async () => {
    const sid = uniqueSessionId('auth_gw');
    const created = await as('gateway', 'POST', '/v1/sessions', { session_id: sid, agent_id: 'a1' });
    expect(created.status).toBe(201);
    const appended = await as('gateway', 'POST', `/v1/sessions/${sid}/events`, { type: 'USER_INPUT', content: { input: 'x' } });
    expect(appended.status).toBe(201);
    for (const p of READS(sid)) expectDenied(await as('gateway', 'GET', p), 403);
    expectDenied(await as('gateway', 'GET', `/v1/sessions/${sid}/verify`), 403);
    expectDenied(await as('gateway', 'GET', `/timeline/get${seedQ({ session_id: sid })}`), 403);
    const ended = await as('gateway', 'POST', `/v1/sessions/${sid}/end`, { reason: 'done' });
    expect(ended.status).toBe(200);
    expect(ended.body.type).toBe('SESSION_END');
    expect(await rows(sid)).toEqual({ sessions: 1, events: 3 });

    // The seed surface too.
    const sid2 = uniqueSessionId('auth_gw_seed');
    expect((await as('gateway', 'POST', `/timeline/init${seedQ({ session_id: sid2 })}`)).status).toBe(200);
    expect((await as('gateway', 'POST', `/timeline/append${seedQ({ session_id: sid2, event_type: 'USER_INPUT', content: '{"input":"x"}' })}`)).status).toBe(200);
    expect((await as('gateway', 'POST', `/timeline/append${seedQ({ session_id: sid2, event_type: 'SESSION_END', content: '{"reason":"bye"}' })}`)).status).toBe(200);
    expect(await rows(sid2)).toEqual({ sessions: 1, events: 3 });
  });

  test('agent: appends and reads; may not create (403) or end (403 via /end and via SESSION_END) or verify', async () => {
    const sid = await gatewaySession();
    const appended = await as('agent', 'POST', `/v1/sessions/${sid}/events`, { type: 'LLM_RESPONSE', content: { response: 'hello' } });
    expect(appended.status).toBe(201);
    for (const p of READS(sid)) expect((await as('agent', 'GET', p)).status).toBe(200);
    const events = await as('agent', 'GET', `/v1/sessions/${sid}/events`);
    expect(events.body.events.map((e: { type: string }) => e.type)).toEqual(['SESSION_CREATE', 'USER_INPUT', 'LLM_RESPONSE']);
    expect((await as('agent', 'GET', `/timeline/get${seedQ({ session_id: sid })}`)).status).toBe(200);
    expect((await as('agent', 'POST', `/timeline/append${seedQ({ session_id: sid, event_type: 'TOOL_CALL', content: '{"tool_name":"t"}' })}`)).status).toBe(200);

    const ghost = uniqueSessionId('auth_agent');
    expectDenied(await as('agent', 'POST', '/v1/sessions', { session_id: ghost }), 403);
    expectDenied(await as('agent', 'POST', `/timeline/init${seedQ({ session_id: ghost })}`), 403);
    expect(await rows(ghost)).toEqual({ sessions: 0, events: 0 });

    expectDenied(await as('agent', 'POST', `/v1/sessions/${sid}/end`, { reason: 'mine' }), 403);
    expectDenied(await as('agent', 'POST', `/v1/sessions/${sid}/events`, { type: 'SESSION_END', content: { reason: 'sneaky' } }), 403);
    expectDenied(await as('agent', 'POST', `/timeline/append${seedQ({ session_id: sid, event_type: 'SESSION_END', content: '{}' })}`), 403);
    expectDenied(await as('agent', 'GET', `/v1/sessions/${sid}/verify`), 403);
    const after = await as('admin', 'GET', `/v1/sessions/${sid}`);
    expect(after.body.status).toBe('open');
    expect(await rows(sid)).toEqual({ sessions: 1, events: 4 });
  });

  test('auditor: reads and verifies; may not append, create or end (403)', async () => {
    const sid = await gatewaySession();
    for (const p of READS(sid)) expect((await as('auditor', 'GET', p)).status).toBe(200);
    const v = await as('auditor', 'GET', `/v1/sessions/${sid}/verify`);
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({ ok: true, checked: 2 });
    expectDenied(await as('auditor', 'POST', `/v1/sessions/${sid}/events`, { type: 'USER_INPUT', content: { input: 'x' } }), 403);
    expectDenied(await as('auditor', 'POST', `/timeline/append${seedQ({ session_id: sid, event_type: 'USER_INPUT', content: '{}' })}`), 403);
    expectDenied(await as('auditor', 'POST', `/v1/sessions/${sid}/end`, {}), 403);
    expectDenied(await as('auditor', 'POST', '/v1/sessions', { session_id: uniqueSessionId('auth_aud') }), 403);
    expect(await rows(sid)).toEqual({ sessions: 1, events: 2 });
  });

  test('admin: everything', async () => {
    const sid = uniqueSessionId('auth_admin');
    expect((await as('admin', 'POST', '/v1/sessions', { session_id: sid, agent_id: 'adm' })).status).toBe(201);
    expect((await as('admin', 'POST', `/v1/sessions/${sid}/events`, { type: 'USER_INPUT', content: { input: 'x' } })).status).toBe(201);
    for (const p of READS(sid)) expect((await as('admin', 'GET', p)).status).toBe(200);
    expect((await as('admin', 'GET', `/v1/sessions/${sid}/verify`)).body.ok).toBe(true);
    expect((await as('admin', 'GET', `/timeline/get${seedQ({ session_id: sid })}`)).body.data.events).toHaveLength(2);
    expect((await as('admin', 'POST', `/v1/sessions/${sid}/events`, { type: 'SESSION_END', content: { reason: 'admin' } })).status).toBe(201);
    expect((await as('admin', 'GET', `/v1/sessions/${sid}`)).body.status).toBe('archived');
    const sid2 = uniqueSessionId('auth_admin');
    expect((await as('admin', 'POST', `/timeline/init${seedQ({ session_id: sid2 })}`)).status).toBe(200);
    expect((await as('admin', 'POST', `/v1/sessions/${sid2}/end`)).status).toBe(200);
  });

  test('a key with several scopes has the union of them', async () => {
    const store = loadKeyStore('multi-key-1234:agent|auditor');
    const header = 'Bearer multi-key-1234';
    expect(() => store.authorise(header, Operation.Read)).not.toThrow();
    expect(() => store.authorise(header, Operation.Append)).not.toThrow();
    expect(() => store.authorise(header, Operation.Verify)).not.toThrow();
    expect(() => store.authorise(header, Operation.CreateSession)).toThrow(expect.objectContaining({ code: 'forbidden' }));
    expect(() => store.authorise(header, Operation.EndSession)).toThrow(expect.objectContaining({ code: 'forbidden' }));
  });
});

describe('health endpoints need no key', () => {
  test('/healthz', async () => {
    const r = await call(sys.baseUrl, 'GET', '/healthz');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'ok' });
  });

  test('/readyz reports postgres and temporal ok', async () => {
    const r = await call(sys.baseUrl, 'GET', '/readyz');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'ready', checks: { postgres: 'ok', temporal: 'ok' } });
  });

  test('unknown routes are 404 without a key', async () => {
    const r = await call(sys.baseUrl, 'GET', '/nowhere');
    expect(r.status).toBe(404);
  });
});

describe('start-up guards', () => {
  const open = loadKeyStore();
  const keyed = loadKeyStore('some-key-1234:admin');

  test('an open API refuses a non-loopback address', () => {
    expect(open.open).toBe(true);
    for (const host of ['0.0.0.0', '::', '192.168.1.10', 'example.com', '127.example.com', '127.0.0.1.nip.io']) {
      expect(() => assertSafeBinding(open, host)).toThrow(/refusing to listen/);
    }
  });

  test('an open API may listen on loopback', () => {
    for (const host of ['127.0.0.1', '127.0.0.2', '::1', 'localhost']) expect(() => assertSafeBinding(open, host)).not.toThrow();
  });

  test('with keys any address is allowed', () => {
    expect(keyed.open).toBe(false);
    for (const host of ['0.0.0.0', '::', '192.168.1.10']) expect(() => assertSafeBinding(keyed, host)).not.toThrow();
  });

  test('loadKeyStore refuses an unknown scope, a short key and a malformed entry', () => {
    expect(() => loadKeyStore('good-key-1234:superuser')).toThrow(/unknown API key scope "superuser"/);
    expect(() => loadKeyStore('good-key-1234:agent|root')).toThrow(/unknown API key scope "root"/);
    expect(() => loadKeyStore('short:admin')).toThrow(/at least 8 characters/);
    expect(() => loadKeyStore('1234567:admin')).toThrow(/at least 8 characters/);
    expect(() => loadKeyStore('no-colon-here-1234')).toThrow(/key:scope/);
    expect(() => loadKeyStore('12345678:admin')).not.toThrow();
  });

  test('loadKeyStore reads a keys file with the same checks', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-keys-'));
    try {
      const file = path.join(dir, 'keys.json');
      fs.writeFileSync(file, JSON.stringify({ keys: [{ key: 'file-key-12345', scopes: ['auditor'] }] }));
      const store = loadKeyStore(undefined, file);
      expect(store.open).toBe(false);
      expect(() => store.authorise('Bearer file-key-12345', Operation.Verify)).not.toThrow();
      expect(() => store.authorise('Bearer file-key-12345', Operation.Append)).toThrow(DomainError);
      fs.writeFileSync(file, JSON.stringify({ keys: [{ key: 'file-key-12345', scopes: ['owner'] }] }));
      expect(() => loadKeyStore(undefined, file)).toThrow(/unknown API key scope/);
      fs.writeFileSync(file, JSON.stringify({ keys: [{ key: 'tiny', scopes: ['admin'] }] }));
      expect(() => loadKeyStore(undefined, file)).toThrow(/at least 8 characters/);
      fs.writeFileSync(file, JSON.stringify({ nope: [] }));
      expect(() => loadKeyStore(undefined, file)).toThrow(/expected/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('an open store lets everything through; a keyed store answers 401 and 403 as DomainErrors', () => {
    expect(() => open.authorise(undefined, Operation.Verify)).not.toThrow();
    expect(() => keyed.authorise(undefined, Operation.Read)).toThrow(expect.objectContaining({ code: 'unauthorized' }));
    const agentOnly = loadKeyStore('agent-only-123:agent');
    expect(() => agentOnly.authorise('Bearer agent-only-123', Operation.Verify)).toThrow(expect.objectContaining({ code: 'forbidden' }));
  });
});
