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

  const batch = await store.claimDue(queue, 0, 61_000, 10);
  expect(batch.rows.map((r) => r.taskId)).toEqual([taskId]);
  await batch.advance(taskId, 61_000, 121_000, 61_500);
  await batch.done(true);

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
  const batch = await store.claimDue(queue, 1, 60_000, 10);
  await batch.giveBack(taskId);
  await batch.done(true);
  const none = await store.claimDue(queue, 1, 10_000_000, 10);
  expect(none.rows).toEqual([]);
  await none.done(true);
  expect(await store.nextDue(queue, 1)).toBeUndefined();

  // The signal could not be sent: the row is the shard's again.
  await store.takeBackReturn(taskId, 1);
  expect(await store.nextDue(queue, 1)).toBe(60_000);
  const b2 = await store.claimDue(queue, 1, 60_000, 10);
  await b2.giveBack(taskId);
  await b2.done(true);
  // The scheduler fired it under the misfire policy and registers again at the same version.
  const back = await store.register({ taskId, queue, shard: 1, version: 1, definition, cursorMs: 300_000, lastFireMs: 300_100 }, minuteAfter);
  expect(back).toMatchObject({ cursorMs: 300_000, nextFireMs: 360_000, lastFireMs: 300_100 });
  expect(await store.nextDue(queue, 1)).toBe(360_000);
});

test('two claims of one shard never hold the same row, and a rolled-back batch leaves its rows as they were', async () => {
  const queue = uid('q');
  const ids = Array.from({ length: 6 }, () => uid('t'));
  for (const taskId of ids) await store.register({ taskId, queue, shard: 2, version: 1, definition, cursorMs: 0 }, minuteAfter);
  const a = await store.claimDue(queue, 2, 60_000, 4);
  const b = await store.claimDue(queue, 2, 60_000, 4);
  const held = [...a.rows, ...b.rows].map((r) => r.taskId);
  expect(held).toHaveLength(6);
  expect(new Set(held).size).toBe(6);
  await a.done(false);
  await b.done(false);
  const c = await store.claimDue(queue, 2, 60_000, 10);
  expect(c.rows.map((r) => r.nextFireMs)).toEqual(Array(6).fill(60_000));
  await c.done(true);
});

test('taking a task out waits for the batch that holds its row, and answers what the row did', async () => {
  const queue = uid('q');
  const taskId = uid('t');
  await store.register({ taskId, queue, shard: 3, version: 1, definition, cursorMs: 0 }, minuteAfter);
  const batch = await store.claimDue(queue, 3, 60_000, 10);
  const out = store.unregister(taskId, 1);
  let settled = false;
  void out.then(() => (settled = true));
  // Blocked on the batch's row lock (a condition, not a sleep).
  await eventually(async () => {
    const r = await sys.ownerPool.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'DELETE FROM task_fire_schedule%'`);
    return r.rows.length > 0 ? true : undefined;
  }, 10_000);
  expect(settled).toBe(false);
  await batch.advance(taskId, 60_000, 120_000, 60_200);
  await batch.done(true);
  expect(await out).toMatchObject({ taskId, cursorMs: 60_000, lastFireMs: 60_200, fires: 1 });
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
  const b = await store.claimDue(mine, 2, 60_000, 10);
  expect(b.rows.map((r) => r.taskId)).toEqual([taskId]);
  await b.done(true);
  // The other queue's row is untouched: its own workers fold it.
  expect(await store.nextDue(other, 6)).toBe(60_000);
});

test('a connection lost while a batch is held fails the batch, not the process, and the row is claimed again', async () => {
  const queue = uid('q');
  const taskId = uid('t');
  await store.register({ taskId, queue, shard: 0, version: 1, definition, cursorMs: 0 }, minuteAfter);
  const batch = await store.claimDue(queue, 0, 60_000, 10);
  expect(batch.rows.map((r) => r.taskId)).toEqual([taskId]);
  // The server ends the batch's connection (as a crash would): the client gets an 'error' event
  // while idle in its transaction, which would kill this process without the store's listener.
  const { rows } = await sys.ownerPool.query(
    `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE state = 'idle in transaction' AND query LIKE '%FOR UPDATE OF s SKIP LOCKED%' AND pid <> pg_backend_pid()`,
  );
  expect(rows.map((r) => r.ok)).toContain(true);
  await expect(batch.advance(taskId, 60_000, 120_000, 60_100)).rejects.toThrow();
  await expect(batch.done(false)).rejects.toThrow();
  const again = await store.claimDue(queue, 0, 60_000, 10);
  expect(again.rows.map((r) => [r.taskId, r.fires])).toEqual([[taskId, 0]]);
  await again.done(true);
});
