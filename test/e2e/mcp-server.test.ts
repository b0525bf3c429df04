/**
 * The MCP server as an agent runtime sees it: `bin/mcp.ts` spawned as a child process,
 * spoken to over stdio by the SDK's own Client, against a real Timekeeper (API, worker,
 * Temporal, PostgreSQL). Every tool is called, and its effect is checked through the API.
 * The task tools run under agent bounds (AGENT_TASK_*), and a local webhook agent answers
 * the runs they start.
 */
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { TimekeeperApiError, type TimekeeperClient } from '../../sdk/client';
import { timekeeperTools } from '../../sdk/tools';
import { fakeServers, protocolAnswer, type FakeServer } from '../support/fake-services';
import { eventually, startTestSystem, TestSystem, uniqueSessionId } from '../support';

const ROOT = path.resolve(__dirname, '../..');
const AGENT = 'mcp-agent-key-0123456789';
const ADMIN = 'mcp-admin-key-0123456789';

const AGENT_ID = `agent-${process.pid}-${Date.now().toString(36)}`;

let sys: TestSystem;
let admin: TimekeeperClient;
let agentServer: FakeServer;
const servers = fakeServers();
const clients: Client[] = [];

/** Spawns `bin/mcp.ts` with this Timekeeper's URL and the given key (and agent id), and connects the SDK client to it. */
async function connect(apiKey: string, agentId?: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', path.join(ROOT, 'bin/mcp.ts')],
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TIMEKEEPER_URL: sys.baseUrl, TIMEKEEPER_API_KEY: apiKey, ...(agentId ? { TIMEKEEPER_AGENT_ID: agentId } : {}) },
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

/** The operator's bounds for agents' tasks in this system. */
const BOUNDS = { minIntervalS: 300, maxTasksPerAgent: 3, agentTypes: ['webhook'], deliveryTypes: ['table', 'session'], hosts: ['127.0.0.1'] };

beforeAll(async () => {
  // A webhook agent on 127.0.0.1 answering the run protocol for whichever task asks.
  // A prompt "follow up every N s" makes it answer with a next_action follow-up task of that interval.
  agentServer = await servers.start((r) => {
    const { task_id: id, prompt } = JSON.parse(r.body) as { task_id: string; prompt: string };
    const every = /^follow up every (\d+) s$/.exec(prompt)?.[1];
    const task = { task_id: `${id}-next`, trigger: { type: 'interval', every_s: Number(every) }, agent: { type: 'webhook', url: `${agentServer.url}/agent`, prompt_template: 'x' }, enabled: false };
    return { body: protocolAnswer(id, every ? { next_action: { type: 'follow_up', task } } : {}) };
  });
  sys = await startTestSystem({ apiKeys: `${AGENT}:agent,${ADMIN}:admin`, config: { outboundAllowHosts: ['127.0.0.1'], agentTaskBounds: BOUNDS } });
  admin = sys.tk.with({ apiKey: ADMIN });
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await sys?.stop();
  await servers.closeAll();
});

const domain = `mcp${process.pid}${Date.now().toString(36)}`;

test('lists the four OML intent tools, the two session tools and the ten task tools, with the schemas of api/*/tools.ts', async () => {
  const client = await connect(AGENT);
  expect(client.getServerVersion()?.name).toBe('timekeeper');
  const { tools } = await client.listTools();
  const expected = timekeeperTools();
  expect(tools.map((t) => t.name)).toEqual([
    'log_event_requested', 'log_event_done', 'log_event_blocked', 'pending_intents', 'session_context', 'session_append',
    'schedule_task', 'list_tasks', 'get_task', 'pause_task', 'resume_task', 'cancel_task', 'run_task_now', 'preview_schedule', 'send_signal', 'time_now',
  ]);
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

const webhookAgent = () => ({ type: 'webhook', url: `${agentServer.url}/agent`, prompt_template: 'check the quarterly report' });
const taskPrefix = `mcp-${process.pid}-${Date.now().toString(36)}`;
/** What the API stores for a task, asked with the admin key; undefined when there is none. */
const stored = (id: string) => admin.tasks.get(id).catch((e: unknown) => (e instanceof TimekeeperApiError && e.status === 404 ? undefined : Promise.reject(e)));

test('time_now and preview_schedule: the time context a run gets, and a cron expression checked before it is saved', async () => {
  const client = await connect(AGENT, AGENT_ID);
  const before = Date.now();
  const now = await call(client, 'time_now', { timezone: 'Asia/Shanghai', calendar: 'cn-workdays' });
  expect(now.isError).toBe(false);
  expect(Date.parse(now.body.instant)).toBeGreaterThanOrEqual(before - 1000);
  expect(now.body).toMatchObject({ timezone: 'Asia/Shanghai', calendar: 'cn-workdays', working_day: expect.any(Boolean) });
  expect(now.body.local_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+08:00$/);
  expect(now.body.local_time.slice(0, 10)).toBe(now.body.date);
  // The same two lines a run's time context has (lib/domain/tasks/index.ts nowLine, todayLine).
  expect(now.body.text.startsWith(`Current time: ${now.body.local_time} (Asia/Shanghai), ${now.body.instant} (UTC).\nToday (${now.body.date}, ${now.body.weekday}) is `)).toBe(true);
  expect(now.body.text.endsWith(' in the cn-workdays calendar.')).toBe(true);
  const badZone = await call(client, 'time_now', { timezone: 'Mars/Olympus' });
  expect(badZone.isError).toBe(true);
  expect(badZone.body.status).toBe(400);
  expect(JSON.stringify(badZone.body.errors)).toContain('timezone');

  const preview = await call(client, 'preview_schedule', { cron: '0 9 * * 1-5', timezone: 'Asia/Shanghai', count: 3 });
  expect(preview.isError).toBe(false);
  expect(preview.body.fire_times).toHaveLength(3);
  for (const t of preview.body.fire_times) expect(t).toMatch(/T01:00:00\.000Z$/);
  expect(preview.body.description).toContain('at 09:00 on Monday to Friday');
});

test('schedule_task, list_tasks, get_task, pause/resume, run_task_now, send_signal and cancel_task, as the agent the server is configured for', async () => {
  const client = await connect(AGENT, AGENT_ID);
  const daily = `${taskPrefix}-daily`;
  const scheduled = await call(client, 'schedule_task', {
    task_id: daily,
    name: 'quarterly report check',
    trigger: { type: 'cron', expression: '0 9 * * *', timezone: 'Asia/Shanghai' },
    agent: webhookAgent(),
    delivery: [{ type: 'table' }],
  });
  expect(scheduled.isError).toBe(false);
  // What the model checks itself against: the trigger in words and the next fire times.
  expect(scheduled.body).toMatchObject({ task_id: daily, trigger_text: expect.stringContaining('at 09:00 every day'), enabled: true, created_by: AGENT_ID });
  expect(scheduled.body.next_fire_times.length).toBeGreaterThan(1);
  for (const t of scheduled.body.next_fire_times) expect(t).toMatch(/T01:00:00\.000Z$/);
  expect(await stored(daily)).toMatchObject({ created_by: AGENT_ID, definition: { trigger: { type: 'cron', expression: '0 9 * * *' } } });

  // "remind me in 10 minutes": in_s is an `at` trigger that far from now.
  const t0 = Date.now();
  const reminder = await call(client, 'schedule_task', { task_id: `${taskPrefix}-in10m`, in_s: 600, agent: webhookAgent() });
  expect(reminder.isError).toBe(false);
  const at = Date.parse(reminder.body.next_fire_times[0]);
  expect(at).toBeGreaterThanOrEqual(t0 + 600_000 - 1000);
  expect(at).toBeLessThanOrEqual(Date.now() + 600_000 + 1000);
  expect(reminder.body.trigger_text).toMatch(/^once, at /);

  const listed = await call(client, 'list_tasks', { created_by: AGENT_ID });
  expect(listed.isError).toBe(false);
  // Newest first, the list's default order.
  expect(listed.body.tasks.map((t: { task_id: string }) => t.task_id)).toEqual([`${taskPrefix}-in10m`, daily]);
  expect(listed.body.tasks[1]).toMatchObject({ trigger_text: expect.stringContaining('09:00'), created_by: AGENT_ID });

  expect((await call(client, 'pause_task', { task_id: daily })).body).toMatchObject({ enabled: false });
  expect((await stored(daily))?.enabled).toBe(false);
  const resumed = await call(client, 'resume_task', { task_id: daily });
  expect(resumed.body).toMatchObject({ enabled: true });
  expect(resumed.body.next_fire_times.length).toBeGreaterThan(0);

  const ran = await call(client, 'run_task_now', { task_id: daily });
  expect(ran.isError).toBe(false);
  const run = await eventually(async () => {
    const r = await admin.runs.get(ran.body.run_id);
    return r.status === 'success' ? r : undefined;
  }, 30_000);
  // The run log names who created the run's task.
  expect(run.created_by).toBe(AGENT_ID);
  expect((await admin.tasks.runs(daily)).runs[0]).toMatchObject({ run_id: ran.body.run_id, created_by: AGENT_ID });
  const got = await call(client, 'get_task', { task_id: daily, runs: 5 });
  expect(got.isError).toBe(false);
  expect(got.body.runs).toEqual([expect.objectContaining({ run_id: ran.body.run_id, status: 'success', summary: 'all good' })]);
  expect(got.body.definition.agent).toMatchObject({ type: 'webhook', url: `${agentServer.url}/agent` });

  // A delay trigger waits for a signal; send_signal starts its run.
  const event = `${taskPrefix}-report-ready`;
  const onSignal = `${taskPrefix}-on-signal`;
  expect((await call(client, 'schedule_task', { task_id: onSignal, trigger: { type: 'delay', event, seconds: 0 }, agent: webhookAgent() })).isError).toBe(false);
  const sent = await call(client, 'send_signal', { name: event, value: 1 });
  expect(sent.isError).toBe(false);
  expect(sent.body.delivered_to).toEqual([onSignal]);
  await eventually(async () => (await admin.tasks.runs(onSignal)).runs.find((r) => r.status === 'success'), 30_000);

  // Three tasks is this agent's bound: a fourth is refused, naming AGENT_TASKS_MAX, until one is cancelled.
  const fourth = await call(client, 'schedule_task', { task_id: `${taskPrefix}-fourth`, in_s: 60, agent: webhookAgent() });
  expect(fourth.isError).toBe(true);
  expect(fourth.body).toMatchObject({ status: 400, errors: [{ field: 'created_by', reason: expect.stringContaining('AGENT_TASKS_MAX allows 3') }] });
  expect(await stored(`${taskPrefix}-fourth`)).toBeUndefined();
  const cancelled = await call(client, 'cancel_task', { task_id: `${taskPrefix}-in10m` });
  expect(cancelled.body).toMatchObject({ deleted: true });
  expect((await call(client, 'schedule_task', { task_id: `${taskPrefix}-fourth`, in_s: 60, agent: webhookAgent() })).isError).toBe(false);
});

test('agent bounds: refused with 400 naming the bound, through the tools and through REST alike, and nothing is stored', async () => {
  const client = await connect(AGENT, `${AGENT_ID}-b`);
  const tooOften = await call(client, 'schedule_task', { task_id: `${taskPrefix}-often`, trigger: { type: 'interval', every_s: 60 }, agent: webhookAgent() });
  expect(tooOften.isError).toBe(true);
  expect(tooOften.body).toMatchObject({ status: 400, errors: [{ field: 'trigger.every_s', reason: expect.stringContaining('AGENT_TASK_MIN_INTERVAL_S') }] });
  const cronTooOften = await call(client, 'schedule_task', { task_id: `${taskPrefix}-often`, trigger: { type: 'cron', expression: '*/1 * * * *' }, agent: webhookAgent() });
  expect(cronTooOften.body.errors).toEqual([expect.objectContaining({ field: 'trigger.expression', reason: expect.stringContaining('every 60 s at the shortest') })]);
  const wrongAgent = await call(client, 'schedule_task', {
    task_id: `${taskPrefix}-often`,
    in_s: 600,
    agent: { type: 'openai', base_url: 'http://127.0.0.1:9/v1', model: 'm', prompt_template: 'x' },
    delivery: [{ type: 'webhook', url: 'https://hooks.example/x' }],
  });
  expect(wrongAgent.body.status).toBe(400);
  expect(wrongAgent.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['agent.type', 'delivery.0.type', 'delivery.0.url']);
  expect(JSON.stringify(wrongAgent.body.errors)).toContain('AGENT_TASK_AGENT_TYPES allows webhook');
  expect(JSON.stringify(wrongAgent.body.errors)).toContain('AGENT_TASK_HOSTS allows 127.0.0.1');
  expect(await stored(`${taskPrefix}-often`)).toBeUndefined();

  // The same bounds hold for a REST create that says it is from an agent, whichever key sends it...
  const rest = await admin.raw('POST', '/v1/tasks', { body: { task_id: `${taskPrefix}-rest`, trigger: { type: 'interval', every_s: 60 }, agent: webhookAgent(), created_by: `${AGENT_ID}-b` } });
  expect(rest.status).toBe(400);
  expect(JSON.stringify(rest.body)).toContain('AGENT_TASK_MIN_INTERVAL_S');
  // ...and for a PATCH of an agent's task, by anyone: it stays an agent's task.
  const ok = await call(client, 'schedule_task', { task_id: `${taskPrefix}-slow`, trigger: { type: 'interval', every_s: 600 }, agent: webhookAgent() });
  expect(ok.body.created_by).toBe(`${AGENT_ID}-b`);
  const patch = await admin.raw('PATCH', `/v1/tasks/${taskPrefix}-slow`, { body: { trigger: { type: 'interval', every_s: 30 } } });
  expect(patch.status).toBe(400);
  expect(JSON.stringify(patch.body)).toContain('AGENT_TASK_MIN_INTERVAL_S');
  expect((await stored(`${taskPrefix}-slow`))?.definition.trigger).toMatchObject({ every_s: 600 });
  // An operator's own task (no created_by) is not bounded.
  const operator = await admin.tasks.create({ task_id: `${taskPrefix}-operator`, enabled: false, trigger: { type: 'interval', every_s: 60 }, agent: { type: 'openai', base_url: 'http://127.0.0.1:9/v1', model: 'm', prompt_template: 'x' } });
  expect(operator.created_by).toBeNull();
});

test("a follow-up an agent's run asks for (next_action) is that agent's task: it carries created_by and keeps the bounds", async () => {
  const agentId = `${AGENT_ID}-c`;
  const client = await connect(AGENT, agentId);
  const parentRun = async (id: string, prompt: string) => {
    expect((await call(client, 'schedule_task', { task_id: id, in_s: 3600, agent: { ...webhookAgent(), prompt_template: prompt } })).isError).toBe(false);
    const { body } = await call(client, 'run_task_now', { task_id: id });
    return eventually(async () => {
      const r = await admin.runs.get(body.run_id);
      return r.status === 'success' && r.deliveries.some((d) => d.type === 'follow_up') ? r : undefined;
    }, 30_000);
  };
  const ok = await parentRun(`${taskPrefix}-fu-ok`, 'follow up every 600 s');
  expect(ok.deliveries.find((d) => d.type === 'follow_up')).toMatchObject({ ok: true, detail: `created task ${taskPrefix}-fu-ok-next` });
  expect(await stored(`${taskPrefix}-fu-ok-next`)).toMatchObject({ created_by: agentId, parent_run_id: ok.run_id });

  const bad = await parentRun(`${taskPrefix}-fu-bad`, 'follow up every 10 s');
  expect(bad.deliveries.find((d) => d.type === 'follow_up')).toMatchObject({ ok: false, detail: expect.stringContaining('AGENT_TASK_MIN_INTERVAL_S') });
  expect(await stored(`${taskPrefix}-fu-bad-next`)).toBeUndefined();
});
