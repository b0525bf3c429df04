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
import type { TimekeeperClient } from '../../sdk/client';
import { refusal, startTestSystem, TestSystem, uniqueSessionId } from '../support';

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

/** The system's client as `who`: with that key, a wrong one, or none. */
function as(who: Who): TimekeeperClient {
  if (who === 'none') return sys.tk;
  return sys.tk.with({ apiKey: who === 'wrong' ? 'not-a-real-key-000' : KEYS[who] });
}
function expectDenied(r: { status: number; body: any; headers: Headers }, status: 401 | 403): void {
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(r.body.type).toMatch(status === 401 ? /unauthorized$/ : /forbidden$/);
  expect(r.body.errors?.[0]?.field).toBe('authorization');
}

async function rows(sid: string): Promise<{ sessions: number; events: number }> {
  const s = await sys.pool.query('SELECT count(*)::int AS n FROM timeline_sessions WHERE session_id = $1', [sid]);
  const e = await sys.pool.query('SELECT count(*)::int AS n FROM timeline_events WHERE session_id = $1', [sid]);
  return { sessions: s.rows[0].n, events: e.rows[0].n };
}

/** A session created by the gateway with one USER_INPUT, for the other roles to act on. */
async function gatewaySession(): Promise<string> {
  const sid = uniqueSessionId('auth');
  expect((await as('gateway').call('createSession', { body: { session_id: sid } })).status).toBe(201);
  expect((await as('gateway').call('appendEvent', { params: { id: sid }, body: { type: 'USER_INPUT', content: { input: 'hi' } } })).status).toBe(201);
  return sid;
}

/** Every read route, as calls a client can make. */
const READS = (sid: string): ((c: TimekeeperClient) => Promise<{ status: number }>)[] => [
  (c) => c.call('getSession', { params: { id: sid } }),
  (c) => c.call('listEvents', { params: { id: sid } }),
  (c) => c.call('getContext', { params: { id: sid } }),
  (c) => c.call('getWorkflow', { params: { id: sid } }),
  (c) => c.call('listSessions'),
];

describe('authentication', () => {
  test('no key and a wrong key are 401 on every operation, and write nothing', async () => {
    const sid = await gatewaySession();
    const ghost = uniqueSessionId('auth_ghost');
    for (const who of ['none', 'wrong'] as const) {
      const c = as(who);
      expectDenied(await refusal(c.createSession({ session_id: ghost })), 401);
      expectDenied(await refusal(c.append(sid, { type: 'USER_INPUT', content: 1 })), 401);
      expectDenied(await refusal(c.end(sid, {})), 401);
      expectDenied(await refusal(c.verify(sid)), 401);
      for (const read of READS(sid)) expectDenied(await refusal(read(c)), 401);
      expectDenied(await refusal(c.seed.init(ghost)), 401);
      expectDenied(await refusal(c.seed.append({ session_id: sid, event_type: 'USER_INPUT', content: '{}' })), 401);
      expectDenied(await refusal(c.seed.get({ session_id: sid })), 401);
    }
    expect(await rows(sid)).toEqual({ sessions: 1, events: 2 });
    expect(await rows(ghost)).toEqual({ sessions: 0, events: 0 });
  });

  test('authentication comes before validation: a bad request without a key is 401, not 400', async () => {
    const sid = await gatewaySession();
    const c = as('none');
    expectDenied(await refusal(c.createSession({ session_id: '../x' })), 401);
    // Requests the contract's types would not let through go raw.
    expectDenied(await c.raw('POST', `/v1/sessions/${sid}/events`, { body: { type: 'NOPE' } }), 401);
    expectDenied(await refusal(c.events(sid, { limit: 0 })), 401);
    expectDenied(await c.raw('POST', `/timeline/append?${new URLSearchParams({ session_id: sid, event_type: 'NOPE', content: '{' })}`), 401);
    expectDenied(await c.raw('POST', '/timeline/init'), 401);
  });

  test.each([
    ['a Basic header', `Basic ${Buffer.from(`x:${KEYS.admin}`).toString('base64')}`],
    ['the key without a scheme', KEYS.admin],
    ['a key with trailing junk', `Bearer ${KEYS.admin} extra`],
    ['a prefix of a valid key', `Bearer ${KEYS.admin.slice(0, -1)}`],
    ['a valid key plus one character', `Bearer ${KEYS.admin}x`],
    ['an empty Bearer', 'Bearer '],
  ])('%s is 401', async (_name, header) => {
    expectDenied(await refusal(sys.tk.call('listSessions', { headers: { authorization: header } })), 401);
  });

  test('the scheme is case-insensitive', async () => {
    const r = await sys.tk.call('listSessions', { query: { limit: 1 }, headers: { authorization: `bearer ${KEYS.admin}` } });
    expect(r.status).toBe(200);
  });
});

describe('scopes', () => {
  test('gateway: creates, appends and ends; may not read (403) or verify (403)', async () => {
    const sid = uniqueSessionId('auth_gw');
    const gw = as('gateway');
    const created = await gw.call('createSession', { body: { session_id: sid, agent_id: 'a1' } });
    expect(created.status).toBe(201);
    const appended = await gw.call('appendEvent', { params: { id: sid }, body: { type: 'USER_INPUT', content: { input: 'x' } } });
    expect(appended.status).toBe(201);
    for (const read of READS(sid)) expectDenied(await refusal(read(gw)), 403);
    expectDenied(await refusal(gw.verify(sid)), 403);
    expectDenied(await refusal(gw.seed.get({ session_id: sid })), 403);
    const ended = await gw.call('endSession', { params: { id: sid }, body: { reason: 'done' } });
    expect(ended.status).toBe(200);
    expect(ended.body.type).toBe('SESSION_END');
    expect(await rows(sid)).toEqual({ sessions: 1, events: 3 });

    // The seed surface too.
    const sid2 = uniqueSessionId('auth_gw_seed');
    expect((await gw.call('seedInit', { query: { session_id: sid2 } })).status).toBe(200);
    expect((await gw.call('seedAppend', { query: { session_id: sid2, event_type: 'USER_INPUT', content: '{"input":"x"}' } })).status).toBe(200);
    expect((await gw.call('seedAppend', { query: { session_id: sid2, event_type: 'SESSION_END', content: '{"reason":"bye"}' } })).status).toBe(200);
    expect(await rows(sid2)).toEqual({ sessions: 1, events: 3 });
  });

  test('agent: appends and reads; may not create (403) or end (403 via /end and via SESSION_END) or verify', async () => {
    const sid = await gatewaySession();
    const agent = as('agent');
    const appended = await agent.call('appendEvent', { params: { id: sid }, body: { type: 'LLM_RESPONSE', content: { response: 'hello' } } });
    expect(appended.status).toBe(201);
    for (const read of READS(sid)) expect((await read(agent)).status).toBe(200);
    const events = await agent.call('listEvents', { params: { id: sid } });
    expect(events.body.events.map((e) => e.type)).toEqual(['SESSION_CREATE', 'USER_INPUT', 'LLM_RESPONSE']);
    expect((await agent.call('seedGet', { query: { session_id: sid } })).status).toBe(200);
    expect((await agent.call('seedAppend', { query: { session_id: sid, event_type: 'TOOL_CALL', content: '{"tool_name":"t"}' } })).status).toBe(200);

    const ghost = uniqueSessionId('auth_agent');
    expectDenied(await refusal(agent.createSession({ session_id: ghost })), 403);
    expectDenied(await refusal(agent.seed.init(ghost)), 403);
    expect(await rows(ghost)).toEqual({ sessions: 0, events: 0 });

    expectDenied(await refusal(agent.end(sid, { reason: 'mine' })), 403);
    expectDenied(await refusal(agent.append(sid, { type: 'SESSION_END', content: { reason: 'sneaky' } })), 403);
    expectDenied(await refusal(agent.seed.append({ session_id: sid, event_type: 'SESSION_END', content: '{}' })), 403);
    expectDenied(await refusal(agent.verify(sid)), 403);
    const after = await as('admin').session(sid);
    expect(after.status).toBe('open');
    expect(await rows(sid)).toEqual({ sessions: 1, events: 4 });
  });

  test('auditor: reads and verifies; may not append, create or end (403)', async () => {
    const sid = await gatewaySession();
    const auditor = as('auditor');
    for (const read of READS(sid)) expect((await read(auditor)).status).toBe(200);
    const v = await auditor.call('verifySession', { params: { id: sid } });
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({ ok: true, checked: 2 });
    expectDenied(await refusal(auditor.append(sid, { type: 'USER_INPUT', content: { input: 'x' } })), 403);
    expectDenied(await refusal(auditor.seed.append({ session_id: sid, event_type: 'USER_INPUT', content: '{}' })), 403);
    expectDenied(await refusal(auditor.end(sid, {})), 403);
    expectDenied(await refusal(auditor.createSession({ session_id: uniqueSessionId('auth_aud') })), 403);
    expect(await rows(sid)).toEqual({ sessions: 1, events: 2 });
  });

  test('admin: everything', async () => {
    const sid = uniqueSessionId('auth_admin');
    const admin = as('admin');
    expect((await admin.call('createSession', { body: { session_id: sid, agent_id: 'adm' } })).status).toBe(201);
    expect((await admin.call('appendEvent', { params: { id: sid }, body: { type: 'USER_INPUT', content: { input: 'x' } } })).status).toBe(201);
    for (const read of READS(sid)) expect((await read(admin)).status).toBe(200);
    expect((await admin.verify(sid)).ok).toBe(true);
    expect((await admin.seed.get({ session_id: sid })).data.events).toHaveLength(2);
    expect((await admin.call('appendEvent', { params: { id: sid }, body: { type: 'SESSION_END', content: { reason: 'admin' } } })).status).toBe(201);
    expect((await admin.session(sid)).status).toBe('archived');
    const sid2 = uniqueSessionId('auth_admin');
    expect((await admin.call('seedInit', { query: { session_id: sid2 } })).status).toBe(200);
    expect((await admin.call('endSession', { params: { id: sid2 } })).status).toBe(200);
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
    const r = await sys.tk.call('health');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'ok' });
  });

  test('/readyz reports postgres, temporal and a polling worker ok', async () => {
    const r = await sys.tk.call('readiness');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'ready', checks: { postgres: 'ok', temporal: 'ok', worker: 'ok' }, timed_out: [] });
  });

  test('unknown routes are 404 without a key', async () => {
    const r = await sys.tk.raw('GET', '/nowhere');
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
