/**
 * Lists newest first, with a cursor to page on (issue 20): GET /v1/sessions, /v1/tasks,
 * /v1/runs, /v1/tasks/:id/runs and /api/events, against the real system. Every page of
 * every order is walked and must give each row exactly once, in the order the rows were
 * made; cursors from before lists took an order still continue the order they came from.
 */
import type { TimekeeperClient } from '../../sdk/client';
import { startTestSystem, TestSystem, eventually } from '../support';
import { chatAnswer, fakeServer, FakeServer, protocolAnswer } from '../support/fake-services';

let sys: TestSystem;
let tk: TimekeeperClient;
let llm: FakeServer;
const stamp = `${process.pid}-${Date.now().toString(36)}`;
const b64 = (s: string) => Buffer.from(s).toString('base64url');

beforeAll(async () => {
  sys = await startTestSystem({ config: { outboundAllowHosts: ['127.0.0.1'] }, secrets: { LLM_API_KEY: 'sk-test-123' } });
  tk = sys.tk;
  llm = await fakeServer((r) => {
    const system: string = JSON.parse(r.body).messages[0].content;
    return { body: chatAnswer(protocolAnswer(/task_id is "([^"]+)"/.exec(system)?.[1] ?? '?')) };
  });
});
afterAll(async () => {
  await llm?.close();
  await sys?.stop();
});

/** Walks every page: `fetch(cursor)` answers one page and its next_cursor. */
async function walk<T>(fetch: (cursor: string | undefined) => Promise<{ items: T[]; next: string | null }>, limit: number): Promise<T[]> {
  const seen: T[] = [];
  let cursor: string | undefined;
  for (let pages = 0; ; pages++) {
    if (pages > 20) throw new Error('paging does not terminate');
    const { items, next } = await fetch(cursor);
    expect(items.length).toBeLessThanOrEqual(limit);
    seen.push(...items);
    if (!next) return seen;
    expect(items.length).toBe(limit);
    cursor = next;
  }
}

describe('GET /v1/sessions', () => {
  const agent = `order-agent-${stamp}`;
  const made: string[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 5; i++) {
      const id = `order-${stamp}-${i}`;
      await tk.createSession({ session_id: id, agent_id: agent });
      made.push(id);
    }
  });

  test('newest first by default, order=oldest the other way, each order paged by its cursor', async () => {
    const first = await tk.listSessions({ agent_id: agent });
    expect(first.sessions.map((s) => s.session_id)).toEqual([...made].reverse());
    expect((await tk.listSessions({ agent_id: agent, order: 'oldest' })).sessions.map((s) => s.session_id)).toEqual(made);
    for (const order of ['newest', 'oldest'] as const) {
      for (const limit of [1, 2, 3]) {
        const ids = await walk(async (cursor) => {
          const r = await tk.listSessions({ agent_id: agent, limit, ...(cursor ? { cursor } : { order }) });
          return { items: r.sessions.map((s) => s.session_id), next: r.next_cursor };
        }, limit);
        expect(ids).toEqual(order === 'newest' ? [...made].reverse() : made);
      }
    }
  });

  test('a session created meanwhile does not shift the pages of a newest-first walk', async () => {
    const p1 = await tk.listSessions({ agent_id: agent, limit: 2 });
    await tk.createSession({ session_id: `order-${stamp}-late`, agent_id: agent });
    const p2 = await tk.listSessions({ agent_id: agent, limit: 2, cursor: p1.next_cursor! });
    expect([...p1.sessions, ...p2.sessions].map((s) => s.session_id)).toEqual([...made].reverse().slice(0, 4));
    expect((await tk.listSessions({ agent_id: agent, limit: 1 })).sessions[0].session_id).toBe(`order-${stamp}-late`);
  });

  test('a cursor of the old form ([created_ts, session_id]) continues oldest first, as it was issued', async () => {
    const all = (await tk.listSessions({ agent_id: agent, order: 'oldest' })).sessions;
    const legacy = b64(JSON.stringify([all[1].created_ts, all[1].session_id]));
    const r = await tk.listSessions({ agent_id: agent, cursor: legacy });
    expect(r.sessions.map((s) => s.session_id)).toEqual(all.slice(2).map((s) => s.session_id));
  });

  test('a cursor with another order, or an unknown order, is a 400 naming the field', async () => {
    const newest = (await tk.listSessions({ agent_id: agent, limit: 1 })).next_cursor!;
    const mixed = await tk.raw('GET', `/v1/sessions?agent_id=${agent}&order=oldest&cursor=${newest}`);
    expect(mixed.status).toBe(400);
    expect(mixed.body.errors).toEqual([expect.objectContaining({ field: 'cursor' })]);
    const bad = await tk.raw('GET', '/v1/sessions?order=sideways');
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('order');
    const foreign = await tk.raw('GET', `/v1/sessions?cursor=${b64(JSON.stringify([1, 'x', 'sideways']))}`);
    expect(foreign.status).toBe(400);
    expect(foreign.body.errors[0].field).toBe('cursor');
  });
});

describe('GET /v1/tasks, /v1/runs and /v1/tasks/:id/runs', () => {
  const tag = `order-${stamp}`;
  const tasks: string[] = [];
  beforeAll(async () => {
    // Names that sort against creation order, so the id order and the time order differ.
    for (const n of ['c', 'a', 'd', 'b']) {
      const id = `${n}-order-${stamp}`;
      await tk.tasks.create({
        task_id: id,
        tags: [tag],
        trigger: { type: 'cron', expression: '0 17 * * 1-5', timezone: 'UTC' },
        agent: { type: 'openai', base_url: `${llm.url}/v1`, model: 'qwen2.5', api_key_env: 'LLM_API_KEY', prompt_template: 'Summarise {{date}}' },
      });
      tasks.push(id);
    }
  });

  test('tasks: newest first by default, oldest, and by id; each order paged by its cursor', async () => {
    const ids = async (order: 'newest' | 'oldest' | 'id' | undefined, limit: number) =>
      walk(async (cursor) => {
        const r = await tk.tasks.list({ tag, limit, ...(cursor ? { cursor } : order ? { order } : {}) });
        return { items: r.tasks.map((t) => t.task_id), next: r.next_cursor };
      }, limit);
    for (const limit of [1, 3, 10]) {
      expect(await ids(undefined, limit)).toEqual([...tasks].reverse());
      expect(await ids('oldest', limit)).toEqual(tasks);
      expect(await ids('id', limit)).toEqual([...tasks].sort());
    }
  });

  test('tasks: a bare task id as cursor (the form before orders) pages by id after it, and the id order answers bare ids', async () => {
    const sorted = [...tasks].sort();
    const r = await tk.tasks.list({ tag, cursor: sorted[0], limit: 2 });
    expect(r.tasks.map((t) => t.task_id)).toEqual(sorted.slice(1, 3));
    expect(r.next_cursor).toBe(sorted[2]);
    const mixed = await tk.raw('GET', `/v1/tasks?tag=${tag}&order=newest&cursor=${sorted[0]}`);
    expect(mixed.status).toBe(400);
    expect(mixed.body.errors[0].field).toBe('cursor');
  });

  test("runs: a task's runs and the runs list, newest first, paged by cursor", async () => {
    const id = tasks[0];
    const started: string[] = [];
    for (let i = 0; i < 3; i++) {
      started.push((await tk.tasks.trigger(id)).run_id);
      // One at a time (the task's overlap policy skips a run while one is in progress).
      await eventually(async () => (await tk.runs.get(started[i])).status === 'success', 30_000);
    }
    const newestFirst = [...started].reverse();
    for (const limit of [1, 2, 5]) {
      const ofTask = await walk(async (cursor) => {
        const r = await tk.tasks.runs(id, { limit, cursor });
        return { items: r.runs.map((x) => x.run_id), next: r.next_cursor };
      }, limit);
      expect(ofTask).toEqual(newestFirst);
      const listed = await walk(async (cursor) => {
        const r = await tk.runs.list({ task_id: id, limit, cursor });
        return { items: r.runs.map((x) => x.run_id), next: r.next_cursor };
      }, limit);
      expect(listed).toEqual(newestFirst);
    }
    const bad = await tk.raw('GET', `/v1/runs?cursor=${b64(JSON.stringify([1, 'x', 'newest']))}`);
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('cursor');
  });
});

describe('GET /api/events', () => {
  const domain = `order-${stamp}`;
  const made: string[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 4; i++) {
      const id = `ORDER-${stamp}-${i}`;
      await tk.intents.create({ event_id: id, domain, action: 'send' });
      made.push(id);
    }
  });

  test('newest first, paged by next_cursor as well as by offset; a cursor with an offset is a 400', async () => {
    const whole = await tk.intents.list({ domain });
    expect(whole.events.map((e) => e.event_id)).toEqual([...made].reverse());
    expect(whole.next_cursor).toBeNull();
    const ids = await walk(async (cursor) => {
      const r = await tk.intents.list({ domain, limit: 3, cursor });
      expect(r.total).toBe(4);
      return { items: r.events.map((e) => e.event_id), next: r.next_cursor };
    }, 3);
    expect(ids).toEqual([...made].reverse());
    const both = await tk.raw('GET', `/api/events?domain=${domain}&offset=1&cursor=${(await tk.intents.list({ domain, limit: 1 })).next_cursor}`);
    expect(both.status).toBe(400);
  });
});
