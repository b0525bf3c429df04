/**
 * A fire shard's loop (activities/tasks/fire-shard.ts) over an in-memory schedule: which rows it
 * fires, which it hands back to their scheduler, and what it does when a fire or a hand-back
 * fails. The store's SQL is tested on PostgreSQL in test/integration/task-fire-schedule.test.ts;
 * the whole path on Temporal in the task integration tests.
 */
import { runFireShard, type FireShardDeps, type ShardLoopControl } from '../../activities/tasks/fire-shard';
import type { FireInput, FireOutcome } from '../../workflows/tasks/messages';
import type { TaskDefinition } from '../../lib/domain/tasks';
import type { DueBatch, FireRow, FireScheduleStore } from '../../lib/store/tasks/fire-schedule';
import type { FiresReturned } from '../../workflows/tasks/messages';

const definition = { trigger: { type: 'interval', every_s: 60, mode: 'aligned' }, misfire_grace_s: 0 } as unknown as TaskDefinition;

/** Rows as the table holds them; a batch commits its changes only when its body returns. */
function memoryStore(rows: FireRow[]) {
  const returned = new Set<string>();
  const store = {
    rows,
    returned,
    async claimDue<T>(_q: string, _s: number, nowMs: number, limit: number, fn: (b: DueBatch) => Promise<T>): Promise<T> {
      const due = rows.filter((r) => r.nextFireMs !== null && r.nextFireMs <= nowMs && !returned.has(r.taskId)).slice(0, limit);
      const pending: (() => void)[] = [];
      const out = await fn({
        rows: due.map((r) => ({ ...r })),
        advance: async (taskId, firedMs, next, lastFireMs) => {
          pending.push(() => Object.assign(rows.find((r) => r.taskId === taskId)!, { cursorMs: firedMs, nextFireMs: next, lastFireMs, fires: rows.find((r) => r.taskId === taskId)!.fires + 1 }));
        },
        giveBack: async (taskId) => {
          pending.push(() => returned.add(taskId));
        },
      });
      for (const p of pending) p();
      return out;
    },
    async nextDue() {
      const next = rows.filter((r) => r.nextFireMs !== null && !returned.has(r.taskId)).map((r) => r.nextFireMs!);
      return next.length ? Math.min(...next) : undefined;
    },
    async takeBackReturn(taskId: string) {
      returned.delete(taskId);
    },
  };
  return store;
}

/** Runs the loop for `passes` passes (each sleep ends one) and returns what it did. */
async function run(rows: FireRow[], over: Partial<FireShardDeps> = {}, passes = 3) {
  const store = memoryStore(rows);
  const fired: FireInput[] = [];
  const handedBack: { taskId: string; r: FiresReturned }[] = [];
  const warnings: string[] = [];
  let slept = 0;
  const ctl: ShardLoopControl = {
    untilMs: Number.MAX_SAFE_INTEGER,
    heartbeat: () => undefined,
    sleep: async () => {
      if (++slept >= passes) ctl.untilMs = 0;
    },
  };
  const deps: FireShardDeps = {
    store: store as unknown as FireScheduleStore,
    fire: async (i): Promise<FireOutcome> => {
      fired.push(i);
      return { outcome: 'started' };
    },
    nextAfter: async (_d, afterMs) => afterMs + 60_000,
    handBack: async (taskId, r) => {
      handedBack.push({ taskId, r });
    },
    warn: (msg) => warnings.push(msg),
    ...over,
  };
  const pass = await runFireShard(deps, 'q', 0, ctl);
  return { pass, store, fired, handedBack, warnings };
}

const row = (taskId: string, nextFireMs: number, extra: Partial<FireRow> = {}): FireRow => ({ taskId, version: 1, definition, nextFireMs, cursorMs: nextFireMs - 60_000, fires: 0, ...extra });

test('an on-time row is fired under its run id and moved on to its next fire time', async () => {
  const due = Date.now() - 1_000;
  const { pass, store, fired, handedBack } = await run([row('a', due)]);
  expect(fired.map((f) => [f.taskId, f.runId, f.nominalMs, f.trigger])).toEqual([['a', `run/a/${new Date(due).toISOString()}`, due, 'schedule']]);
  expect(store.rows[0]).toMatchObject({ cursorMs: due, nextFireMs: due + 60_000, fires: 1 });
  expect(handedBack).toEqual([]);
  expect(pass).toEqual({ fired: 1, returned: 0 });
});

test('a row later than its on-time window is handed back after the commit, with its cursor, and not fired', async () => {
  const late = Date.now() - 60_000;
  const { store, fired, handedBack } = await run([row('late', late, { lastFireMs: late - 60_000 })]);
  expect(fired).toEqual([]);
  expect(store.returned.has('late')).toBe(true);
  expect(handedBack).toEqual([{ taskId: 'late', r: { version: 1, cursorMs: late - 60_000, lastFireMs: late - 60_000 } }]);
});

test('a fire that fails keeps its row and is tried again on a later pass, even once it is late', async () => {
  // Only the clock is faked: the first failure lasts 10 s, so the second pass finds the row 14 s late.
  jest.useFakeTimers({ now: Date.now(), doNotFake: ['setTimeout', 'setInterval', 'setImmediate', 'nextTick', 'queueMicrotask', 'clearTimeout', 'clearInterval', 'clearImmediate'] });
  const due = Date.now() - 4_000;
  let calls = 0;
  const { store, handedBack, warnings } = await run([row('flaky', due)], {
    fire: async () => {
      if (++calls === 1) {
        jest.setSystemTime(Date.now() + 10_000);
        throw new Error('Temporal unavailable');
      }
      return { outcome: 'started' };
    },
  }, 3).finally(() => jest.useRealTimers());
  expect(calls).toBe(2);
  expect(handedBack).toEqual([]);
  expect(store.rows[0]).toMatchObject({ nextFireMs: due + 60_000, fires: 1 });
  expect(warnings.some((w) => w.includes('failed; trying again'))).toBe(true);
});

test('a hand-back whose signal fails is taken back, so the row is handed back again on a later pass', async () => {
  const late = Date.now() - 60_000;
  let tries = 0;
  const { store, handedBack } = await run([row('late', late)], {
    handBack: async () => {
      if (++tries === 1) throw new Error('scheduler not reachable');
    },
  }, 3);
  expect(tries).toBe(2);
  expect(store.returned.has('late')).toBe(true);
  expect(handedBack).toEqual([]);
});

test('a pass that cannot claim (PostgreSQL away) is tried again after a pause, not abandoned', async () => {
  let claims = 0;
  const rows = [row('a', Date.now() - 1_000)];
  const store = memoryStore(rows);
  const flaky = {
    ...store,
    claimDue: async <T>(q: string, s: number, nowMs: number, limit: number, fn: (b: DueBatch) => Promise<T>) => {
      if (++claims === 1) throw new Error('connection refused');
      return store.claimDue(q, s, nowMs, limit, fn);
    },
  };
  const { fired } = await run(rows, { store: flaky as unknown as FireScheduleStore }, 3);
  expect(claims).toBeGreaterThanOrEqual(2);
  expect(fired.map((f) => f.taskId)).toEqual(['a']);
});

test('an idle shard reads its next fire time each poll and claims nothing until a row is due', async () => {
  const rows = [row('later', Date.now() + 3_600_000)];
  const store = memoryStore(rows);
  let claims = 0;
  let reads = 0;
  const counting = {
    ...store,
    claimDue: async <T>(q: string, s: number, nowMs: number, limit: number, fn: (b: DueBatch) => Promise<T>) => {
      claims++;
      return store.claimDue(q, s, nowMs, limit, fn);
    },
    nextDue: async () => {
      reads++;
      return store.nextDue();
    },
  };
  const { fired } = await run(rows, { store: counting as unknown as FireScheduleStore }, 3);
  expect([claims, reads, fired.length]).toEqual([0, 3, 0]);
  // Once due, the next pass claims and fires it.
  rows[0].nextFireMs = Date.now() - 1_000;
  const again = await run(rows, { store: counting as unknown as FireScheduleStore }, 3);
  expect(claims).toBe(1);
  expect(again.fired.map((f) => f.taskId)).toEqual(['later']);
});
