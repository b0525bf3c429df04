/**
 * POST /v1/tasks over HTTP against the real system: the scheduler article's own example as
 * written (default agent, a longer backoff list, warned), a create that answers from what it
 * stored without asking the scheduler it just started, a stored `?` cron's next fire times,
 * and the task list's keyset paging and filters.
 */
import type { CallRequest, TimekeeperClient } from '../../sdk/client';
import { refusal, startTestSystem, TestSystem, eventually, uid } from '../support';

type CreateTask = CallRequest<'createTask'>['body'];

let sys: TestSystem;
let tk: TimekeeperClient;
const defaultAgent = { type: 'webhook', url: 'http://127.0.0.1:9/agent', prompt_template: 'default prompt' };

beforeAll(async () => {
  // No worker at first: a create must not depend on one answering.
  sys = await startTestSystem({ worker: false, config: { outboundAllowHosts: ['127.0.0.1'], taskDefaultAgent: defaultAgent } });
  tk = sys.tk;
});
afterAll(async () => {
  await sys?.stop();
});

test('the seed example posts as written: the default agent fills in the type, the unused wait is warned about and stored', async () => {
  const id = uid('daily-digest');
  const example = {
    task_id: id,
    trigger: { type: 'cron', expression: '0 17 * * 1-5', timezone: 'Asia/Shanghai' },
    agent: { persona: '舆情分析师', prompt_template: '请基于今日重点话题生成一份不超过500字的摘要，包含趋势分析和异常提醒。' },
    delivery: { type: 'webhook', url: 'https://your-robot.example/hook', format: 'markdown' },
    retry: { max_attempts: 3, backoff_seconds: [60, 300, 1800] },
  };
  const created = await tk.call('createTask', { body: example as unknown as CreateTask });
  expect(created.status).toBe(201);
  expect(created.body.definition.agent).toEqual({ ...defaultAgent, persona: '舆情分析师', prompt_template: example.agent.prompt_template });
  expect(created.body.definition.retry).toEqual({ max_attempts: 3, backoff_seconds: [60, 300, 1800] });
  expect(created.body.warnings).toEqual([{ field: 'retry.backoff_seconds', reason: 'has 3 entries; max_attempts 3 waits 2 times, so only the first 2 are used' }]);
  const got = await tk.tasks.get(id);
  expect(got.definition.retry).toEqual({ max_attempts: 3, backoff_seconds: [60, 300, 1800] });
  expect(got.warnings).toBeUndefined();
});

test('a create answers from what it stored, with no worker running; a plain task\'s GET answers from its row on the shared fire schedule, another task\'s from its scheduler once a worker runs', async () => {
  const id = uid('nowait');
  const created = await tk.tasks.create({ task_id: id, trigger: { type: 'cron', expression: '0 9 ? * MON', timezone: 'Europe/Berlin' }, agent: { prompt_template: 'hi' } } as CreateTask);
  expect(created.history).toEqual([expect.objectContaining({ version: 1, action: 'create', enabled: true, deleted: false })]);
  expect(created.scheduler).toEqual({ workflow_id: `task/${id}`, running_runs: [], next_fire_at: created.next_fire_times[0] });
  // `?` means no restriction: Mondays only, 09:00 in Berlin (07:00 or 08:00 UTC).
  expect(created.next_fire_times).toHaveLength(5);
  for (const t of created.next_fire_times) {
    expect(new Date(t).getUTCDay()).toBe(1);
    expect([7, 8]).toContain(new Date(t).getUTCHours());
  }
  // A plain cron task fires from the shared fire schedule: its row, stored with it, answers with no worker running.
  const plain = await tk.tasks.get(id);
  expect(plain.scheduler.next_fire_at).toBe(created.next_fire_times[0]);
  expect(plain.next_fire_times).toEqual(created.next_fire_times);

  // A task that is not plain (buffer_one) has its scheduler started by the create: no worker, no view yet, but the history is.
  const waits = uid('nowait-buffered');
  const other = await tk.tasks.create({ task_id: waits, overlap: 'buffer_one', trigger: { type: 'cron', expression: '0 9 ? * MON', timezone: 'Europe/Berlin' }, agent: { prompt_template: 'hi' } } as CreateTask);
  const before = await tk.tasks.get(waits);
  expect(before.scheduler.next_fire_at).toBeNull();
  expect(before.next_fire_times).toEqual(other.next_fire_times);

  await sys.startWorker();
  const after = await eventually(async () => {
    const t = await tk.tasks.get(waits);
    return t.scheduler.next_fire_at ? t : undefined;
  }, 60_000);
  expect(after.scheduler.next_fire_at).toBe(other.next_fire_times[0]);
});

test('without a default agent configured the same body is refused naming agent; nothing is stored', async () => {
  const bare = await startTestSystem({ worker: false });
  try {
    const id = uid('noagent');
    const r = await refusal(bare.tk.tasks.create({ task_id: id, trigger: { type: 'cron', expression: '0 9 * * *' }, agent: { prompt_template: 'hi' } } as CreateTask));
    expect(r.status).toBe(400);
    expect(r.body.errors?.[0]?.field).toMatch(/^agent/);
    expect((await refusal(bare.tk.tasks.get(id))).status).toBe(404);
  } finally {
    await bare.stop();
  }
});

test('a staggered task: its next fire times are the cron times plus its own offset, as the preview shows them', async () => {
  const id = uid('staggered');
  const created = await tk.tasks.create({ task_id: id, trigger: { type: 'cron', expression: '0 9 * * *', timezone: 'UTC', stagger_s: 300 }, agent: { prompt_template: 'hi' } } as CreateTask);
  const trigger = created.definition.trigger as { stagger_s: number; stagger_offset_s: number };
  expect(trigger.stagger_s).toBe(300);
  expect(trigger.stagger_offset_s).toBeGreaterThanOrEqual(0);
  expect(trigger.stagger_offset_s).toBeLessThan(300);
  const preview = await tk.call('previewSchedule', { query: { cron: '0 9 * * *', timezone: 'UTC', stagger_s: '300', task_id: id, count: '5' } as never });
  expect(preview.body.stagger_offset_s).toBe(trigger.stagger_offset_s);
  expect(preview.body.fire_times).toEqual(created.next_fire_times);
  for (const [i, t] of created.next_fire_times.entries()) {
    expect(Date.parse(t) - Date.parse(preview.body.cron_times![i])).toBe(trigger.stagger_offset_s * 1000);
    expect(preview.body.cron_times![i]).toMatch(/T09:00:00\.000Z$/);
  }
  // The same id gives the same offset: a PATCH that keeps the trigger keeps the times.
  const patched = await tk.tasks.update(id, { name: 'renamed' });
  expect(patched.next_fire_times).toEqual(created.next_fire_times);
  const bad = await refusal(tk.call('previewSchedule', { query: { cron: '0 9 * * *', stagger_s: '300' } as never }));
  expect(bad.status).toBe(400);
  expect(bad.body.errors?.[0]?.field).toBe('task_id');
});
