/**
 * Outgoing requests and secret names, end to end (lib/task-policy.ts, lib/platform/outbound.ts):
 * a task URL that is an IP literal in a refused range (any spelling) is refused at create
 * and PATCH with 400 naming the field, and nothing is stored; token_env / api_key_env may
 * name only AGENT_SECRETS, never the process's own variables (INTENT_WAKE_TOKEN,
 * DATABASE_URL). At run time the worker checks again: a name resolving to loopback, and a
 * definition that reached the store around the API, send nothing. A non-2xx answer's body
 * is not copied into the run's reason. Only 127.0.0.2 is allowed (OUTBOUND_ALLOW_HOSTS);
 * the "internal" servers on 127.0.0.1 must see no connection at all.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { TaskClient } from '../../clients/tasks';
import { taskRunQueues } from '../../lib/config';
import { TASK_DEFAULTS, type TaskDefinition } from '../../lib/domain/tasks';
import { eventually, refusal, startTestSystem, TestSystem, uid } from '../support';

interface Listener {
  url: string;
  connections: number;
  bodies: { path: string; headers: http.IncomingHttpHeaders; body: string }[];
  close(): Promise<void>;
}

async function listen(host: string, answer: (path: string) => { status: number; body: string }): Promise<Listener> {
  const l = { connections: 0, bodies: [] } as unknown as Listener;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      l.bodies.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const a = answer(req.url ?? '');
      res.writeHead(a.status, { 'content-type': 'text/plain' });
      res.end(a.body);
    });
  });
  server.on('connection', () => l.connections++);
  await new Promise<void>((ok) => server.listen(0, host, () => ok()));
  l.url = `http://${host}:${(server.address() as AddressInfo).port}`;
  l.close = () =>
    new Promise<void>((ok) => {
      server.close(() => ok());
      server.closeAllConnections();
    });
  return l;
}

const INTERNAL_ANSWER = 'internal-service-answer: db password hunter2';
let sys: TestSystem;
let internal: Listener; // 127.0.0.1: what an attacker wants to reach
let external: Listener; // 127.0.0.2: the one allowed host, standing in for a public service

beforeAll(async () => {
  internal = await listen('127.0.0.1', () => ({ status: 200, body: INTERNAL_ANSWER }));
  external = await listen('127.0.0.2', (p) => (p.startsWith('/fail') ? { status: 500, body: INTERNAL_ANSWER } : { status: 200, body: '{}' }));
  sys = await startTestSystem({
    config: { outboundAllowHosts: ['127.0.0.2'], agentSecrets: ['GATEWAY_TOKEN'] },
    // What the worker's environment holds: one registered secret, and the process's own variables.
    secrets: { GATEWAY_TOKEN: 'gw-token-registered', INTENT_WAKE_TOKEN: 'the-wake-token', DATABASE_URL: 'postgres://owner:pw@db/timekeeper' },
  });
});
afterAll(async () => {
  await sys?.stop();
  await internal?.close();
  await external?.close();
});

const port = () => new URL(internal.url).port;
const base = (id: string) => ({ task_id: id, trigger: { type: 'interval' as const, every_s: 3600 }, enabled: false, retry: { max_attempts: 1 } });
const webhookAgent = (url: string) => ({ type: 'webhook' as const, url, prompt_template: 'go' });
const storedRows = async (id: string) => (await sys.pool.query('SELECT count(*)::int AS n FROM task_history WHERE task_id = $1', [id])).rows[0].n as number;

const refusedAtCreate: [string, Record<string, unknown>, string, RegExp][] = [
  ['a mapped IPv6 literal agent URL', { agent: webhookAgent(`http://[::ffff:127.0.0.1]:${18901}/mapped`) }, 'agent.url', /::ffff:7f00:1 \(carrying 127\.0\.0\.1\) is a private or local address \(loopback\)/],
  ['a decimal openclaw URL', { agent: { type: 'openclaw', url: 'http://2130706433:18789', token_env: 'GATEWAY_TOKEN', prompt_template: 'x' } }, 'agent.url', /127\.0\.0\.1 is a private or local address/],
  ['an octal openai base_url', { agent: { type: 'openai', base_url: 'http://0177.0.0.1:11434/v1', model: 'm', prompt_template: 'x' } }, 'agent.base_url', /loopback/],
  ['a hex agent URL', { agent: webhookAgent('http://0x7f.1/') }, 'agent.url', /loopback/],
  ['a NAT64 delivery URL (the second target)', { agent: webhookAgent('https://agent.example/run'), delivery: [{ type: 'table' }, { type: 'webhook', url: 'http://[64:ff9b::7f00:1]/' }] }, 'delivery.1.url', /carrying 127\.0\.0\.1/],
  ['the metadata address as alert URL', { agent: webhookAgent('https://agent.example/run'), alert: { url: 'http://169.254.169.254/latest/meta-data/' } }, 'alert.url', /linkLocal/],
  ['the metadata address, mapped, as alert URL', { agent: webhookAgent('https://agent.example/run'), alert: { url: 'http://[::ffff:a9fe:a9fe]/' } }, 'alert.url', /carrying 169\.254\.169\.254/],
  ['a site-local agent URL', { agent: webhookAgent('http://[fec0::1]/') }, 'agent.url', /deprecatedSiteLocal/],
  ['token_env naming the wake token', { agent: { type: 'openclaw', url: 'https://gw.example', token_env: 'INTENT_WAKE_TOKEN', prompt_template: 'x' } }, 'agent.token_env', /AGENT_SECRETS.*INTENT_WAKE_TOKEN is not registered/],
  ['api_key_env naming DATABASE_URL', { agent: { type: 'openai', base_url: 'https://llm.example/v1', model: 'm', api_key_env: 'DATABASE_URL', prompt_template: 'x' } }, 'agent.api_key_env', /DATABASE_URL is not registered/],
  ['token_env naming an unregistered variable', { agent: { type: 'openclaw', url: 'https://gw.example', token_env: 'OTHER_TOKEN', prompt_template: 'x' } }, 'agent.token_env', /OTHER_TOKEN is not registered/],
];

test.each(refusedAtCreate)('create refuses %s: 400 naming the field, nothing stored', async (_what, fields, field, reason) => {
  const id = uid('refused');
  const r = await refusal(sys.tk.tasks.create({ ...base(id), ...fields } as never));
  expect(r.status).toBe(400);
  const named = (r.body.errors ?? []).find((e: { field: string }) => e.field === field);
  expect(named?.reason).toMatch(reason);
  expect(await storedRows(id)).toBe(0);
});

test('PATCH is held to the same rules; the task stays as it was', async () => {
  const id = uid('patch');
  const created = await sys.tk.tasks.create({ ...base(id), agent: webhookAgent('https://agent.example/run') });
  for (const [patch, field] of [
    [{ agent: { type: 'openclaw', url: 'https://gw.example', token_env: 'INTENT_WAKE_TOKEN', prompt_template: 'x' } }, 'agent.token_env'],
    [{ agent: webhookAgent('http://[::ffff:7f00:1]/') }, 'agent.url'],
    [{ alert: { url: 'http://[::1]/' } }, 'alert.url'],
    [{ delivery: { type: 'webhook', url: 'http://10.0.0.1/' } }, 'delivery.0.url'],
  ] as const) {
    const r = await refusal(sys.tk.tasks.update(id, patch as never));
    expect({ status: r.status, fields: (r.body.errors ?? []).map((e: { field: string }) => e.field) }).toEqual({ status: 400, fields: [field] });
  }
  expect((await sys.tk.tasks.get(id)).version).toBe(created.version);
  // The allowed host, by address, and a registered secret pass.
  const ok = await sys.tk.tasks.update(id, { agent: { type: 'openclaw', url: 'http://127.0.0.2:1', token_env: 'GATEWAY_TOKEN', prompt_template: 'x' } });
  expect(ok.version).toBe(created.version + 1);
});

async function failedReason(runId: string): Promise<string> {
  const run = await eventually(async () => {
    const r = await sys.tk.runs.get(runId);
    return r.status === 'failed' ? r : undefined;
  }, 30_000);
  return run.reason ?? '';
}

test('run time: a name resolving to loopback is refused on connect for agent, delivery and alert; the server sees no connection', async () => {
  const id = uid('dns');
  const local = `http://localhost:${port()}`;
  await sys.tk.tasks.create({ ...base(id), agent: webhookAgent(`${local}/agent`), alert: { url: `${local}/alert` } });
  const { run_id } = await sys.tk.tasks.trigger(id);
  expect(await failedReason(run_id)).toMatch(/outbound_refused: localhost resolves to (127\.0\.0\.1|::1), a private or local address \(loopback\)/);
  // The alert went (and was refused) after the run failed for good.
  await eventually(async () => (await sys.tk.runs.get(run_id)).deliveries.some((d) => d.type === 'alert') || undefined);
  expect({ connections: internal.connections, requests: internal.bodies.length }).toEqual({ connections: 0, requests: 0 });
});

test('run time: a definition stored around the API (an unregistered token_env, a mapped literal) sends nothing', async () => {
  const tasks = new TaskClient({ client: sys.client, pool: sys.pool, taskQueue: sys.config.taskQueue, runQueues: taskRunQueues(sys.config) });
  const def = (id: string, agent: TaskDefinition['agent']): TaskDefinition => ({ ...TASK_DEFAULTS, task_id: id, name: id, trigger: { type: 'interval', every_s: 3600, mode: 'from_last_start' }, agent, delivery: [], tags: [], retry: { max_attempts: 1, backoff_seconds: [] } });
  const wake = uid('wake');
  const mapped = uid('mapped');
  const rowWake = await tasks.create(def(wake, { type: 'openclaw', url: external.url, hooks_path: '/hooks', token_env: 'INTENT_WAKE_TOKEN', prompt_template: 'x', deliver: false }), false);
  const rowMapped = await tasks.create(def(mapped, { type: 'webhook', url: `http://[::ffff:127.0.0.1]:${port()}/mapped`, prompt_template: 'x' }), false);
  const before = external.bodies.length;
  const [a, b] = await Promise.all([tasks.trigger(rowWake), tasks.trigger(rowMapped)]);
  expect(await failedReason(a.runId)).toMatch(/agent_misconfigured: agent.token_env: the environment variable INTENT_WAKE_TOKEN is not set on the worker, or not registered in AGENT_SECRETS/);
  expect(await failedReason(b.runId)).toMatch(/outbound_refused: ::ffff:7f00:1 \(carrying 127\.0\.0\.1\)/);
  expect(external.bodies.length).toBe(before);
  expect(JSON.stringify(external.bodies)).not.toContain('the-wake-token');
  expect({ connections: internal.connections, requests: internal.bodies.length }).toEqual({ connections: 0, requests: 0 });
});

test("a non-2xx answer gives the run its status line only, not the answer's body", async () => {
  const id = uid('echo');
  await sys.tk.tasks.create({ ...base(id), agent: webhookAgent(`${external.url}/fail`) });
  const { run_id } = await sys.tk.tasks.trigger(id);
  const reason = await failedReason(run_id);
  expect(reason).toMatch(/agent_error: the webhook answered HTTP 500 Internal Server Error/);
  expect(reason).not.toContain('hunter2');
  expect(JSON.stringify(await sys.tk.runs.get(run_id))).not.toContain('hunter2');
});
