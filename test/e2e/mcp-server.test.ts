/**
 * The MCP server as an agent runtime sees it: `bin/mcp.ts` spawned as a child process,
 * spoken to over stdio by the SDK's own Client, against a real Timekeeper (API, worker,
 * Temporal, PostgreSQL). Every tool is called, and its effect is checked through the API.
 */
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { intentTools } from '../../api/intents/tools';
import { sessionTools } from '../../api/sessions/tools';
import type { TimekeeperClient } from '../../api/client';
import { startTestSystem, TestSystem, uniqueSessionId } from '../support/system';

const ROOT = path.resolve(__dirname, '../..');
const AGENT = 'mcp-agent-key-0123456789';
const ADMIN = 'mcp-admin-key-0123456789';

let sys: TestSystem;
let admin: TimekeeperClient;
const clients: Client[] = [];

/** Spawns `bin/mcp.ts` with this Timekeeper's URL and the given key, and connects the SDK client to it. */
async function connect(apiKey: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', path.join(ROOT, 'bin/mcp.ts')],
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TIMEKEEPER_URL: sys.baseUrl, TIMEKEEPER_API_KEY: apiKey },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'timekeeper-e2e', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

type ToolResult = { isError?: boolean; content: { type: string; text?: string }[] };
/** Calls a tool and parses its one text part as JSON. */
async function call(client: Client, name: string, args: Record<string, unknown>): Promise<{ isError: boolean; body: any }> {
  const r = (await client.callTool({ name, arguments: args })) as ToolResult;
  expect(r.content).toHaveLength(1);
  expect(r.content[0].type).toBe('text');
  return { isError: r.isError === true, body: JSON.parse(r.content[0].text ?? '') };
}

beforeAll(async () => {
  sys = await startTestSystem({ apiKeys: `${AGENT}:agent,${ADMIN}:admin` });
  admin = sys.tk.with({ apiKey: ADMIN });
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await sys?.stop();
});

const domain = `mcp${process.pid}${Date.now().toString(36)}`;

test('lists the four OML intent tools and the two session tools, with the schemas of api/*/tools.ts', async () => {
  const client = await connect(AGENT);
  expect(client.getServerVersion()?.name).toBe('timekeeper');
  const { tools } = await client.listTools();
  const expected = [...intentTools(), ...sessionTools()];
  expect(tools.map((t) => t.name)).toEqual(['log_event_requested', 'log_event_done', 'log_event_blocked', 'pending_intents', 'session_context', 'session_append']);
  for (const t of tools) {
    const def = expected.find((d) => d.name === t.name)!;
    expect(t.inputSchema).toEqual(def.parameters);
    expect(t.description).toBe(def.description);
  }
});

test('log_event_requested → pending_intents → log_event_done; log_event_blocked; an illegal move is a tool error naming the state', async () => {
  const client = await connect(AGENT);
  const id = `MCP-${process.pid}-${Date.now()}-1`;
  const created = await call(client, 'log_event_requested', { event_id: id, domain, action: 'send-daily-summary', data: { to: 'team@example.com' }, tags: ['mcp'] });
  expect(created.isError).toBe(false);
  expect(created.body).toMatchObject({ event_id: id, status: 'requested' });
  expect(await admin.intents.get(id)).toMatchObject({ status: 'requested', domain, action: 'send-daily-summary', data: { to: 'team@example.com' }, tags: ['mcp'] });

  const pending = await call(client, 'pending_intents', { domain });
  expect(pending.isError).toBe(false);
  expect(pending.body.intents.map((i: { event_id: string }) => i.event_id)).toEqual([id]);

  const done = await call(client, 'log_event_done', { event_id: id, note: 'sent', result_data: { message_id: 'm-42' } });
  expect(done.isError).toBe(false);
  const stored = await admin.intents.get(id);
  expect(stored).toMatchObject({ status: 'done', note: 'sent', last_data: { message_id: 'm-42' }, lifecycle: ['requested', 'done'] });
  expect((await call(client, 'pending_intents', { domain })).body.intents).toEqual([]);

  // done is final: the API's 409 comes back as a tool error an LLM can read.
  const again = await call(client, 'log_event_done', { event_id: id, result_data: {} });
  expect(again.isError).toBe(true);
  expect(again.body).toMatchObject({ error_code: 'invalid_transition', status: 409, current_status: 'done', error: expect.stringContaining('final') });
  expect((await admin.intents.get(id)).seq).toBe(2);

  const id2 = `MCP-${process.pid}-${Date.now()}-2`;
  expect((await call(client, 'log_event_requested', { event_id: id2, domain, action: 'deploy' })).isError).toBe(false);
  const blocked = await call(client, 'log_event_blocked', { event_id: id2, note: 'smtp down', error_data: { error: 'ECONNREFUSED', next_step: 'check the SMTP relay' } });
  expect(blocked.isError).toBe(false);
  expect(await admin.intents.get(id2)).toMatchObject({ status: 'blocked', note: 'smtp down', last_data: { error: 'ECONNREFUSED', next_step: 'check the SMTP relay' } });

  // Bad arguments are refused by the API, naming the field; nothing is written.
  const bad = await call(client, 'log_event_blocked', { event_id: id2, error_data: { error: 'x' } });
  expect(bad.isError).toBe(true);
  expect(bad.body.status).toBe(400);
  expect(JSON.stringify(bad.body.errors)).toContain('next_step');
  const missing = await call(client, 'log_event_done', { result_data: {} });
  expect(missing).toEqual({ isError: true, body: { error: 'invalid_arguments', detail: expect.stringContaining('event_id') } });
});

test('session_append writes to the session chain and session_context reads it back as LLM context', async () => {
  const client = await connect(AGENT);
  const sid = uniqueSessionId('mcp');
  await admin.createSession({ session_id: sid });
  const appended = await call(client, 'session_append', { session_id: sid, type: 'USER_INPUT', content: { input: 'remind me about the quarterly report' }, idempotency_key: 'mcp-1' });
  expect(appended.isError).toBe(false);
  expect(appended.body).toMatchObject({ type: 'USER_INPUT', deduplicated: false });
  const retried = await call(client, 'session_append', { session_id: sid, type: 'USER_INPUT', content: { input: 'remind me about the quarterly report' }, idempotency_key: 'mcp-1' });
  expect(retried.body).toMatchObject({ seq: appended.body.seq, deduplicated: true });
  const events = await admin.events(sid, { types: 'USER_INPUT' });
  expect(events.events.map((e) => e.content)).toEqual([{ input: 'remind me about the quarterly report' }]);
  expect((await admin.verify(sid)).ok).toBe(true);

  const ctx = await call(client, 'session_context', { session_id: sid, max_events: 10, timestamps: false });
  expect(ctx.isError).toBe(false);
  expect(ctx.body.session_id).toBe(sid);
  expect(ctx.body.text).toContain('remind me about the quarterly report');
  expect(ctx.body.messages).toEqual(expect.arrayContaining([expect.objectContaining({ role: 'user', seq: appended.body.seq })]));

  const unknown = await call(client, 'session_context', { session_id: uniqueSessionId('nope') });
  expect(unknown.isError).toBe(true);
  expect(unknown.body.status).toBe(404);
});

test('the API key from TIMEKEEPER_API_KEY is what authorises: a wrong key gets 401 as a tool error', async () => {
  const client = await connect('not-a-key-0123456789');
  const r = await call(client, 'pending_intents', {});
  expect(r.isError).toBe(true);
  expect(r.body.status).toBe(401);
  await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/unknown tool/);
});
