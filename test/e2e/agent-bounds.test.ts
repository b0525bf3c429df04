/**
 * Keys bound to agents (issue 16), across every route: a matrix generated from the route
 * contracts (api/routes.ts), like the scope matrix, so a new route is covered without new test
 * code. A key bound to agent-a (with every scope but admin) calls each route against objects
 * owned by agent-a (allowed: anything but 401/403/404) and by agent-b (404, as if absent, and
 * nothing written); lists and other objectless answers never name agent-b's objects; creates
 * take the key's agent, refuse another with 403 naming agent_id and store nothing. Plus: a key
 * bound to several agents, prefixes, unbound keys spanning all, signals within bounds, and the
 * key store's parsing of `agents`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadKeyStore, Operation } from '../../api/auth';
import type { RouteContract } from '../../api/contract';
import { routes } from '../../api/routes';
import { Operation as Ops } from '../../lib/platform/scopes';
import { TaskClient } from '../../clients/tasks';
import { taskRunQueues } from '../../lib/config';
import { taskSecretsOf } from '../../lib/secrets-key';
import { SignalStore } from '../../lib/store/signals';
import { TaskStore } from '../../lib/store/tasks';
import { followUpCreator } from '../../worker/follow-ups';
import { startTestSystem, TestSystem, uniqueSessionId, uid, eventually } from '../support';

const KEYS = {
  admin: 'kb-admin-key-0001',
  a: 'kb-agent-a-key-01',
  multi: 'kb-multi-key-0001',
  auditor: 'kb-auditor-key-01',
} as const;

let sys: TestSystem;
const sfx = Date.now().toString(36);
type Kind = 'session' | 'intent' | 'task' | 'run' | 'signal';
/** The fixture objects of each owner. */
const own: Record<'a' | 'b', Record<Kind, string>> = { a: {} as Record<Kind, string>, b: {} as Record<Kind, string> };
const listenName = `kb-ping-${sfx}`;
const listeners: Record<'a' | 'b', string> = { a: '', b: '' };

const as = (k: keyof typeof KEYS) => sys.tk.with({ apiKey: KEYS[k] });
const agentOf = (o: 'a' | 'b') => (o === 'a' ? 'agent-a' : 'agent-b');

async function fixtures(o: 'a' | 'b'): Promise<void> {
  const admin = as('admin');
  const agent_id = agentOf(o);
  const session = uniqueSessionId(`kb_${o}`);
  expect((await admin.raw('POST', '/v1/sessions', { body: { session_id: session, agent_id } })).status).toBe(201);
  expect((await admin.raw('POST', `/v1/sessions/${session}/events`, { body: { type: 'USER_INPUT', content: { input: 'hi' } } })).status).toBe(201);
  const intent = `KB-${o.toUpperCase()}-${sfx}`;
  expect((await admin.raw('POST', '/api/events', { body: { event_id: intent, domain: 'kb', action: 'act', agent_id } })).status).toBe(201);
  const task = uid(`kb-${o}`);
  const listener = uid(`kb-listen-${o}`);
  const future = new Date(Date.now() + 86_400_000).toISOString();
  // Digests over each other's runs (a digest may not name itself), so a key bound to the owner may change them.
  const created = await admin.raw('POST', '/v1/tasks', { body: { task_id: task, trigger: { type: 'at', at: future }, agent: { type: 'digest', task_ids: [listener] }, agent_id } });
  expect(created.status).toBe(201);
  const fired = await admin.raw('POST', `/v1/tasks/${task}/trigger`);
  expect(fired.status).toBe(202);
  const run = (fired.body as { run_id: string }).run_id;
  await eventually(`run ${run} to finish`, async () => {
    const r = await admin.raw('GET', `/v1/runs/${encodeURIComponent(run)}`);
    return r.status === 200 && ['success', 'failed'].includes((r.body as { status: string }).status) ? true : undefined;
  }, { timeoutMs: 30_000, stepMs: 50, errors: 'throw' });
  // A signal sent by a key bound to the owner (no key here is bound to agent-b alone: stored as one would store it).
  const signal = `kb-own-sig-${o}-${sfx}`;
  if (o === 'a') expect((await as('a').raw('POST', '/v1/signals', { body: { name: `kb-own-${sfx}`, signal_id: signal } })).status).toBe(202);
  else await new SignalStore(sys.pool).insert({ signal_id: signal, name: `kb-own-${sfx}`, value: null, values: {}, atMs: Date.now() }, 'api', { exact: [agent_id], prefixes: [] });
  own[o] = { session, intent, task, run, signal };
  const l = await admin.raw('POST', '/v1/tasks', { body: { task_id: listener, trigger: { type: 'delay', event: listenName, seconds: 3600 }, agent: { type: 'digest', task_ids: [task] }, agent_id } });
  expect(l.status).toBe(201);
  listeners[o] = listener;
}

beforeAll(async () => {
  sys = await startTestSystem({
    apiKeys: [
      `${KEYS.admin}:admin`,
      `${KEYS.a}:gateway|agent|auditor@agent-a`,
      `${KEYS.multi}:gateway|agent@agent-a|team-b-*`,
      `${KEYS.auditor}:auditor`,
    ].join(','),
    // The createTask example's local LLM allowed and its key registered (docs/api.md), as an operator must.
    config: { outboundAllowHosts: ['127.0.0.1'], agentSecrets: ['LLM_API_KEY'] },
  });
  await fixtures('a');
  await fixtures('b');
});
afterAll(async () => {
  await sys?.stop();
});

/** What a B object's write may have changed: its rows. */
async function fingerprintB(): Promise<Record<string, number>> {
  const b = own.b;
  const r = await sys.pool.query(
    `SELECT (SELECT count(*)::int FROM timeline_events WHERE session_id = $1) AS events,
            (SELECT count(*)::int FROM intent_transitions WHERE event_id = $2) AS transitions,
            (SELECT count(*)::int FROM task_history WHERE task_id = $3) AS history,
            (SELECT count(*)::int FROM task_run_log WHERE task_id = $3) AS runs`,
    [b.session, b.intent, b.task],
  );
  return r.rows[0];
}

// ---- the matrix, from the contracts ------------------------------------------------------------

const paramNames = (c: RouteContract) => [...c.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]);
const queryNames = (c: RouteContract) => Object.keys(c.query?.shape ?? {});
const isCreate = (c: RouteContract) => c.scopes === Ops.CreateSession || (c.method === 'post' && paramNames(c).length === 0 && 'agent_id' in ((c.body as { shape?: object } | undefined)?.shape ?? {}));

/** The owned object a route's request names, where it names one: a path parameter, or the seed routes' session_id. */
function ownedParam(c: RouteContract): { in: 'path' | 'query'; name: string; kind: Kind } | undefined {
  if (isCreate(c)) return undefined;
  const ps = paramNames(c);
  if (ps.includes('eventId')) return { in: 'path', name: 'eventId', kind: 'intent' };
  if (ps.includes('id')) {
    const kind: Kind | undefined = c.path.startsWith('/v1/sessions/') ? 'session' : c.path.startsWith('/v1/tasks/') ? 'task' : c.path.startsWith('/v1/runs/') ? 'run' : c.path.startsWith('/v1/signals/') ? 'signal' : undefined;
    if (!kind) throw new Error(`${c.method} ${c.path}: an :id of an unknown kind; say which object it names here`);
    return { in: 'path', name: 'id', kind };
  }
  if (queryNames(c).includes('session_id') && c.path.startsWith('/timeline/')) return { in: 'query', name: 'session_id', kind: 'session' };
  return undefined;
}

/** A route's documented request with the owned object (if any) set to `id`. */
function request(c: RouteContract, id?: string): { method: string; url: string; body: unknown } {
  const owned = ownedParam(c);
  const examples: Record<string, string | number> = { ...(c.parameterExamples ?? {}) };
  if (owned && id !== undefined) examples[owned.name] = id;
  const inPath = new Set(paramNames(c));
  const url = c.path.replace(/:([A-Za-z_]+)/g, (_m, p: string) => encodeURIComponent(String(examples[p] ?? 'x')));
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(examples)) if (!inPath.has(k)) query.set(k, String(v));
  return { method: c.method.toUpperCase(), url: `${url}${query.size ? `?${query}` : ''}`, body: c.example };
}

const ALL = Object.entries(routes) as [string, RouteContract][];
const keyed = ALL.filter(([, c]) => c.scopes.length > 0);
const objectRoutes = keyed.filter(([, c]) => ownedParam(c));
const objectless = keyed.filter(([, c]) => !ownedParam(c) && !isCreate(c));
const creates = keyed.filter(([, c]) => isCreate(c));

test('every keyed route is in the matrix: it names an owned object, creates one, or names none', () => {
  expect(objectRoutes.length + objectless.length + creates.length).toBe(keyed.length);
  expect(objectRoutes.length).toBeGreaterThan(20);
  expect(creates.map(([n]) => n).sort()).toEqual(['createIntent', 'createIntentLog', 'createSession', 'createTask', 'seedInit']);
});

describe.each(objectRoutes)('%s', (_name, c) => {
  const kind = ownedParam(c)!.kind;
  test(`agent-b's ${kind} is 404 to a key bound to agent-a, and nothing is written; agent-a's is not refused`, async () => {
    const before = await fingerprintB();
    const b = request(c, own.b[kind]);
    const rb = await as('a').raw(b.method, b.url, { body: b.body });
    expect({ status: rb.status, type: (rb.body as { type?: string }).type }).toEqual({ status: 404, type: expect.stringMatching(/not_found$/) });
    expect(JSON.stringify(rb.body)).not.toContain(agentOf('b'));
    expect(await fingerprintB()).toEqual(before);

    const a = request(c, own.a[kind]);
    const ra = await as('a').raw(a.method, a.url, { body: a.body });
    expect({ route: `${a.method} ${a.url}`, refused: [401, 403, 404].includes(ra.status) }).toEqual({ route: `${a.method} ${a.url}`, refused: false });
  });
});

describe.each(objectless)('%s', (_name, c) => {
  test("answers a key bound to agent-a without naming agent-b's objects (or refuses instance-wide data with 403)", async () => {
    const before = await fingerprintB();
    const q = request(c);
    const r = await as('a').raw(q.method, q.url, { body: q.body });
    if (r.status === 403) {
      expect((r.body as { detail: string }).detail).toMatch(/instance-wide/);
    } else {
      expect([401, 404].includes(r.status)).toBe(false);
      const text = JSON.stringify(r.body);
      for (const id of [...Object.values(own.b), listeners.b, agentOf('b')]) expect(text).not.toContain(id);
    }
    expect(await fingerprintB()).toEqual(before);
  });
});

/** The id field a create names, and where its owner is stored. */
const CREATE_ID: Record<string, { field: string; in: 'body' | 'query'; owner: string }> = {
  createSession: { field: 'session_id', in: 'body', owner: 'SELECT agent_id AS o FROM timeline_sessions WHERE session_id = $1' },
  seedInit: { field: 'session_id', in: 'query', owner: 'SELECT agent_id AS o FROM timeline_sessions WHERE session_id = $1' },
  createIntent: { field: 'event_id', in: 'body', owner: 'SELECT agent_id AS o FROM intents WHERE event_id = $1' },
  createIntentLog: { field: 'event_id', in: 'body', owner: 'SELECT agent_id AS o FROM intents WHERE event_id = $1' },
  createTask: { field: 'task_id', in: 'body', owner: "SELECT definition->>'agent_id' AS o FROM task_history WHERE task_id = $1" },
};

describe.each(creates)('%s', (name, c) => {
  const spec = CREATE_ID[name];
  const unique = () => (spec.field === 'event_id' ? `KB-NEW-${sfx}-${Math.random().toString(36).slice(2, 8)}` : spec.field === 'task_id' ? uid('kb-new') : uniqueSessionId('kb_new'));
  function createRequest(id: string, agentId?: string) {
    const base = request(c);
    if (spec.in === 'query') return { ...base, url: `${c.path}?${new URLSearchParams({ [spec.field]: id })}` };
    const body: Record<string, unknown> = { ...(c.example as object), [spec.field]: id };
    delete body.agent_id;
    if (agentId !== undefined) body.agent_id = agentId;
    return { ...base, body };
  }
  const owner = async (id: string) => (await sys.pool.query(spec.owner, [id])).rows.map((r) => r.o);

  if (spec.in === 'body') {
    test("with agent-b's id: 403 naming agent_id, nothing stored", async () => {
      const id = unique();
      const q = createRequest(id, 'agent-b');
      const r = await as('a').raw(q.method, q.url, { body: q.body });
      expect(r.status).toBe(403);
      expect((r.body as { errors: unknown[] }).errors).toEqual([{ field: 'agent_id', reason: expect.stringMatching(/outside/) }]);
      expect(await owner(id)).toEqual([]);
    });
  }

  test("without an agent id: stored as the key's one agent; a key bound to several agents must name one (400)", async () => {
    const id = unique();
    const q = createRequest(id);
    const r = await as('a').raw(q.method, q.url, { body: q.body });
    expect(r.status).toBeLessThan(300);
    expect(await owner(id)).toEqual(['agent-a']);

    const id2 = unique();
    const q2 = createRequest(id2);
    const r2 = await as('multi').raw(q2.method, q2.url, { body: q2.body });
    expect(r2.status).toBe(400);
    expect((r2.body as { errors: { field: string }[] }).errors[0].field).toBe('agent_id');
    expect(await owner(id2)).toEqual([]);
  });
});

// ---- beyond the matrix ---------------------------------------------------------------------------

describe('bounds in detail', () => {
  test("lists show the key's own objects", async () => {
    const a = as('a');
    const sessions = (await a.raw('GET', '/v1/sessions?limit=200')).body as { sessions: { session_id: string }[] };
    expect(sessions.sessions.map((s) => s.session_id)).toContain(own.a.session);
    const intents = (await a.raw('GET', '/api/events?limit=200')).body as { events: { event_id: string; agent_id: string }[] };
    expect(intents.events.map((i) => i.event_id)).toContain(own.a.intent);
    expect(new Set(intents.events.map((i) => i.agent_id))).toEqual(new Set(['agent-a']));
    // (own.a.intent may have left the pending list: the matrix's transitions on it are allowed, and
    // blocked → done is one since OML's recovery flow; the intents A created since are pending.)
    const pending = (await a.raw('GET', '/api/events/pending')).body as { event_id: string }[];
    expect(pending.length).toBeGreaterThan(0);
    expect(pending.map((i) => i.event_id)).not.toContain(own.b.intent);
    const pendingAll = (await as('admin').raw('GET', '/api/events/pending')).body as { event_id: string }[];
    expect(pendingAll.map((i) => i.event_id)).toContain(own.b.intent);
    // (own.a.task was deleted by the matrix's deleteTask: the list leaves deleted tasks out.)
    const tasks = (await a.raw('GET', '/v1/tasks?limit=200')).body as { tasks: { task_id: string }[] };
    expect(tasks.tasks.map((t) => t.task_id)).toContain(listeners.a);
    const runs = (await a.raw('GET', '/v1/runs?limit=200')).body as { runs: { run_id: string }[] };
    expect(runs.runs.map((r) => r.run_id)).toContain(own.a.run);
    const stats = (await a.raw('GET', '/api/stats')).body as { by_domain: Record<string, number> };
    const all = (await as('admin').raw('GET', '/api/stats')).body as { by_domain: Record<string, number> };
    expect(stats.by_domain.kb).toBeLessThan(all.by_domain.kb);
  });

  test('unbound keys (admin, auditor) span all agents', async () => {
    for (const o of ['a', 'b'] as const) {
      expect((await as('admin').raw('GET', `/v1/sessions/${own[o].session}`)).status).toBe(200);
      expect((await as('auditor').raw('GET', `/v1/sessions/${own[o].session}/verify`)).status).toBe(200);
      expect((await as('auditor').raw('GET', `/api/events/${own[o].intent}`)).status).toBe(200);
      expect((await as('auditor').raw('GET', `/v1/tasks/${own[o].task}`)).status).toBe(200);
    }
  });

  test('a prefix bound: team-b-* matches team-b-1, not agent-b nor team-bx; a task may not move outside the bounds', async () => {
    const m = as('multi');
    const sid = uniqueSessionId('kb_team');
    expect((await m.raw('POST', '/v1/sessions', { body: { session_id: sid, agent_id: 'team-b-1' } })).status).toBe(201);
    expect((await m.raw('GET', `/v1/sessions/${sid}`)).status).toBe(200);
    const bx = uniqueSessionId('kb_teamx');
    expect((await m.raw('POST', '/v1/sessions', { body: { session_id: bx, agent_id: 'team-bx' } })).status).toBe(403);
    expect((await m.raw('GET', `/v1/sessions/${own.b.session}`)).status).toBe(404);
    // LIKE's own wildcards in an id are literal: team_b-1 is not team-b-*.
    const like = uniqueSessionId('kb_like');
    expect((await as('admin').raw('POST', '/v1/sessions', { body: { session_id: like, agent_id: 'team_b-1' } })).status).toBe(201);
    const list = (await m.raw('GET', '/v1/sessions?limit=200')).body as { sessions: { session_id: string }[] };
    expect(list.sessions.map((s) => s.session_id)).toContain(sid);
    expect(list.sessions.map((s) => s.session_id)).not.toContain(like);

    const task = uid('kb-team');
    const body = { task_id: task, trigger: { type: 'at', at: new Date(Date.now() + 86_400_000).toISOString() }, agent: { type: 'digest', task_ids: [listeners.a] }, agent_id: 'team-b-2' };
    const created = await m.raw('POST', '/v1/tasks', { body });
    expect({ status: created.status, body: created.status === 201 ? null : created.body }).toEqual({ status: 201, body: null });
    const moved = await m.raw('PATCH', `/v1/tasks/${task}`, { body: { agent_id: 'agent-b' } });
    expect(moved.status).toBe(403);
    expect((await sys.pool.query("SELECT definition->>'agent_id' AS o FROM task_history WHERE task_id = $1", [task])).rows.map((r) => r.o)).toEqual(['team-b-2']);
  });

  test("a bound key may not reach other agents' data through a create: a linked session, a session delivery, a digest over all runs", async () => {
    const a = as('a');
    const linked = await a.raw('POST', '/api/events', { body: { event_id: `KB-LINK-${sfx}`, domain: 'kb', action: 'x', session_id: own.b.session } });
    expect(linked.status).toBe(404);
    const at = { type: 'at', at: new Date(Date.now() + 86_400_000).toISOString() };
    const delivered = await a.raw('POST', '/v1/tasks', { body: { trigger: at, agent: { type: 'digest', task_ids: [own.a.task] }, delivery: [{ type: 'session', session_id: own.b.session }] } });
    expect(delivered.status).toBe(404);
    const everything = await a.raw('POST', '/v1/tasks', { body: { trigger: at, agent: { type: 'digest' } } });
    expect(everything.status).toBe(403);
    expect((everything.body as { errors: { field: string }[] }).errors[0].field).toBe('agent.task_ids');
    const othersRuns = await a.raw('POST', '/v1/tasks', { body: { trigger: at, agent: { type: 'digest', task_ids: [own.b.task] } } });
    expect(othersRuns.status).toBe(403);
    const mine = await a.raw('POST', '/v1/tasks', { body: { trigger: at, agent: { type: 'digest', task_ids: [own.a.task] }, delivery: [{ type: 'session', session_id: own.a.session }] } });
    expect(mine.status).toBe(201);
    expect((await sys.pool.query('SELECT 1 FROM intents WHERE event_id = $1', [`KB-LINK-${sfx}`])).rowCount).toBe(0);
  });

  test("a dedupe_key held by another agent's intent is refused without naming that intent or its data", async () => {
    const dk = `kb-dk-${sfx}`;
    const held = await as('admin').raw('POST', '/api/events', { body: { event_id: `KB-DK-B-${sfx}`, domain: 'kb', action: 'x', dedupe_key: dk, data: { secret_plan: 'b-only' }, agent_id: 'agent-b' } });
    expect(held.status).toBe(201);
    const r = await as('a').raw('POST', '/api/events', { body: { event_id: `KB-DK-A-${sfx}`, domain: 'kb', action: 'x', dedupe_key: dk } });
    expect({ status: r.status, field: (r.body as { errors: { field: string }[] }).errors[0].field }).toEqual({ status: 409, field: 'dedupe_key' });
    expect(JSON.stringify(r.body)).not.toMatch(/KB-DK-B|b-only/);
    // The holder's own agent hears which intent holds it, as before.
    const mine = await as('admin').raw('POST', '/api/events', { body: { event_id: `KB-DK-B2-${sfx}`, domain: 'kb', action: 'x', dedupe_key: dk, agent_id: 'agent-b' } });
    expect(JSON.stringify(mine.body)).toContain(`KB-DK-B-${sfx}`);
  });

  test("a bound key's signal reaches only its agents' tasks, now and when a scheduler catches up", async () => {
    const r = await as('a').raw('POST', '/v1/signals', { body: { name: listenName, signal_id: `kb-sig-a-${sfx}` } });
    expect(r.status).toBe(202);
    expect((r.body as { delivered_to: string[] }).delivered_to).toEqual([listeners.a]);
    const all = await as('admin').raw('POST', '/v1/signals', { body: { name: listenName, signal_id: `kb-sig-all-${sfx}` } });
    expect((all.body as { delivered_to: string[] }).delivered_to.sort()).toEqual([listeners.a, listeners.b].sort());
    const store = new SignalStore(sys.pool);
    const caughtUp = async (task: string) => (await store.since({ taskId: task, version: 1, names: [listenName], limit: 10 })).map((s) => s.signal_id);
    expect(await caughtUp(listeners.a)).toEqual([`kb-sig-a-${sfx}`, `kb-sig-all-${sfx}`]);
    expect(await caughtUp(listeners.b)).toEqual([`kb-sig-all-${sfx}`]);
    // The same signal id from another sender's bounds is another signal.
    const reused = await as('multi').raw('POST', '/v1/signals', { body: { name: listenName, signal_id: `kb-sig-a-${sfx}` } });
    expect(reused.status).toBe(409);
  });
});

test("a follow-up task belongs to its parent's agent, whatever the answer asks", async () => {
  const c = sys.config;
  const creator = followUpCreator(
    new TaskClient({ client: sys.client, pool: sys.pool, taskQueue: c.taskQueue, runQueues: taskRunQueues(c) }),
    new TaskStore(sys.pool),
    { outboundAllowHosts: c.outboundAllowHosts, agentSecrets: c.agentSecrets },
    taskSecretsOf(c),
  );
  const task = { name: 'kb follow-up', agent: { type: 'digest', task_ids: [listeners.a] }, agent_id: 'agent-b' };
  const made = await creator.create({ parentRunId: own.a.run, parentTaskId: own.a.task, finishedMs: Date.now(), action: { type: 'follow_up', task } });
  if (!made.ok) throw new Error(made.reason);
  expect((await as('a').raw('GET', `/v1/tasks/${made.taskId}`)).status).toBe(200);
  expect((await sys.pool.query("SELECT definition->>'agent_id' AS o FROM task_history WHERE task_id = $1", [made.taskId])).rows.map((r) => r.o)).toEqual(['agent-a']);
  await as('admin').raw('DELETE', `/v1/tasks/${made.taskId}`);
});

describe('the key store reads agents', () => {
  test('inline: key:scopes@agent|prefix*; file: "agents"; principal.agentId only for one exact id', () => {
    const store = loadKeyStore('one-key-12345:agent@agent-7,two-key-12345:gateway|agent@a-1|team-*,free-key-1234:admin');
    expect(store.authorise('Bearer one-key-12345', Operation.Read)).toMatchObject({ bounds: { exact: ['agent-7'], prefixes: [] }, agentId: 'agent-7' });
    const two = store.authorise('Bearer two-key-12345', Operation.Append);
    expect(two.bounds).toEqual({ exact: ['a-1'], prefixes: ['team-'] });
    expect(two.agentId).toBeUndefined();
    expect(store.authorise('Bearer free-key-1234', Operation.Verify).bounds).toBeUndefined();

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-kb-'));
    try {
      const file = path.join(dir, 'keys.json');
      fs.writeFileSync(file, JSON.stringify({ keys: [{ key: 'file-key-12345', scopes: ['gateway'], agents: ['gw-agent-*'] }] }));
      expect(loadKeyStore(undefined, file).authorise('Bearer file-key-12345', Operation.CreateSession).bounds).toEqual({ exact: [], prefixes: ['gw-agent-'] });
      for (const agents of [[], ['*'], ['a*b'], ['a b'], [7], 'agent-a']) {
        fs.writeFileSync(file, JSON.stringify({ keys: [{ key: 'file-key-12345', scopes: ['gateway'], agents }] }));
        expect(() => loadKeyStore(undefined, file)).toThrow(/agents/);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    expect(() => loadKeyStore('bad-key-123456:agent@')).toThrow(/agents/);
  });
});
