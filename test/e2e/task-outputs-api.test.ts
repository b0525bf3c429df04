/**
 * Bad input for the self-healing shapes over HTTP: the `file` and `table` deliveries, the
 * built-in `digest` agent, and `parent_run_id` (set by the system, never by a body). Each is
 * a 400 naming the field, with nothing stored; the results route answers for known tasks.
 */
import type { CallRequest, TimekeeperClient } from '../../sdk/client';
import { refusal, startTestSystem, TestSystem, uniqueSessionId as uid } from '../support';

type CreateTask = CallRequest<'createTask'>['body'];

let sys: TestSystem;
let tk: TimekeeperClient;

beforeAll(async () => {
  // No worker: nothing here runs; creates only store the task and signal its scheduler.
  sys = await startTestSystem({ worker: false });
  tk = sys.tk;
});
afterAll(async () => {
  await sys?.stop();
});

const body = (id: string, extra: Record<string, unknown> = {}): CreateTask => ({
  task_id: id,
  trigger: { type: 'cron', expression: '0 17 * * 1-5', timezone: 'Asia/Shanghai' },
  agent: { type: 'webhook', url: 'https://agent.example/run', prompt_template: 'go' },
  ...extra,
});

test.each([
  ['a file path with a parent folder', { delivery: { type: 'file', path: '../x.md' } }, 'delivery.0.path'],
  ['an absolute file path', { delivery: { type: 'file', path: '/tmp/x.md' } }, 'delivery.0.path'],
  ['a file path with a folder', { delivery: { type: 'file', path: 'digests/{{date}}-{{task_id}}.md' } }, 'delivery.0.path'],
  ['a percent-encoded separator', { delivery: { type: 'file', path: '..%2f..%2fetc%2fpasswd' } }, 'delivery.0.path'],
  ['a backslash', { delivery: { type: 'file', path: '..\\x.md' } }, 'delivery.0.path'],
  ['an unknown file-name variable', { delivery: { type: 'file', path: '{{now_utc}}.md' } }, 'delivery.0.path'],
  ['an empty file name', { delivery: { type: 'file', path: '' } }, 'delivery.0.path'],
  ['an unknown file format', { delivery: { type: 'file', format: 'pdf' } }, 'delivery.0.format'],
  ['a table name (one results table only)', { delivery: { type: 'table', table: 'users' } }, 'delivery.0.table'],
  ['a digest looking back 0 s', { agent: { type: 'digest', since_s: 0 } }, 'agent.since_s'],
  ['a digest status that is not one', { agent: { type: 'digest', statuses: ['exploded'] } }, 'agent.statuses.0'],
  ['a digest with no statuses', { agent: { type: 'digest', statuses: [] } }, 'agent.statuses'],
  ['a digest with too many items', { agent: { type: 'digest', max_items: 100_000 } }, 'agent.max_items'],
  ['a digest with a prompt', { agent: { type: 'digest', prompt_template: 'hi' } }, 'agent.prompt_template'],
  ['a parent_run_id in the body', { parent_run_id: 'run/x/2026-01-01T00:00:00.000Z' }, 'parent_run_id'],
] as [string, Record<string, unknown>, string][])('refuses %s with a 400 naming the field, and stores nothing', async (_what, extra, field) => {
  const id = uid('bad');
  const r = await tk.raw('POST', '/v1/tasks', { body: body(id, extra) });
  expect(r.status).toBe(400);
  expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(r.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  const n = await sys.pool.query('SELECT count(*)::int AS n FROM task_history WHERE task_id = $1', [id]);
  expect(n.rows[0].n).toBe(0);
});

test('a digest that lists itself is refused; a valid one is stored with its defaults, no parent, and no results yet', async () => {
  const id = uid('digest');
  const self = await refusal(tk.tasks.create(body(id, { agent: { type: 'digest', task_ids: [id] } })));
  expect(self.status).toBe(400);
  expect(self.body.errors?.map((e) => e.field)).toEqual(['agent.task_ids']);

  const created = await tk.tasks.create(body(id, { agent: { type: 'digest' }, delivery: [{ type: 'file' }, { type: 'table' }] }));
  expect(created.definition.agent).toEqual({ type: 'digest', statuses: ['needs_attention'], max_items: 50 });
  expect(created.definition.delivery).toEqual([{ type: 'file', format: 'markdown' }, { type: 'table' }]);
  expect(created.parent_run_id).toBeNull();
  expect(await tk.tasks.results(id)).toEqual({ results: [] });
  // A PATCH cannot add a parent either.
  const patch = await tk.raw('PATCH', `/v1/tasks/${id}`, { body: { parent_run_id: 'run/x/y' } });
  expect(patch.status).toBe(400);
  expect((await tk.tasks.get(id)).version).toBe(1);
});

test('results of an unknown task answer 404 naming task_id', async () => {
  const r = await refusal(tk.tasks.results(uid('nobody')));
  expect(r.status).toBe(404);
  expect(r.body.errors?.[0]?.field).toBe('task_id');
});
