/**
 * Intent writes answer honestly under faults (issue 16):
 *   - creates and transitions are idempotent per request: the same body again, or the same
 *     Idempotency-Key, answers the first answer (deduplicated) and writes nothing; the same
 *     key with another body is 409;
 *   - a PATCH answers from its own write: the API losing PostgreSQL right after the worker
 *     stored the transition (a TCP proxy between the API's pool and the database, cut while
 *     the writer waits on the intent's lock) still answers 200 with the stored transition;
 *   - a PATCH that times out without a worker says may_be_stored, and its retry with the
 *     same key, once a worker runs, is the success it was;
 *   - a keyed retry that arrives while the first attempt is still being written (the writer
 *     held on the intent's lock) waits for it and answers its answer, deduplicated (a
 *     transition's retry said deduplicated: false before; this test then fails).
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Pool } from 'pg';
import { createApp } from '../../api/app';
import { loadKeyStore } from '../../api/auth';
import { TimekeeperClient } from '../../sdk/client';
import type { CreateIntentBody } from '../../sdk/intents/helpers';
import { IntentClient } from '../../clients/intents';
import { intentWorkflowId } from '../../lib/domain/intents';
import { createPool } from '../../lib/db';
import { eventually, refusal, startTestSystem, TestSystem, testEnv, uid } from '../support';

let sys: TestSystem;
beforeAll(async () => {
  sys = await startTestSystem({ config: { writeTimeoutMs: 2_000 } });
});
afterAll(async () => {
  await sys?.stop();
});

const body = (event_id: string, extra: Partial<CreateIntentBody> = {}): CreateIntentBody => ({ event_id, domain: 'idem', action: 'send-report', data: { to: 'a@b', n: 1 }, ...extra });
const key = (k: string) => ({ headers: { 'idempotency-key': k } });
async function rows(id: string): Promise<number> {
  const { rows: r } = await sys.pool.query('SELECT count(*)::int AS n FROM intent_transitions WHERE event_id = $1', [id]);
  return r[0].n;
}

describe('creates', () => {
  test('the same create again answers 200 with the first answer, deduplicated, and writes nothing', async () => {
    const id = uid('IDEM-C');
    const first = await sys.tk.call('createIntent', { body: body(id) });
    expect(first.status).toBe(201);
    expect(first.body.deduplicated).toBe(false);
    // Key order of data differs: the same JSON value is the same request.
    const again = await sys.tk.call('createIntent', { body: { ...body(id), data: { n: 1, to: 'a@b' } } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ...first.body, deduplicated: true });
    expect(await rows(id)).toBe(1);
  });

  test('another body for a taken event_id is still 409 intent_exists', async () => {
    const id = uid('IDEM-C');
    await sys.tk.call('createIntent', { body: body(id) });
    const r = await refusal(sys.tk.call('createIntent', { body: body(id, { action: 'something-else' }) }));
    expect(r.status).toBe(409);
    expect(r.body.type).toMatch(/intent_exists$/);
    expect(await rows(id)).toBe(1);
  });

  test('the same Idempotency-Key with another body is 409 idempotency_key_reused', async () => {
    const id = uid('IDEM-C');
    expect((await sys.tk.call('createIntent', { body: body(id), ...key('create-1') })).status).toBe(201);
    expect((await sys.tk.call('createIntent', { body: body(id), ...key('create-1') })).body.deduplicated).toBe(true);
    const r = await refusal(sys.tk.call('createIntent', { body: body(id, { note: 'changed' }), ...key('create-1') }));
    expect(r.status).toBe(409);
    expect(r.body.type).toMatch(/idempotency_key_reused$/);
    expect(await rows(id)).toBe(1);
  });

  test('an Idempotency-Key that breaks the rule is 400 naming the header', async () => {
    const r = await refusal(sys.tk.call('createIntent', { body: body(uid('IDEM-C')), ...key('has space') }));
    expect(r.status).toBe(400);
    expect(r.body.errors?.[0]?.field).toBe('Idempotency-Key');
  });
});

describe('transitions', () => {
  test('the same PATCH again answers the stored transition, deduplicated; a different one goes on', async () => {
    const id = uid('IDEM-T');
    await sys.tk.call('createIntent', { body: body(id) });
    const patch = { status: 'in-progress' as const, note: 'working', data: { step: 1 } };
    const first = await sys.tk.call('transitionIntent', { params: { eventId: id }, body: patch });
    expect(first.body).toMatchObject({ status: 'in-progress', seq: 2, deduplicated: false, lifecycle: ['requested', 'in-progress'] });
    const again = await sys.tk.call('transitionIntent', { params: { eventId: id }, body: patch });
    expect(again.status).toBe(200);
    expect(again.body.deduplicated).toBe(true);
    expect(again.body.transition).toEqual(first.body.transition);
    expect(await rows(id)).toBe(2);
    // The same target with another note is a new request: in-progress → in-progress is illegal.
    const other = await refusal(sys.tk.call('transitionIntent', { params: { eventId: id }, body: { ...patch, note: 'still working' } }));
    expect(other.status).toBe(409);
    expect(other.body.type).toMatch(/invalid_transition$/);
    const done = await sys.tk.call('transitionIntent', { params: { eventId: id }, body: { status: 'done', data: { ok: true } } });
    expect(done.body).toMatchObject({ status: 'done', seq: 3, deduplicated: false, lifecycle: ['requested', 'in-progress', 'done'], last_data: { ok: true } });
    expect(await rows(id)).toBe(3);
  });

  test('with an Idempotency-Key a retry gets its own transition back after later ones; another body under it is 409', async () => {
    const id = uid('IDEM-T');
    await sys.tk.call('createIntent', { body: body(id) });
    const first = await sys.tk.call('transitionIntent', { params: { eventId: id }, body: { status: 'in-progress' }, ...key('step-1') });
    await sys.tk.call('transitionIntent', { params: { eventId: id }, body: { status: 'done' }, ...key('step-2') });
    const retry = await sys.tk.call('transitionIntent', { params: { eventId: id }, body: { status: 'in-progress' }, ...key('step-1') });
    expect(retry.status).toBe(200);
    expect(retry.body.deduplicated).toBe(true);
    expect(retry.body.transition).toEqual(first.body.transition);
    expect(retry.body.status).toBe('done');
    const reused = await refusal(sys.tk.call('transitionIntent', { params: { eventId: id }, body: { status: 'blocked', data: { error: 'e', next_step: 'n' } }, ...key('step-2') }));
    expect(reused.status).toBe(409);
    expect(reused.body.type).toMatch(/idempotency_key_reused$/);
    expect(await rows(id)).toBe(3);
  });

  test('a PATCH that times out without a worker says may_be_stored; its retry with the same key once a worker runs succeeds', async () => {
    const id = uid('IDEM-T');
    await sys.tk.call('createIntent', { body: body(id) });
    await sys.stopWorker();
    try {
      const r = await refusal(sys.tk.call('transitionIntent', { params: { eventId: id }, body: { status: 'done', note: 'sent' }, ...key('lost-1') }));
      expect(r.status).toBe(503);
      expect(r.body).toMatchObject({ may_be_stored: true });
    } finally {
      await sys.startWorker();
    }
    const retry = await sys.tk.call('transitionIntent', { params: { eventId: id }, body: { status: 'done', note: 'sent' }, ...key('lost-1') });
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ status: 'done', seq: 2 });
    expect(await rows(id)).toBe(2);
  });
});

/** Resolves once a writer waits on an advisory lock (the intent writer's, held by the test). */
async function writerWaitsOnLock(): Promise<void> {
  await eventually(
    'the writer waiting on the intent lock',
    async () => (await sys.ownerPool.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")).rows[0].n > 0,
    { timeoutMs: 15_000, stepMs: 50, errors: 'throw' },
  );
}

/** Holds the intent writer's lock until `release`; resolves once a writer waits on it. */
async function holdWriterLock(id: string): Promise<{ writerWaiting: () => Promise<void>; release: () => Promise<void> }> {
  const holder = await sys.ownerPool.connect();
  await holder.query('BEGIN');
  await holder.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`intent:${id}`]);
  return {
    writerWaiting: writerWaitsOnLock,
    async release() {
      await holder.query('COMMIT').finally(() => holder.release());
    },
  };
}

describe('a keyed retry while the first attempt is mid-flight', () => {
  // A deadline longer than the lock is held (the suite's 2 s would turn the wait into a 503).
  const intents = () => IntentClient.fromConfig(sys.client, sys.pool, { ...sys.config, writeTimeoutMs: 30_000 });

  /** Updates the intent's workflow accepted (a retry that went to the workflow is one more). */
  async function acceptedUpdates(id: string): Promise<number> {
    const h = await sys.client.workflow.getHandle(intentWorkflowId(id)).fetchHistory();
    return (h.events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length;
  }
  /** The retry is in flight for sure: waiting for its twin in the client, or (as before the fix) sent to the workflow too. */
  async function retryInFlight(client: IntentClient, id: string, sentBefore: number): Promise<void> {
    await eventually('the retry in flight', async () => client.retriesWaitingForTwins > 0 || (await acceptedUpdates(id)) > sentBefore, { timeoutMs: 15_000, stepMs: 50, errors: 'throw' });
  }

  test('a transition: the retry waits and answers the first answer, deduplicated; one row; another body under the key is 409', async () => {
    const id = uid('IDEM-MID');
    await sys.tk.call('createIntent', { body: body(id) });
    const client = intents();
    const lock = await holdWriterLock(id);
    let first: ReturnType<IntentClient['transitionOnce']>;
    let retry: ReturnType<IntentClient['transitionOnce']>;
    let other: Promise<unknown>;
    try {
      first = client.transitionOnce(id, { status: 'done', note: 'sent' }, { idempotencyKey: 'mid-1' });
      await lock.writerWaiting();
      const sent = await acceptedUpdates(id);
      retry = client.transitionOnce(id, { status: 'done', note: 'sent' }, { idempotencyKey: 'mid-1' });
      await retryInFlight(client, id, sent);
      other = client.transitionOnce(id, { status: 'done', note: 'other' }, { idempotencyKey: 'mid-1' }).catch((e: unknown) => e);
    } finally {
      await lock.release();
    }
    const [a, b] = await Promise.all([first, retry]);
    expect(a.deduplicated).toBe(false);
    expect(b.deduplicated).toBe(true);
    expect(b.transition).toEqual(a.transition);
    expect(await other).toMatchObject({ code: 'idempotency_key_reused' });
    expect(await rows(id)).toBe(2);
  });

  // Creates were answered so before too (the retry's start finds the running workflow and asks it for its creation).
  test('a create: the retry waits and answers the first answer, deduplicated; one intent', async () => {
    const id = uid('IDEM-MIDC');
    const client = intents();
    const lock = await holdWriterLock(id);
    const input = { eventId: id, domain: 'idem', action: 'send-report', data: { n: 1 } };
    let first: ReturnType<IntentClient['createOnce']>;
    let retry: ReturnType<IntentClient['createOnce']>;
    try {
      first = client.createOnce(input, { idempotencyKey: 'mid-c' });
      await lock.writerWaiting();
      const sent = await acceptedUpdates(id);
      retry = client.createOnce(input, { idempotencyKey: 'mid-c' });
      await retryInFlight(client, id, sent);
    } finally {
      await lock.release();
    }
    const [a, b] = await Promise.all([first, retry]);
    expect([a.deduplicated, b.deduplicated]).toEqual([false, true]);
    expect(b.transition).toEqual(a.transition);
    expect(await rows(id)).toBe(1);
  });
});

/** A TCP proxy to PostgreSQL that can be cut: new connections refused, open ones reset. */
async function cuttableProxy(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    cut: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        for (const s of sockets) s.destroy();
      }),
  };
}

test('a PATCH answers from its write: the API losing PostgreSQL right after the worker stored it still gets 200', async () => {
  const id = uid('IDEM-PG');
  await sys.tk.call('createIntent', { body: body(id) });
  const url = new URL(testEnv().appUrl);
  const proxy = await cuttableProxy({ host: url.hostname, port: Number(url.port || 5432) });
  url.host = `127.0.0.1:${proxy.port}`;
  const apiPool: Pool = createPool(url.toString(), { max: 2 });
  const app = createApp({ client: sys.client, pool: apiPool, config: sys.config, keys: loadKeyStore() });
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const tk = new TimekeeperClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, validateResponses: true });
  // Hold the writer's lock on this intent, so the transition is stored only once the API has lost the database.
  const holder = await sys.ownerPool.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`intent:${id}`]);
    const answer = tk.call('transitionIntent', { params: { eventId: id }, body: { status: 'done', note: 'sent' } }).then(
      (r) => r,
      (e: unknown) => e,
    );
    // The writer is waiting on the lock: the API's read before the write is done.
    await writerWaitsOnLock();
    await proxy.cut();
    await holder.query('COMMIT');
    const r = (await answer) as { status: number; body: { status: string; seq: number; transition: { seq: number; note: string | null } } };
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'done', seq: 2, transition: { seq: 2, note: 'sent' } });
    expect(await rows(id)).toBe(2);
  } finally {
    holder.release();
    await new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
    await apiPool.end().catch(() => undefined);
  }
});
