/**
 * HMAC secrets are write-only (lib/task-secrets.ts): a webhook agent's, a webhook delivery's
 * and the alert's `secret` are never returned (reads show `"secret_set": true`), are sealed in
 * the database and in every Temporal history that carries the definition (the scheduler's
 * and the runs'), and still sign what the receivers get; a PATCH that omits a secret keeps it,
 * one that gives a new secret replaces it. Local stand-ins receive the calls.
 */
import { createHmac } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { TaskClient } from '../../clients/tasks';
import { taskRunQueues } from '../../lib/config';
import { schedulerWorkflowId } from '../../lib/domain/tasks';
import { taskSecretsOf } from '../../lib/secrets-key';
import { fakeServers, protocolAnswer, type Received } from '../support/fake-services';
import { eventually, refusal, startTestSystem, TestSystem, uid } from '../support';

let sys: TestSystem;
const servers = fakeServers();

beforeAll(async () => {
  sys = await startTestSystem({ config: { outboundAllowHosts: ['127.0.0.1'] } });
});
afterAll(async () => {
  await servers.closeAll();
  await sys?.stop();
});

const AGENT_SECRET = 'agent-secret-9f3a51c07e';
const DELIVERY_SECRET = 'delivery-secret-4b7d20e18c';
const ALERT_SECRET = 'alert-secret-c2e8f6a93d';
const NEW_AGENT_SECRET = 'agent-secret-renewed-71d0';
const ALL = [AGENT_SECRET, DELIVERY_SECRET, ALERT_SECRET, NEW_AGENT_SECRET];

const signed = (secret: string, r: Received) => r.headers['x-timekeeper-signature'] === `sha256=${createHmac('sha256', secret).update(r.body).digest('hex')}`;

/** Every byte of a workflow's history (payloads are JSON inside the protobuf), as text to search. */
async function historyText(workflowId: string): Promise<string> {
  const h = await sys.client.workflow.getHandle(workflowId).fetchHistory();
  return Buffer.from(temporal.api.history.v1.History.encode(h).finish()).toString('latin1');
}

async function finishedRun(runId: string) {
  return eventually(async () => {
    const r = await sys.tk.runs.get(runId);
    return r.status === 'success' || r.status === 'failed' ? r : undefined;
  }, 30_000);
}

test('secrets are never shown, sealed in the database and the histories, and still sign; an omitted secret is kept, a new one replaces it', async () => {
  const agent = await servers.start((r) => ({ body: protocolAnswer(JSON.parse(r.body).task_id) }));
  const hook = await servers.start(() => ({ body: { ok: true } }));
  const id = uid('secrets');
  const created = await sys.tk.tasks.create({
    task_id: id,
    trigger: { type: 'interval', every_s: 3600 },
    enabled: false,
    agent: { type: 'webhook', url: agent.url, prompt_template: 'go', secret: AGENT_SECRET },
    delivery: [{ type: 'webhook', url: hook.url, secret: DELIVERY_SECRET }, { type: 'table' }],
    alert: { url: hook.url, secret: ALERT_SECRET },
  });
  // Not echoed by the create, the GET or the list: secret_set instead.
  const shown = [created, await sys.tk.tasks.get(id), (await sys.tk.tasks.list({ limit: 200 })).tasks.find((t) => t.task_id === id)];
  for (const t of shown) {
    expect(t!.definition).toMatchObject({ agent: { secret_set: true }, delivery: [{ secret_set: true }, { type: 'table' }], alert: { url: hook.url, secret_set: true } });
    const text = JSON.stringify(t);
    for (const s of ALL) expect(text).not.toContain(s);
    expect(text).not.toContain('"secret"');
  }

  // A run: the agent and the delivery get correct signatures.
  const first = await sys.tk.tasks.trigger(id);
  expect((await finishedRun(first.run_id)).status).toBe('success');
  await eventually(async () => hook.received.length >= 1 || undefined);
  expect(signed(AGENT_SECRET, agent.received[0])).toBe(true);
  expect(signed(DELIVERY_SECRET, hook.received[0])).toBe(true);

  // A PATCH that replaces the agent and the deliveries without their secrets keeps them.
  const patched = await sys.tk.tasks.update(id, { name: 'renamed', agent: { type: 'webhook', url: agent.url, prompt_template: 'go again' }, delivery: [{ type: 'webhook', url: hook.url }] });
  expect(patched.definition).toMatchObject({ agent: { prompt_template: 'go again', secret_set: true }, delivery: [{ secret_set: true }], alert: { secret_set: true } });
  const second = await sys.tk.tasks.trigger(id);
  expect((await finishedRun(second.run_id)).status).toBe('success');
  await eventually(async () => hook.received.length >= 2 || undefined);
  expect(signed(AGENT_SECRET, agent.received[1])).toBe(true);
  expect(signed(DELIVERY_SECRET, hook.received[1])).toBe(true);

  // A new secret replaces the old one.
  await sys.tk.tasks.update(id, { agent: { type: 'webhook', url: agent.url, prompt_template: 'go', secret: NEW_AGENT_SECRET } });
  const third = await sys.tk.tasks.trigger(id);
  expect((await finishedRun(third.run_id)).status).toBe('success');
  expect(signed(NEW_AGENT_SECRET, agent.received[2])).toBe(true);
  expect(signed(AGENT_SECRET, agent.received[2])).toBe(false);

  // Neither the database rows nor any history hold a secret in clear; they hold the sealed form.
  const rows = await sys.ownerPool.query(
    `SELECT string_agg(x, ' ') AS text FROM (
       SELECT h::text AS x FROM task_history h WHERE task_id = $1
       UNION ALL SELECT l::text FROM task_run_log l WHERE task_id = $1
       UNION ALL SELECT d::text FROM task_deliveries d WHERE task_id = $1) all_rows`,
    [id],
  );
  const db = rows.rows[0].text as string;
  expect(db).toContain('sealed:v1:');
  for (const s of ALL) expect(db).not.toContain(s);
  const histories = await Promise.all([schedulerWorkflowId(id), first.run_id, second.run_id, third.run_id].map(historyText));
  for (const h of histories) {
    expect(h).toContain(id); // the definition is in there, so the search could find a secret
    expect(h).toContain('sealed:v1:');
    for (const s of ALL) expect(h).not.toContain(s);
  }
});

test('the alert is signed with its sealed secret when a run fails for good', async () => {
  const agent = await servers.start(() => ({ status: 500, body: 'no' }));
  const alert = await servers.start(() => ({ body: { ok: true } }));
  const id = uid('alertsecret');
  await sys.tk.tasks.create({ task_id: id, trigger: { type: 'interval', every_s: 3600 }, enabled: false, retry: { max_attempts: 1 }, agent: { type: 'webhook', url: agent.url, prompt_template: 'go' }, alert: { url: alert.url, secret: ALERT_SECRET } });
  const run = await sys.tk.tasks.trigger(id);
  expect((await finishedRun(run.run_id)).status).toBe('failed');
  const got = await eventually(async () => alert.received[0]);
  expect(JSON.parse(got.body)).toMatchObject({ event: 'task_run_failed', task_id: id });
  expect(signed(ALERT_SECRET, got)).toBe(true);
  // A plain task created paused has no scheduler (nothing fires it); its run's history holds the definition.
  const runHistory = await historyText(run.run_id);
  expect(runHistory).toContain('sealed:v1:');
  expect(runHistory).not.toContain(ALERT_SECRET);
});

test('timekeeper seal-secrets: a secret stored in clear (before sealing existed) is sealed in a new version and still signs; a second pass changes nothing', async () => {
  const agent = await servers.start((r) => ({ body: protocolAnswer(JSON.parse(r.body).task_id) }));
  const id = uid('oldsecret');
  await sys.tk.tasks.create({ task_id: id, trigger: { type: 'interval', every_s: 3600 }, enabled: false, agent: { type: 'webhook', url: agent.url, prompt_template: 'go', secret: AGENT_SECRET } });
  // The row an older version stored: the same definition with the secret in clear (as the runtime role may insert it).
  const stored = (await sys.pool.query('SELECT definition FROM task_history WHERE task_id = $1 AND version = 1', [id])).rows[0].definition;
  const OLD = 'old-clear-secret-5e19b2';
  await sys.pool.query("INSERT INTO task_history (task_id, version, action, definition, enabled) VALUES ($1, 2, 'update', $2, false)", [id, { ...stored, agent: { ...stored.agent, secret: OLD } }]);

  const c = sys.config;
  const tasks = new TaskClient({ client: sys.client, pool: sys.pool, taskQueue: c.taskQueue, runQueues: taskRunQueues(c) });
  const secrets = taskSecretsOf(c);
  expect(await tasks.sealPlainSecrets(secrets)).toContain(id);
  const newest = (await sys.pool.query('SELECT version, action, definition FROM task_history WHERE task_id = $1 ORDER BY version DESC LIMIT 1', [id])).rows[0];
  expect({ version: newest.version, action: newest.action, sealed: newest.definition.agent.secret.startsWith('sealed:v1:') }).toEqual({ version: 3, action: 'update', sealed: true });
  expect(secrets.open(newest.definition.agent.secret, id)).toBe(OLD);
  expect(await tasks.sealPlainSecrets(secrets)).not.toContain(id);

  const run = await sys.tk.tasks.trigger(id);
  expect((await finishedRun(run.run_id)).status).toBe('success');
  expect(signed(OLD, agent.received[0])).toBe(true);
  for (const h of await Promise.all([run.run_id].map(historyText))) expect(h).not.toContain(OLD);
});

test.each([
  ['agent.secret', 'a lone surrogate', (s: string) => ({ agent: { type: 'webhook', url: 'https://a.example', prompt_template: 'go', secret: s } })],
  ['alert.secret', 'a NUL', (s: string) => ({ agent: { type: 'webhook', url: 'https://a.example', prompt_template: 'go' }, alert: { url: 'https://alert.example', secret: s } })],
  ['delivery.0.secret', 'a lone surrogate', (s: string) => ({ agent: { type: 'webhook', url: 'https://a.example', prompt_template: 'go' }, delivery: [{ type: 'webhook', url: 'https://d.example', secret: s }] })],
] as const)('%s with %s is refused with 400 naming it, nothing stored', async (field, what, body) => {
  const id = uid('badsecret');
  const value = what === 'a NUL' ? 'secret\u0000value' : 'secret\udc00value';
  const r = await refusal(sys.tk.tasks.create({ task_id: id, trigger: { type: 'interval', every_s: 3600 }, ...body(value) } as never));
  expect(r.status).toBe(400);
  expect((r.body.errors ?? []).map((e: { field: string }) => e.field)).toEqual([field]);
  expect((await sys.pool.query('SELECT count(*)::int AS n FROM task_history WHERE task_id = $1', [id])).rows[0].n).toBe(0);
});
