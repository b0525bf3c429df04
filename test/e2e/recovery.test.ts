/**
 * What the API does when the workflow did not take a write: retries of stored events are
 * answered again, a terminated session workflow is started again from the chain head, and
 * a write with no worker to take it fails within the write deadline instead of hanging.
 */
import { SessionStore } from '../../lib/store/sessions';
import { eventually, refusal, settle, startTestSystem, TestSystem, uniqueSessionId } from '../support';

const systems: TestSystem[] = [];
afterAll(async () => {
  for (const s of systems) await s.stop();
});

test('retrying /end or an append with the same key after the session is archived returns the stored event', async () => {
  const sys = await startTestSystem();
  systems.push(sys);
  const { tk } = sys;
  const id = uniqueSessionId('end_retry');
  await tk.createSession({ session_id: id });
  const append = await tk.call('appendEvent', { params: { id }, body: { type: 'USER_INPUT', content: { input: 'x' }, idempotency_key: 'a-1' } });
  const end = await tk.call('endSession', { params: { id }, body: { reason: 'done', idempotency_key: 'end-1' } });
  expect(end.status).toBe(200);
  await sys.client.workflow.getHandle(`session/${id}`).result();

  const endAgain = await tk.call('endSession', { params: { id }, body: { reason: 'done', idempotency_key: 'end-1' } });
  expect(endAgain.status).toBe(200);
  expect(endAgain.body).toMatchObject({ deduplicated: true, event_id: end.body.event_id, seq: end.body.seq, hash: end.body.hash });
  const appendAgain = await tk.call('appendEvent', { params: { id }, body: { type: 'USER_INPUT', content: { input: 'x' }, idempotency_key: 'a-1' } });
  expect(appendAgain.status).toBe(200);
  expect(appendAgain.body).toMatchObject({ deduplicated: true, event_id: append.body.event_id, seq: append.body.seq });
  // Same key, other content: a conflict, not a silent success.
  const reused = await refusal(tk.call('appendEvent', { params: { id }, body: { type: 'USER_INPUT', content: { input: 'y' }, idempotency_key: 'a-1' } }));
  expect(reused.status).toBe(409);
  // Without a key, the archived session refuses.
  expect((await refusal(tk.end(id, { reason: 'again' }))).status).toBe(409);
  const { rows } = await sys.pool.query('SELECT count(*)::int AS n FROM timeline_events WHERE session_id = $1', [id]);
  expect(rows[0].n).toBe(3);
});

test('an open session whose workflow was terminated is resumed from the chain head on the next append', async () => {
  const sys = await startTestSystem();
  systems.push(sys);
  const { tk } = sys;
  const id = uniqueSessionId('resume');
  await tk.createSession({ session_id: id, agent_id: 'agent-r', channel: 'cli' });
  for (let i = 0; i < 3; i++) await tk.append(id, { type: 'USER_INPUT', content: { i } });
  await sys.client.workflow.getHandle(`session/${id}`).terminate('operator test');

  // Several writers find the workflow gone at once; they must converge on one new run.
  const after = await Promise.all(
    Array.from({ length: 5 }, (_, i) => settle(tk.call('appendEvent', { params: { id }, body: { type: 'LLM_RESPONSE', content: { after: i } } }))),
  );
  expect(after.map((r) => r.status)).toEqual(Array(5).fill(201));
  expect(after.map((r) => r.body.seq as number).sort((a, b) => a - b)).toEqual([5, 6, 7, 8, 9]);
  const v = await new SessionStore(sys.pool).verify(id);
  expect(v).toMatchObject({ ok: true, checked: 9 });
  const state = await tk.session(id);
  expect(state.status).toBe('open');
  expect(state.head?.seq).toBe(9);
  const runs: string[] = [];
  for await (const wf of sys.client.workflow.list({ query: `WorkflowId = 'session/${id}'` })) runs.push(wf.status.name);
  expect(runs.sort()).toEqual(['RUNNING', 'TERMINATED']);
  const end = await tk.call('endSession', { params: { id }, body: {} });
  expect(end.status).toBe(200);
  expect(end.body.seq).toBe(10);
});

test('with no worker, a write answers 503 within the write deadline; the retry with the same key is stored once', async () => {
  const sys = await startTestSystem({ worker: false, config: { writeTimeoutMs: 1500 } });
  systems.push(sys);
  const { tk } = sys;
  const id = uniqueSessionId('deadline');
  const started = Date.now();
  const create = await refusal(tk.createSession({ session_id: id }));
  expect(create.status).toBe(503);
  expect(create.body.type).toMatch(/unavailable/);
  expect(Date.now() - started).toBeLessThan(15_000);
  // The workflow exists and will write SESSION_CREATE once a worker comes.
  await sys.startWorker();
  await sys.client.workflow.getHandle(`session/${id}`).executeUpdate('created');
  const body = { type: 'USER_INPUT', content: { input: 'hello' }, idempotency_key: 'k-1' } as const;
  await sys.stopWorker();
  const timedOut = await refusal(tk.append(id, body));
  expect(timedOut.status).toBe(503);
  await sys.startWorker();
  // The new worker replays the session before it writes, which on a loaded machine can outlast
  // the 1.5 s deadline again: the client retries on 503 with the same key, as the answer says.
  const appendOrRefused = () =>
    tk.call('appendEvent', { params: { id }, body }).catch((err: unknown) => {
      if ((err as { status?: number }).status === 503) return undefined;
      throw err;
    });
  const retry = await eventually('the retried append stored', appendOrRefused, { timeoutMs: 60_000, errors: 'throw' });
  expect([200, 201]).toContain(retry.status);
  const { rows } = await sys.pool.query(`SELECT count(*)::int AS n FROM timeline_events WHERE session_id = $1 AND idempotency_key = 'k-1'`, [id]);
  expect(rows[0].n).toBe(1);
});
