/** The worker supervisor of `npm start` (it restarts the worker child process): restart after failures with a doubling, capped, resetting backoff. */
import { supervise } from '../../worker/supervise';

test('a failing worker is restarted with backoff 1, 2, 4 … capped; stopping ends it', async () => {
  const waits: number[] = [];
  let runs = 0;
  let stopping = false;
  const r = await supervise(
    async () => {
      runs++;
      if (runs === 6) stopping = true;
      throw new Error(`boom ${runs}`);
    },
    { stopping: () => stopping, log: () => undefined, initialMs: 1000, maxMs: 5000, healthyMs: 60_000, sleep: async (ms) => void waits.push(ms) },
  );
  expect(waits).toEqual([1000, 2000, 4000, 5000, 5000]);
  expect(r.restarts).toBe(5);
});

test('a run that stayed up long enough resets the backoff; a clean stop while stopping is not restarted', async () => {
  const waits: number[] = [];
  let runs = 0;
  let stopping = false;
  let now = 0;
  const realNow = Date.now;
  Date.now = () => now;
  try {
    await supervise(
      async () => {
        runs++;
        if (runs === 3) now += 120_000; // the third run was healthy for two minutes
        if (runs === 5) {
          stopping = true;
          return;
        }
        throw new Error('boom');
      },
      { stopping: () => stopping, log: () => undefined, initialMs: 1000, maxMs: 30_000, healthyMs: 60_000, sleep: async (ms) => void waits.push(ms) },
    );
  } finally {
    Date.now = realNow;
  }
  expect(waits).toEqual([1000, 2000, 1000, 2000]);
  expect(runs).toBe(5);
});
