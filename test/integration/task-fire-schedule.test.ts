/**
 * The shared fire schedule's store (schema/023, lib/store/tasks/fire-schedule.ts) on the real
 * PostgreSQL, as the application role: a registration never moves a row its shard has moved on,
 * a newer version takes the later cursor, claims of one shard never overlap, a scheduler taking
 * its task out waits for a fire in flight, rows stay with their task queue, and a smaller shard
 * count strands no row. Each test uses task queues of its own, which no shard runs.
 */
import type { TaskDefinition } from '../../lib/domain/tasks';
import { FireScheduleStore } from '../../lib/store/tasks/fire-schedule';
import { startTestSystem, TestSystem } from '../support';
import { eventually } from '../support';

let sys: TestSystem;
let store: FireScheduleStore;
beforeAll(async () => {
  sys = await startTestSystem({ worker: false });
  store = new FireScheduleStore(sys.pool);
});
afterAll(async () => {
  await sys?.stop();
});

let n = 0;
const uid = (p: string) => `${p}-${process.pid}-${Date.now()}-${n++}`;
const definition = { trigger: { type: 'interval', every_s: 60, mode: 'aligned' } } as unknown as TaskDefinition;
/** Next fire time: one minute after the cursor (what the pure computation would answer). */
const minuteAfter = async (cursorMs: number) => cursorMs + 60_000;

test('registering again at the same version keeps the row its shard moved on; a newer version takes the later cursor and last start', async () => {
  const queue = uid('q');
  const taskId = uid('t');
  const first = await store.register({ taskId, queue, shard: 0, version: 1, definition, cursorMs: 1_000 }, minuteAfter);
  expect(first).toMatchObject({ taskId, version: 1, cursorMs: 1_000, nextFireMs: 61_000, fires: 0 });

  await store.claimDue(queue, 0, 61_000, 10, async (batch) => {
    expect(batch.rows.map((r) => r.taskId)).toEqual([taskId]);
    await batch.advance(taskId, 61_000, 121_000, 61_500);
  });

  // The scheduler after continue-as-new or a restart: its own copy says cursor 1,000.
  const again = await store.register({ taskId, queue, shard: 0, version: 1, definition, cursorMs: 1_000 }, minuteAfter);
  expect(again).toMatchObject({ version: 1, cursorMs: 61_000, nextFireMs: 121_000, lastFireMs: 61_500, fires: 1 });

  // A new definition: the later of the two cursors and last starts, the next fire time from them.
  const newer = await store.register({ taskId, queue, shard: 0, version: 2, definition, cursorMs: 30_000, lastFireMs: 2_000 }, minuteAfter);
  expect(newer).toMatchObject({ version: 2, cursorMs: 61_000, nextFireMs: 121_000, lastFireMs: 61_500, fires: 1 });

  // An older registration arriving late changes nothing.
  const stale = await store.register({ taskId, queue, shard: 0, version: 1, definition, cursorMs: 500_000 }, minuteAfter);
  expect(stale).toMatchObject({ version: 2, cursorMs: 61_000 });
});

test('a row handed back is not claimed until registered again (or taken back); then it fires from the scheduler\'s cursor', async () => {
  const queue = uid('q');
  const taskId = uid('t');
  await store.register({ taskId, queue, shard: 1, version: 1, definition, cursorMs: 0 }, minuteAfter);
  await store.claimDue(queue, 1, 60_000, 10, (batch) => batch.giveBack(taskId));
  expect(await store.claimDue(queue, 1, 10_000_000, 10, async (none) => none.rows)).toEqual([]);
  expect(await store.nextDue(queue, 1)).toBeUndefined();

  // The signal could not be sent: the row is the shard's again.
  await store.takeBackReturn(taskId, 1);
  expect(await store.nextDue(queue, 1)).toBe(60_000);
  await store.claimDue(queue, 1, 60_000, 10, (b2) => b2.giveBack(taskId));
  // The scheduler fired it under the misfire policy and registers again at the same version.
  const back = await store.register({ taskId, queue, shard: 1, version: 1, definition, cursorMs: 300_000, lastFireMs: 300_100 }, minuteAfter);
  expect(back).toMatchObject({ cursorMs: 300_000, nextFireMs: 360_000, lastFireMs: 300_100 });
  expect(await store.nextDue(queue, 1)).toBe(360_000);
});

test('two claims of one shard never hold the same row, and a rolled-back batch leaves its rows as they were', async () => {
  const queue = uid('q');
  const ids = Array.from({ length: 6 }, () => uid('t'));
  for (const taskId of ids) await store.register({ taskId, queue, shard: 2, version: 1, definition, cursorMs: 0 }, minuteAfter);
  const rollBack = new Error('roll back');
  let held: string[] = [];
  // Both batches held at once (the second claimed inside the first), both rolled back after moving every row on.
  const claim = (inner: () => Promise<void>) =>
    store.claimDue(queue, 2, 60_000, 4, async (batch) => {
      held = [...held, ...batch.rows.map((r) => r.taskId)];
      for (const r of batch.rows) await batch.advance(r.taskId, 60_000, 120_000, 60_100);
      await inner();
      throw rollBack;
    });
  await expect(claim(() => claim(async () => undefined))).rejects.toBe(rollBack);
  expect(held).toHaveLength(6);
  expect(new Set(held).size).toBe(6);
  const after = await store.claimDue(queue, 2, 60_000, 10, async (c) => c.rows.map((r) => [r.nextFireMs, r.fires]));
  expect(after).toEqual(Array(6).fill([60_000, 0]));
});

test('taking a task out waits for the batch that holds its row, and answers what the row did', async () => {
  const queue = uid('q');
  const taskId = uid('t');
  await store.register({ taskId, queue, shard: 3, version: 1, definition, cursorMs: 0 }, minuteAfter);
  let settled = false;
  // Answered wrapped: an async body returning the promise itself would wait for it before committing.
  const { taken } = await store.claimDue(queue, 3, 60_000, 10, async (batch) => {
    const unregistering = store.unregister(taskId, 1);
    void unregistering.then(() => (settled = true));
    // Blocked on the batch's row lock (a condition, not a sleep).
    await eventually(async () => {
      const r = await sys.ownerPool.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'DELETE FROM task_fire_schedule%'`);
      return r.rows.length > 0 ? true : undefined;
    }, 10_000);
    expect(settled).toBe(false);
    await batch.advance(taskId, 60_000, 120_000, 60_200);
    return { taken: unregistering };
  });
  expect(await taken).toMatchObject({ taskId, cursorMs: 60_000, lastFireMs: 60_200, fires: 1 });
  expect(await store.get(taskId)).toBeUndefined();
});

test('rows stay with their task queue, and a smaller shard count folds the shards beyond it', async () => {
  const mine = uid('q');
  const other = uid('q');
  const taskId = uid('t');
  const theirs = uid('t');
  await store.register({ taskId, queue: mine, shard: 6, version: 1, definition, cursorMs: 0 }, minuteAfter);
  await store.register({ taskId: theirs, queue: other, shard: 6, version: 1, definition, cursorMs: 0 }, minuteAfter);
  expect(await store.foldShards(mine, 4)).toBe(1);
  expect(await store.nextDue(mine, 6)).toBeUndefined();
  expect(await store.claimDue(mine, 2, 60_000, 10, async (b) => b.rows.map((r) => r.taskId))).toEqual([taskId]);
  // The other queue's row is untouched: its own workers fold it.
  expect(await store.nextDue(other, 6)).toBe(60_000);
});

test('a connection lost while a batch is held fails the batch, not the process, and the row is claimed again', async () => {
  const queue = uid('q');
  const taskId = uid('t');
  await store.register({ taskId, queue, shard: 0, version: 1, definition, cursorMs: 0 }, minuteAfter);
  const claimed = store.claimDue(queue, 0, 60_000, 10, async (batch) => {
    expect(batch.rows.map((r) => r.taskId)).toEqual([taskId]);
    // The server ends the batch's connection (as a crash would): the client gets an 'error' event
    // while idle in its transaction, which would kill this process without the store's listener.
    const { rows } = await sys.ownerPool.query(
      `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE state = 'idle in transaction' AND query LIKE '%FOR UPDATE OF s SKIP LOCKED%' AND pid <> pg_backend_pid()`,
    );
    expect(rows.map((r) => r.ok)).toContain(true);
    await batch.advance(taskId, 60_000, 120_000, 60_100);
  });
  await expect(claimed).rejects.toThrow();
  expect(await store.claimDue(queue, 0, 60_000, 10, async (again) => again.rows.map((r) => [r.taskId, r.fires]))).toEqual([[taskId, 0]]);
});
