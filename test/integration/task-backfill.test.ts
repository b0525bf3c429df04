/**
 * Backfill (POST /v1/tasks/{id}/backfill) for real: past fire times run once each under the
 * scheduled run ids, so a fire time that already ran is not run again, and a second backfill
 * of the same range starts nothing; the agent is told it woke for a backfill. Refusals name
 * the field and start nothing. Real Temporal and PostgreSQL; a local webhook agent.
 */
import { refusal, eventually } from '../support';
import { protocolAnswer, Received } from '../support/fake-services';
import { useTaskTestSystem } from '../support/task-system';

const t = useTaskTestSystem();
const iso = (ms: number) => new Date(ms).toISOString();

test('a range with 3 fire times, one already run, starts exactly 2 runs; backfilling it again starts none', async () => {
  const agent = await t.server((r: Received) => ({ body: protocolAnswer(JSON.parse(r.body).task_id) }));
  const id = t.uid('backfill');
  await t.tk.tasks.create({ task_id: id, trigger: { type: 'cron', expression: '*/2 * * * * *', timezone: 'UTC' }, agent: { type: 'webhook', url: agent.url, prompt_template: 'go {{scheduled_at}}' } });
  const first = await eventually(async () => (await t.runsOldestFirst(id)).find((r) => r.status === 'success'), 15_000);
  // Paused, the schedule fires nothing more; backfill works on a paused task.
  await t.tk.tasks.pause(id);
  const ranMs = Date.parse(first.scheduled_at);
  const range = { from: iso(ranMs - 4000), to: iso(ranMs) };

  const b = await t.tk.tasks.backfill(id, range);
  expect(b).toEqual({
    task_id: id,
    ...range,
    started: [ranMs - 4000, ranMs - 2000].map((ms) => ({ scheduled_at: iso(ms), run_id: `run/${id}/${iso(ms)}` })),
    already_run: [{ scheduled_at: first.scheduled_at, run_id: first.run_id }],
  });
  const backfilled = await eventually(async () => {
    const rs = (await t.runsOldestFirst(id)).filter((r) => r.trigger === 'backfill');
    return rs.length === 2 && rs.every((r) => r.status === 'success') ? rs : undefined;
  });
  expect(backfilled.map((r) => r.run_id)).toEqual(b.started.map((s) => s.run_id));
  // The agent heard why it woke, and the nominal (past) time it runs for.
  const told = agent.received.map((r) => JSON.parse(r.body)).find((x) => x.run_id === b.started[0].run_id);
  expect(told.time_context).toContain('Woke because: a backfill');
  expect(told.prompt).toBe(`go ${b.started[0].scheduled_at}`);

  const again = await t.tk.tasks.backfill(id, range);
  expect(again.started).toEqual([]);
  expect(again.already_run.map((x) => x.scheduled_at)).toEqual([ranMs - 4000, ranMs - 2000, ranMs].map(iso));
  // Each fire time of the range is in the log once, and the agent was asked once per run.
  const inRange = (await t.runsOldestFirst(id)).filter((r) => Date.parse(r.scheduled_at) <= ranMs);
  expect(inRange.map((r) => r.scheduled_at)).toEqual([ranMs - 4000, ranMs - 2000, ranMs].map(iso));
  const asked = agent.received.map((r) => JSON.parse(r.body).run_id).filter((r: string) => inRange.some((x) => x.run_id === r));
  expect(asked.sort()).toEqual(inRange.map((r) => r.run_id).sort());
});

test('refusals name the field and start nothing: from ≥ to, a future to, too many fire times, from_last_start, unknown and deleted tasks', async () => {
  const id = t.uid('bad-backfill');
  await t.tk.tasks.create({ task_id: id, trigger: { type: 'cron', expression: '*/2 * * * * *' }, agent: { type: 'webhook', url: 'http://127.0.0.1:9/none', prompt_template: 'go' }, enabled: false });
  const now = Date.now();
  const field = async (body: { from: string; to: string }, taskId = id) => {
    const r = await refusal(t.tk.tasks.backfill(taskId, body));
    return { status: r.status, fields: r.body.errors?.map((e) => e.field), reason: r.body.errors?.[0]?.reason };
  };
  expect(await field({ from: iso(now - 1000), to: iso(now - 1000) })).toMatchObject({ status: 400, fields: ['from'], reason: 'must be before to' });
  expect(await field({ from: iso(now - 10_000), to: iso(now + 60_000) })).toMatchObject({ status: 400, fields: ['to'], reason: expect.stringMatching(/in the future/) });
  // Every 2 s for 10 minutes is 300 fire times, over the limit of 100.
  expect(await field({ from: iso(now - 600_000), to: iso(now - 1000) })).toMatchObject({ status: 400, fields: ['to'], reason: expect.stringMatching(/more than 100 fire times/) });
  expect(await field({ from: 'yesterday', to: iso(now) })).toMatchObject({ status: 400, fields: ['from'] });
  expect((await field({ from: iso(now - 10_000), to: iso(now - 1000) }, t.uid('nobody'))).status).toBe(404);

  const interval = t.uid('bad-interval');
  await t.tk.tasks.create({ task_id: interval, trigger: { type: 'interval', every_s: 60 }, agent: { type: 'webhook', url: 'http://127.0.0.1:9/none', prompt_template: 'go' }, enabled: false });
  expect(await field({ from: iso(now - 600_000), to: iso(now - 1000) }, interval)).toMatchObject({ status: 400, fields: ['trigger.mode'] });

  await t.tk.tasks.delete(id);
  expect((await field({ from: iso(now - 10_000), to: iso(now - 1000) })).status).toBe(409);
  expect((await t.tk.tasks.runs(id)).runs).toEqual([]);
  expect((await t.tk.tasks.runs(interval)).runs).toEqual([]);
});
