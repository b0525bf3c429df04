/**
 * The self-healing loop and the remaining delivery targets, for real (Temporal, PostgreSQL,
 * local stand-ins for the agents and receivers): the `file` delivery under ARTIFACTS_DIR
 * (and what it refuses), the `table` delivery once per run, the built-in `digest` task over
 * the needs-attention queue, and next_action follow-up tasks linked to their parent run.
 */
import { taskSecretsOf } from '../../lib/secrets-key';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { CallRequest, TimekeeperClient } from '../../sdk/client';
import { createTaskActivities } from '../../activities/tasks';
import { TaskClient } from '../../clients/tasks';
import { taskRunQueues } from '../../lib/config';
import { TaskStore } from '../../lib/store/tasks';
import { followUpCreator } from '../../worker/follow-ups';
import { protocolAnswer, Received, serverPool } from '../support/fake-services';
import { eventually, refusal, startTestSystem, TestSystem, uniqueSessionId as uid } from '../support';

let sys: TestSystem;
let tk: TimekeeperClient;
let artifacts: string;
const servers = serverPool();
const server = servers.start;

beforeAll(async () => {
  artifacts = await fs.mkdtemp(path.join(os.tmpdir(), 'tk-artifacts-'));
  sys = await startTestSystem({ config: { outboundAllowHosts: ['127.0.0.1'], artifactsDir: artifacts } });
  tk = sys.tk;
});
afterAll(async () => {
  await servers.closeAll();
  await sys?.stop();
  await fs.rm(artifacts, { recursive: true, force: true });
});

const answering = (extra: (r: Received, n: number) => Record<string, unknown> = () => ({})) => (r: Received, n: number) => ({ body: protocolAnswer(JSON.parse(r.body).task_id, extra(r, n)) });
type CreateTask = CallRequest<'createTask'>['body'];
/** A task that only runs when triggered by hand (its yearly cron does not fire during the test). */
const manualTask = (id: string, agent: CreateTask['agent'], extra: Partial<CreateTask> = {}): CreateTask => ({
  task_id: id,
  trigger: { type: 'cron', expression: '0 0 1 1 *', timezone: 'UTC' },
  agent,
  ...extra,
});
const webhookAgent = (url: string): CreateTask['agent'] => ({ type: 'webhook', url, prompt_template: 'go' });

/** Triggers a run and waits for its workflow to finish (deliveries included). */
async function runOnce(taskId: string) {
  const { run_id } = await tk.tasks.trigger(taskId);
  await sys.client.workflow.getHandle(run_id).result();
  return tk.runs.get(run_id);
}

test('a file delivery writes the run under ARTIFACTS_DIR, where GET /api/artifacts lists it; a retried delivery rewrites the same file; a link is replaced, not followed', async () => {
  const agent = await server(answering(() => ({ summary: 'digest body in full' })));
  const id = uid('file');
  await tk.tasks.create(
    manualTask(id, webhookAgent(agent.url), {
      delivery: [
        { type: 'file', path: 'digest-{{date}}-{{task_id}}.md', format: 'markdown' },
        { type: 'file', format: 'json' },
      ],
    }),
  );
  const run = await runOnce(id);
  expect(run.status).toBe('success');
  expect(run.deliveries.map((d) => [d.type, d.ok])).toEqual([
    ['file', true],
    ['file', true],
  ]);
  const date = run.scheduled_at.slice(0, 10);
  const mdName = `digest-${date}-${id}.md`;
  const jsonName = `${id}-${run.run_id.slice(`run/${id}/`.length).replace(/[^A-Za-z0-9._-]+/g, '-')}.json`;
  const md = await fs.readFile(path.join(artifacts, mdName), 'utf8');
  expect(md).toContain('digest body in full');
  expect(md).toContain(run.run_id);
  const json = JSON.parse(await fs.readFile(path.join(artifacts, jsonName), 'utf8'));
  expect(json).toMatchObject({ run_id: run.run_id, task_id: id, status: 'success', summary: 'digest body in full' });
  expect(json.result.processed).toBe(128);

  const listed = (await tk.call('listArtifacts')).body as { files: { name: string }[] };
  expect(listed.files.map((f) => f.name)).toEqual(expect.arrayContaining([mdName, jsonName]));
  // No temp file is left behind.
  expect((await fs.readdir(artifacts)).filter((f) => f.endsWith('.tmp'))).toEqual([]);

  // The delivery activity again, as after a crash before it was recorded, with the markdown file
  // turned into a link to a file outside the folder: the same content lands, the outside file is untouched.
  const outside = path.join(os.tmpdir(), `${uid('outside')}.md`);
  await fs.writeFile(outside, 'do not touch');
  await fs.rm(path.join(artifacts, mdName));
  await fs.symlink(outside, path.join(artifacts, mdName));
  const activities = createTaskActivities({ pool: sys.pool, sessions: undefined as never, outboundAllowHosts: [], secret: () => undefined, publicUrl: sys.config.publicUrl, artifactsDir: artifacts });
  const def = (await tk.tasks.get(id)).definition as { delivery: unknown[] };
  const result = run.result!;
  const input = {
    // Targets 0 and 1 are recorded as delivered, so only the new third one is written.
    task: { ...def, delivery: [...def.delivery, { type: 'file', path: mdName, format: 'markdown' }] } as never,
    runId: run.run_id,
    nominalMs: Date.parse(run.scheduled_at),
    startedMs: Date.parse(run.started_at!),
    finishedMs: Date.parse(run.finished_at!),
    attempt: run.attempt,
    status: 'success' as const,
    answer: result as never,
  };
  expect(await activities.deliverRun(input)).toEqual({ delivered: 1, failed: 0 });
  expect(await fs.readFile(outside, 'utf8')).toBe('do not touch');
  expect((await fs.lstat(path.join(artifacts, mdName))).isSymbolicLink()).toBe(false);
  expect(await fs.readFile(path.join(artifacts, mdName), 'utf8')).toBe(md);
  await fs.rm(outside);
});

test('a file path that would leave ARTIFACTS_DIR is refused at create time, naming the field, and nothing is stored', async () => {
  for (const p of ['../escape.md', '/etc/passwd', 'digests/{{date}}.md', '..%2Fescape.md', '.hidden.md', 'a\\b.md', '{{secret}}.md']) {
    const id = uid('trav');
    const bad = await refusal(tk.tasks.create(manualTask(id, { type: 'webhook', url: 'http://127.0.0.1:9/x', prompt_template: 'x' }, { delivery: { type: 'file', path: p, format: 'markdown' } })));
    expect({ p, status: bad.status }).toEqual({ p, status: 400 });
    expect(bad.body.errors?.map((e) => e.field)).toEqual(['delivery.0.path']);
    expect((await refusal(tk.tasks.get(id))).status).toBe(404);
  }
});

test('a table delivery stores one row per run, also when listed twice and when delivered again', async () => {
  const agent = await server(answering((_r, n) => ({ processed: n, summary: `run ${n}: ${'long summary '.repeat(60)}` })));
  const id = uid('table');
  await tk.tasks.create(manualTask(id, webhookAgent(agent.url), { delivery: [{ type: 'table' }, { type: 'table' }] }));
  const first = await runOnce(id);
  const second = await runOnce(id);
  expect(first.deliveries.map((d) => [d.type, d.ok, d.detail])).toEqual([
    ['table', true, 'stored in task_results'],
    ['table', true, 'already in task_results'],
  ]);
  // The execution log keeps the summary cut; the results table keeps it whole.
  expect(first.summary!.length).toBeLessThanOrEqual(500);
  const { results } = await tk.tasks.results(id);
  expect(results.map((r) => r.run_id)).toEqual([second.run_id, first.run_id]);
  expect(results[1].summary).toBe(first.result!.summary);
  expect(results[1].summary.length).toBeGreaterThan(500);
  expect(results[1]).toMatchObject({ task_id: id, status: 'success', attempt: 1, processed: first.result!.processed, error_count: 2 });

  // The delivery activity again with a target not recorded yet (as after a crash between the
  // insert's commit and its record): the row is found, not stored twice.
  const activities = createTaskActivities({ pool: sys.pool, sessions: undefined as never, outboundAllowHosts: [], secret: () => undefined, publicUrl: sys.config.publicUrl });
  const again = await activities.deliverRun({
    task: { ...((await tk.tasks.get(id)).definition as object), delivery: [{ type: 'table' }, { type: 'table' }, { type: 'table' }] } as never,
    runId: `${first.run_id}`,
    nominalMs: Date.parse(first.scheduled_at),
    startedMs: Date.parse(first.started_at!),
    finishedMs: Date.parse(first.finished_at!),
    attempt: 1,
    status: 'success',
    answer: first.result as never,
  });
  expect(again).toEqual({ delivered: 1, failed: 0 });
  expect((await tk.runs.get(first.run_id)).deliveries.map((d) => d.detail)).toEqual(['stored in task_results', 'already in task_results', 'already in task_results']);
  const direct = await sys.pool.query('SELECT count(*)::int AS n FROM task_results WHERE run_id = $1', [first.run_id]);
  expect(direct.rows[0].n).toBe(1);
  // Append-only: the application role cannot change a stored result.
  await expect(sys.pool.query('UPDATE task_results SET summary = $1 WHERE run_id = $2', ['x', first.run_id])).rejects.toThrow(/permission denied|append-only/);
});

test('a digest task summarises the failed runs of the needs-attention queue and delivers the summary', async () => {
  const broken = await server(() => ({ status: 500, body: { error: 'database is on fire' } }));
  const failing = uid('failing');
  await tk.tasks.create(manualTask(failing, webhookAgent(broken.url)));
  const f1 = await runOnce(failing);
  const f2 = await runOnce(failing);
  expect([f1.status, f2.status, f1.needs_attention]).toEqual(['failed', 'failed', true]);

  const receiver = await server(() => ({ body: { ok: true } }));
  const digestId = uid('digest');
  const created = await tk.tasks.create({
    task_id: digestId,
    name: 'needs-attention digest',
    trigger: { type: 'interval', every_s: 86_400 },
    agent: { type: 'digest', task_ids: [failing], since_s: 3600 },
    delivery: [{ type: 'webhook', url: receiver.url, format: 'json' }, { type: 'table' }],
  });
  expect(created.definition.agent).toEqual({ type: 'digest', task_ids: [failing], since_s: 3600, statuses: ['needs_attention'], max_items: 50 });
  const run = await runOnce(digestId);
  expect(run.status).toBe('success');
  expect(run.processed).toBe(2);
  expect(run.result!.errors).toEqual(
    expect.arrayContaining([expect.objectContaining({ run_id: f1.run_id, task_id: failing }), expect.objectContaining({ run_id: f2.run_id, task_id: failing })]),
  );
  expect(run.summary).toContain(failing);
  expect(run.summary).toMatch(/2 runs needing attention/);
  expect(run.summary).toMatch(/HTTP 500/);
  const delivered = JSON.parse(receiver.received[0].body);
  expect(delivered).toMatchObject({ task_id: digestId, status: 'success', result: { processed: 2 } });
  expect((await tk.tasks.results(digestId)).results[0].processed).toBe(2);
  // Its own runs are never in its digest, and with nothing failing it says so.
  const quiet = uid('quiet');
  await tk.tasks.create(manualTask(quiet, { type: 'digest', task_ids: [uid('nothing')] }));
  const q = await runOnce(quiet);
  expect([q.status, q.processed]).toEqual(['success', 0]);
  expect(q.summary).toMatch(/^No runs needing attention since /);
});

test('a next_action follow_up creates exactly one task linked to its parent run, which then runs; an invalid one is recorded, not a run failure', async () => {
  const second = await server(answering(() => ({ summary: 'deep analysis done' })));
  const first = await server(
    answering(() => ({
      next_action: { type: 'follow_up', delay_s: 0, task: { name: 'deep analysis', agent: { type: 'webhook', url: second.url, prompt_template: 'investigate' } } },
    })),
  );
  const id = uid('handoff');
  await tk.tasks.create(manualTask(id, webhookAgent(first.url)));
  const parent = await runOnce(id);
  expect(parent.status).toBe('success');
  const fu = parent.deliveries.find((d) => d.type === 'follow_up')!;
  expect(fu.ok).toBe(true);
  expect(parent.follow_ups).toHaveLength(1);
  const childId = parent.follow_ups[0].task_id;
  expect(fu.detail).toBe(`created task ${childId}`);
  const child = await tk.tasks.get(childId);
  expect(child).toMatchObject({ parent_run_id: parent.run_id, name: 'deep analysis' });
  expect(child.definition.trigger).toMatchObject({ type: 'at' });
  const childRun = await eventually(async () => (await tk.tasks.runs(childId)).runs.find((r) => r.status === 'success'), 20_000);
  expect(childRun.summary).toBe('deep analysis done');
  expect(second.received).toHaveLength(1);

  // The creator again for the same parent run (a retried activity): the same task, not a second one.
  const creator = followUpCreator(new TaskClient({ client: sys.client, pool: sys.pool, taskQueue: sys.config.taskQueue, runQueues: taskRunQueues(sys.config) }), new TaskStore(sys.pool), { outboundAllowHosts: sys.config.outboundAllowHosts, agentSecrets: sys.config.agentSecrets }, taskSecretsOf(sys.config));
  const action = parent.result!.next_action as never;
  const again = await creator.create({ parentRunId: parent.run_id, parentTaskId: id, finishedMs: Date.parse(parent.finished_at!), action });
  expect(again).toEqual({ ok: true, taskId: childId });
  expect((await tk.runs.get(parent.run_id)).follow_ups).toHaveLength(1);
  // A PATCH keeps the link (the body cannot set or drop it). After the child `at` task completed
  // (its scheduler does so once the run's finish is logged): a PATCH racing that change is a 409.
  await eventually(async () => ((await tk.tasks.get(childId)).last_change.action === 'complete' ? true : undefined), 20_000);
  const renamed = await tk.tasks.update(childId, { name: 'renamed', trigger: { type: 'at', at: new Date(Date.now() + 3600_000).toISOString() } });
  expect([renamed.name, renamed.parent_run_id]).toEqual(['renamed', parent.run_id]);

  // An invalid follow-up: the run succeeds, the refusal is recorded with the field.
  const sloppy = await server(answering(() => ({ next_action: { type: 'follow_up', task: { name: 'no agent' } } })));
  const id2 = uid('sloppy');
  await tk.tasks.create(manualTask(id2, webhookAgent(sloppy.url)));
  const r2 = await runOnce(id2);
  expect(r2.status).toBe('success');
  expect(r2.follow_ups).toEqual([]);
  const rec = r2.deliveries.find((d) => d.type === 'follow_up')!;
  expect(rec.ok).toBe(false);
  expect(rec.detail).toMatch(/next_action\.task\.agent/);

  // A plain string next_action is only recorded.
  const plain = await server(answering(() => ({ next_action: 'check again tomorrow' })));
  const id3 = uid('plain');
  await tk.tasks.create(manualTask(id3, webhookAgent(plain.url)));
  const r3 = await runOnce(id3);
  expect(r3.result!.next_action).toBe('check again tomorrow');
  expect(r3.deliveries.filter((d) => d.type === 'follow_up')).toEqual([]);
});
