/**
 * A worker killed with SIGKILL in the middle of appends: once a replacement worker runs,
 * every append the clients saw acknowledged is stored exactly once, and no retried append
 * is stored twice.
 */
import type { ChildProcess } from 'node:child_process';
import { SessionStore } from '../../lib/store/sessions';
import { TimekeeperApiError, TimekeeperContractError, type TimekeeperClient } from '../../sdk/client';
import { startTestSystem, TestSystem, uniqueSessionId, eventually, spawnWorker } from '../support';

/** What a well-behaved client does: retry a failed append with the same idempotency key. */
async function appendWithRetry(tk: TimekeeperClient, id: string, n: number) {
  const body = { type: n % 2 ? 'LLM_RESPONSE' : 'USER_INPUT', content: { n }, idempotency_key: `${id}-${n}` } as const;
  for (let attempt = 0; attempt < 60; attempt++) {
    try {
      const r = await tk.call('appendEvent', { params: { id }, body }); // 200 or 201
      return { attempts: attempt + 1, body: r.body };
    } catch (err) {
      // A 5xx or a network failure is what a worker restart heals: retry. Anything else is real.
      if (err instanceof TimekeeperApiError && err.status < 500) throw new Error(`append refused: ${err.status} ${JSON.stringify(err.problem)}`);
      if (err instanceof TimekeeperContractError) throw err;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`append ${id}/${n} never succeeded`);
}

let sys: TestSystem;
const workers: ChildProcess[] = [];
afterAll(async () => {
  await Promise.all(
    workers.map((w) =>
      w.exitCode !== null || w.signalCode !== null ? undefined : new Promise((r) => {
        w.once('exit', r);
        w.kill('SIGKILL');
      }),
    ),
  );
  await sys?.stop();
});

test('SIGKILL of the worker mid-append loses and duplicates nothing acknowledged', async () => {
  sys = await startTestSystem({ worker: false });
  workers.push(await spawnWorker(sys.config.taskQueue));
  const sessions = Array.from({ length: 4 }, () => uniqueSessionId('crash'));
  for (const id of sessions) expect((await sys.tk.call('createSession', { body: { session_id: id } })).status).toBe(201);

  const perSession = 25;
  const acknowledged: Record<string, { seq: number; event_id: string }[]> = {};
  const appenders = sessions.map(async (id) => {
    acknowledged[id] = [];
    for (let n = 0; n < perSession; n++) {
      const { body } = await appendWithRetry(sys.tk, id, n);
      acknowledged[id].push({ seq: body.seq, event_id: body.event_id });
    }
  });

  // Let appends get going (some stored beyond the SESSION_CREATEs: waited for, not a fixed pause
  // that a loaded machine outlasts), then kill the worker without warning and start a new one.
  const stored = async () => (await sys.pool.query('SELECT count(*)::int AS n FROM timeline_events WHERE session_id = ANY($1)', [sessions])).rows[0].n as number;
  const before = await eventually(async () => {
    const n = await stored();
    return n > sessions.length ? n : undefined;
  }, { timeoutMs: 60_000, stepMs: 20 });
  const killed = new Promise((r) => workers[0].once('exit', r));
  workers[0].kill('SIGKILL');
  await killed;
  expect(() => process.kill(workers[0].pid!, 0)).toThrow(); // really gone
  await new Promise((r) => setTimeout(r, 1500));
  workers.push(await spawnWorker(sys.config.taskQueue));
  await Promise.all(appenders);

  expect(before).toBeGreaterThan(sessions.length); // the kill really happened mid-stream
  expect(before).toBeLessThan(sessions.length * (perSession + 1));
  for (const id of sessions) {
    const { rows } = await sys.pool.query('SELECT seq, event_id, content FROM timeline_events WHERE session_id = $1 ORDER BY seq', [id]);
    expect(rows).toHaveLength(perSession + 1);
    // Appended in order, each exactly once.
    expect(rows.slice(1).map((r) => r.content.n)).toEqual(Array.from({ length: perSession }, (_, n) => n));
    for (const a of acknowledged[id]) {
      expect(rows.find((r) => r.event_id === a.event_id)?.seq).toBe(a.seq);
    }
    expect((await new SessionStore(sys.pool).verify(id)).ok).toBe(true);
  }
});
