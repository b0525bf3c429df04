/**
 * The intent workflow's timers against the real Temporal server and PostgreSQL, with short
 * configured durations: zombie expiry (ttl_s and per-domain TTLs), retry_after re-opening
 * with exactly one wake to a local stand-in for OpenClaw's /hooks/wake (and a retried
 * delivery carrying the same idempotency key), retention closing the workflow and a later
 * PATCH starting a new run, a worker stopped between transitions, and an open intent whose
 * workflow was terminated (a PATCH restarts it from the stored head; the reconcile sweep gives
 * an untouched one its expiry back).
 */
import http from 'node:http';
import { AddressInfo } from 'node:net';
import type { CallRequest } from '../../sdk/client';
import type { CreateIntentBody } from '../../sdk/intents/helpers';
import { IntentClient } from '../../clients/intents';
import { databaseInstanceReader } from '../../lib/store/instance';
import { IntentStore } from '../../lib/store/intents';
import { DomainKey, IntentIdKey, IntentStatusKey } from '../../lib/domain/platform/search-attributes';
import { intentWorkflow } from '../../workflows/intents/workflow';
import { refusal, startTestSystem, TestSystem, uid, eventually, type WaitOptions } from '../support';

interface Wake {
  headers: http.IncomingHttpHeaders;
  body: { text: string; mode: string };
}

/** A local /hooks/wake that records every call; `failFirst` answers 503 that many times first. */
async function wakeServer(failFirst = 0) {
  const wakes: Wake[] = [];
  let failures = failFirst;
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      wakes.push({ headers: req.headers, body: JSON.parse(raw) });
      if (req.url !== '/hooks/wake') return void res.writeHead(404).end();
      if (failures-- > 0) return void res.writeHead(503).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { wakes, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/wake`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** How this file polls: every 100 ms, a failing check fails the wait. */
const POLL: WaitOptions = { stepMs: 100, errors: 'throw' };
let n = 0;

/**
 * Resolves once the intent's workflow (its current run) has scheduled a wakeAgent activity and
 * every one it scheduled has closed: the deliveries it makes (retries included) are all made.
 * Resolves with how many it scheduled.
 */
async function wakesSettled(id: string): Promise<number> {
  return eventually(
    `the wake deliveries of ${id} to finish`,
    async () => {
      const events = (await sys.client.workflow.getHandle(`intent/${id}`).fetchHistory()).events ?? [];
      const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'wakeAgent').map((e) => Number(e.eventId));
      const closed = new Set(
        events
          .map((e) => e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes ?? e.activityTaskCanceledEventAttributes)
          .filter((a) => a)
          .map((a) => Number(a!.scheduledEventId)),
      );
      return scheduled.length > 0 && scheduled.every((x) => closed.has(x)) ? scheduled.length : undefined;
    },
    POLL,
  );
}

let sys: TestSystem;
let hook: Awaited<ReturnType<typeof wakeServer>>;
afterEach(async () => {
  await sys?.stop();
  await hook?.close();
});

const create = (body: Partial<CreateIntentBody> & { event_id: string }) => sys.tk.intents.create({ domain: 'test', action: 'send-email', ...body });
const patch = (id: string, body: CallRequest<'transitionIntent'>['body']) => sys.tk.call('transitionIntent', { params: { eventId: id }, body });
const get = (id: string) => sys.tk.intents.get(id);
const statusIs = (id: string, status: string) => async () => {
  const b = await get(id);
  return b.status === status ? b : undefined;
};

test('a zombie intent expires: still requested after ttl_s it becomes blocked with error "expired", written by the system', async () => {
  sys = await startTestSystem();
  const id = uid('ZOMBIE');
  const started = Date.now();
  await create({ event_id: id, ttl_s: 1 });
  expect((await get(id)).workflow.next).toMatchObject({ action: 'expire' });
  const b = await eventually('expiry', statusIs(id, 'blocked'), POLL);
  expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  const last = b.transitions[b.transitions.length - 1];
  expect(last).toMatchObject({ from: 'requested', to: 'blocked', actor: 'system', data: { error: 'expired', retry: false, expired_status: 'requested' } });
  expect(last.data.next_step).toMatch(/ttl_s \(1 s\).*send-email/);
  // No longer pending, and the chain verifies.
  const p = await sys.tk.intents.pending({ domain: 'test' });
  expect(p.find((e) => e.event_id === id)).toBeUndefined();
  expect((await sys.tk.intents.verify(id)).ok).toBe(true);
});

test('one timer per deadline: requested → in-progress keeps the expiry timer; only a new deadline replaces it', async () => {
  sys = await startTestSystem();
  const events = async (id: string) => {
    const h = await sys.client.workflow.getHandle(`intent/${id}`).fetchHistory();
    const events = h.events ?? [];
    return {
      started: events.filter((e) => e.timerStartedEventAttributes).length,
      cancelled: events.filter((e) => e.timerCanceledEventAttributes).length,
      patches: events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch').length,
    };
  };
  const id = uid('ONETIMER');
  await create({ event_id: id });
  const first = (await get(id)).workflow.next;
  expect(first).toMatchObject({ action: 'expire' });
  expect((await patch(id, { status: 'in-progress' })).status).toBe(200);
  expect((await get(id)).workflow.next).toEqual(first);
  expect((await patch(id, { status: 'done', data: { ok: true } })).status).toBe(200);
  await sys.client.workflow.getHandle(`intent/${id}`).result();
  // The patch comes in the run's settings (IntentSettings.patches): no core_patch marker either.
  expect(await events(id)).toEqual({ started: 1, cancelled: 0, patches: 0 });

  // Each move to another deadline: expire → close (blocked) → expire again (requested) → none (done).
  const moved = uid('MOVED');
  await create({ event_id: moved });
  await patch(moved, { status: 'in-progress' });
  await patch(moved, { status: 'blocked', data: { error: 'e', next_step: 'n' } });
  expect((await get(moved)).workflow.next).toMatchObject({ action: 'close' });
  await patch(moved, { status: 'requested' });
  expect((await get(moved)).workflow.next).toMatchObject({ action: 'expire' });
  await patch(moved, { status: 'done' });
  await sys.client.workflow.getHandle(`intent/${moved}`).result();
  expect(await events(moved)).toEqual({ started: 3, cancelled: 2, patches: 0 });
});

test('per-domain TTLs from configuration apply when the create gives none; in-progress expires too', async () => {
  sys = await startTestSystem({ config: { intentDomainTtls: { fast: 1 } } });
  const id = uid('FAST');
  const c = await create({ event_id: id, domain: 'fast' });
  expect(c.ttl_s).toBe(1);
  expect((await patch(id, { status: 'in-progress' })).status).toBe(200);
  const b = await eventually('expiry', statusIs(id, 'blocked'), POLL);
  expect(b.last_data).toMatchObject({ error: 'expired', expired_status: 'in-progress' });
  const other = await create({ event_id: uid('SLOW'), domain: 'slow' });
  expect(other.ttl_s).toBe(86400);
});

test('blocked with retry and retry_after re-opens at that time and wakes the agent exactly once, with the token', async () => {
  hook = await wakeServer();
  sys = await startTestSystem({ config: { intentWakeUrl: hook.url, intentWakeToken: 'wake-secret-1' } });
  const id = uid('RETRY');
  await create({ event_id: id, action: 'send-daily-summary' });
  const retryAt = new Date(Date.now() + 1500).toISOString();
  const r = await patch(id, { status: 'blocked', note: 'SMTP down', data: { error: 'Connection timeout after 10s', next_step: 'Retry sending the summary', retry: true, retry_after: retryAt } });
  expect(r.status).toBe(200);
  expect((await get(id)).workflow.next).toEqual({ action: 'retry', at: retryAt });
  expect(hook.wakes).toHaveLength(0);

  const reopened = await eventually('re-open', statusIs(id, 'requested'), POLL);
  expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(retryAt));
  const last = reopened.transitions[reopened.transitions.length - 1];
  expect(last).toMatchObject({ from: 'blocked', to: 'requested', note: 'retry_after reached', actor: 'system', data: { retry_after: retryAt } });

  await eventually('wake', async () => (hook.wakes.length ? true : undefined), POLL);
  // One wake delivery, and it has finished: nothing more arrives.
  expect(await wakesSettled(id)).toBe(1);
  expect(hook.wakes).toHaveLength(1);
  const w = hook.wakes[0];
  expect(w.headers.authorization).toBe('Bearer wake-secret-1');
  expect(w.headers['idempotency-key']).toBe(last.transition_id);
  expect(w.body.mode).toBe('now');
  expect(w.body.text).toContain(id);
  expect(w.body.text).toContain('send-daily-summary');
  expect(w.body.text).toContain('Retry sending the summary');
  // The token is configuration of the worker, never part of the workflow's history.
  const history = await sys.client.workflow.getHandle(`intent/${id}`).fetchHistory();
  expect(JSON.stringify(history)).not.toContain('wake-secret-1');
  // It is pending again, for the woken agent to pick up.
  const p = await sys.tk.intents.pending({ domain: 'test' });
  expect(p.map((e) => e.event_id)).toContain(id);
});

test('a failed wake delivery is retried with the same idempotency key; a retry_after in the past re-opens at once', async () => {
  hook = await wakeServer(1);
  sys = await startTestSystem({ config: { intentWakeUrl: hook.url, intentWakeToken: 't0k3n-xyz' } });
  const id = uid('PAST');
  await create({ event_id: id });
  const t0 = Date.now();
  await patch(id, { status: 'blocked', data: { error: 'e', next_step: 'n', retry: true, retry_after: '2020-01-01T00:00:00Z' } });
  await eventually('re-open', statusIs(id, 'requested'), POLL);
  expect(Date.now() - t0).toBeLessThan(5000);
  await eventually('second delivery', async () => (hook.wakes.length >= 2 ? true : undefined), POLL);
  // One wake delivery (the second call its retry), and it has finished: nothing more arrives.
  expect(await wakesSettled(id)).toBe(1);
  expect(hook.wakes).toHaveLength(2);
  expect(hook.wakes[0].headers['idempotency-key']).toBe(hook.wakes[1].headers['idempotency-key']);
});

test('blocked without retry: no wake, the workflow closes after the retention period; a later PATCH starts a new run from the stored state', async () => {
  hook = await wakeServer();
  sys = await startTestSystem({ config: { intentRetentionS: 1, intentWakeUrl: hook.url } });
  const id = uid('RETAIN');
  await create({ event_id: id });
  await patch(id, { status: 'blocked', data: { error: 'needs a human', next_step: 'ask the user', retry: false } });
  const handle = sys.client.workflow.getHandle(`intent/${id}`);
  const result = await handle.result();
  expect(result).toMatchObject({ eventId: id, closed: 'retention', head: { seq: 2, status: 'blocked' } });
  expect((await get(id)).workflow).toMatchObject({ open: false, next: null });

  // The closed run's state still rules: blocked → in-progress is not a transition (blocked → done is, since seed 001's recovery flow).
  expect((await refusal(patch(id, { status: 'in-progress' }))).status).toBe(409);
  const again = await patch(id, { status: 'requested', note: 'human answered' });
  expect(again.status).toBe(200);
  expect(again.body.transition).toMatchObject({ seq: 3, from: 'blocked', to: 'requested' });
  expect((await handle.describe()).status.name).toBe('RUNNING');
  expect((await patch(id, { status: 'done' })).status).toBe(200);
  const final = await sys.client.workflow.getHandle(`intent/${id}`).result();
  expect(final).toMatchObject({ closed: 'done', head: { seq: 4, status: 'done' } });
  expect(hook.wakes).toHaveLength(0);
  expect((await new IntentStore(sys.pool).verify(id)).ok).toBe(true);
});

test('a worker stopped between transitions: the PATCH waits for the next worker, and nothing is lost or doubled', async () => {
  sys = await startTestSystem({ config: { writeTimeoutMs: 30_000 } });
  const id = uid('CRASH');
  await create({ event_id: id });
  expect((await patch(id, { status: 'in-progress' })).status).toBe(200);
  await sys.stopWorker();
  const pending = patch(id, { status: 'done', data: { ok: true } });
  // The PATCH's update has reached Temporal: a workflow task waits for a worker.
  const handle = sys.client.workflow.getHandle(`intent/${id}`);
  await eventually('the update waiting for a worker', async () => (await handle.describe()).raw.pendingWorkflowTask, POLL);
  await sys.startWorker();
  const r = await pending;
  expect(r.status).toBe(200);
  const { rows } = await sys.pool.query('SELECT seq, status FROM intent_transitions WHERE event_id = $1 ORDER BY seq', [id]);
  expect(rows.map((x) => [Number(x.seq), x.status])).toEqual([
    [1, 'requested'],
    [2, 'in-progress'],
    [3, 'done'],
  ]);
});

test('an open intent whose workflow was terminated: a PATCH restarts it from the stored head, the chain verifies, and the sweep restores expiry', async () => {
  sys = await startTestSystem();
  const id = uid('TERM');
  await create({ event_id: id });
  expect((await patch(id, { status: 'in-progress' })).status).toBe(200);
  await sys.client.workflow.getHandle(`intent/${id}`).terminate('test: an operator terminated it');
  expect((await get(id)).workflow.open).toBe(false);
  expect((await refusal(patch(id, { status: 'requested' }))).status).toBe(409);
  const r = await patch(id, { status: 'done', data: { ok: true } });
  expect(r.status).toBe(200);
  expect(r.body.transition).toMatchObject({ seq: 3, from: 'in-progress', to: 'done' });
  expect(await sys.client.workflow.getHandle(`intent/${id}`).result()).toMatchObject({ closed: 'done', head: { seq: 3, status: 'done' } });
  const { rows } = await sys.pool.query('SELECT seq::int, status FROM intent_transitions WHERE event_id = $1 ORDER BY seq', [id]);
  expect(rows).toEqual([
    { seq: 1, status: 'requested' },
    { seq: 2, status: 'in-progress' },
    { seq: 3, status: 'done' },
  ]);
  expect(await sys.tk.intents.verify(id)).toMatchObject({ ok: true, header_ok: true });

  // One nobody touches again: still pending, and the sweep restarts it so its time-to-live acts.
  const z = uid('TERMZ');
  await create({ event_id: z, ttl_s: 2 });
  await sys.client.workflow.getHandle(`intent/${z}`).terminate('test');
  expect((await sys.tk.intents.pending({ domain: 'test' })).map((i) => i.event_id)).toContain(z);
  const intents = IntentClient.fromConfig(sys.client, sys.pool, sys.config);
  expect(await intents.reconcileOpen()).toContain(z);
  expect(await intents.reconcileOpen()).not.toContain(z);
  const b = await eventually('expiry after the restart', statusIs(z, 'blocked'), POLL);
  expect(b.last_data).toMatchObject({ error: 'expired', expired_status: 'requested' });
  expect(b.transitions.map((t) => t.seq)).toEqual([1, 2]);
  expect((await sys.tk.intents.verify(z)).ok).toBe(true);
});

test('a blocked retry intent whose workflow was terminated: the sweep restarts it, it re-opens at retry_after and wakes the agent once', async () => {
  hook = await wakeServer();
  sys = await startTestSystem({ config: { intentWakeUrl: hook.url, intentWakeToken: 'sweep-wake-token' } });
  const id = uid('SWEEPRETRY');
  await create({ event_id: id, action: 'send-invoice' });
  const retryAt = new Date(Date.now() + 3000).toISOString();
  const r = await patch(id, { status: 'blocked', data: { error: 'SMTP down', next_step: 'Send the invoice again', retry: true, retry_after: retryAt } });
  expect(r.status).toBe(200);
  // Blocked without a retry is not the sweep's to restart: it waits for a human's PATCH.
  const parked = uid('SWEEPPARKED');
  await create({ event_id: parked });
  await patch(parked, { status: 'blocked', data: { error: 'needs a human', next_step: 'ask', retry: false } });
  for (const x of [id, parked]) await sys.client.workflow.getHandle(`intent/${x}`).terminate('test: an operator terminated it');
  expect((await get(id)).workflow.open).toBe(false);

  const intents = IntentClient.fromConfig(sys.client, sys.pool, sys.config);
  const swept = await intents.reconcileOpen();
  expect(swept).toContain(id);
  expect(swept).not.toContain(parked);
  expect(await intents.reconcileOpen()).not.toContain(id);
  expect((await get(id)).workflow).toMatchObject({ open: true, next: { action: 'retry', at: retryAt } });

  const reopened = await eventually('re-open', statusIs(id, 'requested'), POLL);
  expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(retryAt));
  const last = reopened.transitions[reopened.transitions.length - 1];
  expect(last).toMatchObject({ seq: 3, from: 'blocked', to: 'requested', note: 'retry_after reached', actor: 'system', data: { retry_after: retryAt } });
  const mine = () => hook.wakes.filter((w) => w.body.text.includes(id));
  await eventually('wake', async () => (mine().length ? true : undefined), POLL);
  // One wake delivery from the restarted run, and it has finished: nothing more arrives.
  expect(await wakesSettled(id)).toBe(1);
  expect(mine()).toHaveLength(1);
  expect(mine()[0].headers.authorization).toBe('Bearer sweep-wake-token');
  expect(mine()[0].headers['idempotency-key']).toBe(last.transition_id);
  expect(mine()[0].body.text).toContain('Send the invoice again');
  expect((await get(parked)).status).toBe('blocked');
  expect((await get(parked)).workflow.open).toBe(false);
  expect((await sys.tk.intents.verify(id)).ok).toBe(true);
});

test('the sweep pages through every intent that needs a run, not just the first page', async () => {
  sys = await startTestSystem();
  const domain = `sweep${process.pid}${n++}`;
  const open = [0, 1, 2, 3, 4].map(() => uid('SWEEPPAGE'));
  for (const id of open) await create({ event_id: id, domain });
  const waiting = [0, 1, 2].map(() => uid('SWEEPWAIT'));
  const later = new Date(Date.now() + 3600_000).toISOString();
  for (const id of waiting) {
    await create({ event_id: id, domain });
    await patch(id, { status: 'blocked', data: { error: 'e', next_step: 'n', retry: true, retry_after: later } });
  }
  for (const id of [...open, ...waiting]) await sys.client.workflow.getHandle(`intent/${id}`).terminate('test');

  // The store's keyset pages: in order, without gaps or repeats.
  const store = new IntentStore(sys.pool);
  const seen: string[] = [];
  let after: Parameters<IntentStore['pending']>[0]['after'];
  for (;;) {
    const page = await store.pending({ domain, limit: 2, after });
    seen.push(...page.map((i) => i.event_id));
    if (page.length < 2) break;
    after = { createdTs: page[1].created_ts, eventId: page[1].event_id };
  }
  expect(seen).toEqual(open);

  const intents = IntentClient.fromConfig(sys.client, sys.pool, sys.config);
  const swept = await intents.reconcileOpen({ pageSize: 2 });
  expect(swept).toEqual(expect.arrayContaining([...open, ...waiting]));
  for (const id of [...open, ...waiting]) expect((await sys.client.workflow.getHandle(`intent/${id}`).describe()).status.name).toBe('RUNNING');
  const again = await intents.reconcileOpen({ pageSize: 2 });
  expect(again.filter((id) => open.includes(id) || waiting.includes(id))).toEqual([]);
  expect((await get(waiting[2])).workflow.next).toEqual({ action: 'retry', at: later });
});

test('a run started from a stale head (the intent moved on meanwhile) ends as stale when its timer is refused, and writes nothing', async () => {
  sys = await startTestSystem();
  const id = uid('STALE');
  await create({ event_id: id, ttl_s: 1 });
  await sys.client.workflow.getHandle(`intent/${id}`).terminate('test');
  // What a sweep read before a PATCH restarted the intent and finished it.
  const stale = (await new IntentStore(sys.pool).get(id))!;
  expect((await patch(id, { status: 'done' })).status).toBe(200);
  await sys.client.workflow.getHandle(`intent/${id}`).result();
  const handle = await sys.client.workflow.start(intentWorkflow, {
    workflowId: `intent/${id}`,
    taskQueue: sys.config.taskQueue,
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    args: [
      {
        settings: {
          header: { event_id: id, domain: stale.domain, action: stale.action, tags: stale.tags, session_id: null, dedupe_key: null, ttl_s: stale.ttl_s },
          retentionS: sys.config.intentRetentionS,
          databaseInstance: await databaseInstanceReader(sys.pool)(),
        },
        carried: { head: { seq: stale.head_seq, hash: stale.head_hash, ts: stale.updated_ts, status: stale.status }, openedAtMs: stale.updated_ts, blocked: null, blockedAtMs: 0, run: 1 },
      },
    ],
  });
  // Its expiry (long past) is refused against the stored done: the run ends instead of retrying.
  expect(await handle.result()).toMatchObject({ closed: 'stale', head: { seq: 1, status: 'requested' } });
  const { rows } = await sys.pool.query('SELECT seq::int, status FROM intent_transitions WHERE event_id = $1 ORDER BY seq', [id]);
  expect(rows).toEqual([
    { seq: 1, status: 'requested' },
    { seq: 2, status: 'done' },
  ]);
  expect((await sys.tk.intents.verify(id)).ok).toBe(true);
});

test('the IntentStatus search attribute: off by default (IntentId and Domain only, no upsert per transition); INTENT_STATUS_SEARCH_ATTRIBUTE keeps it current on every transition', async () => {
  const searchAttributes = async (id: string) => {
    const handle = sys.client.workflow.getHandle(`intent/${id}`);
    const sa = (await handle.describe()).typedSearchAttributes;
    // Upserts of IntentStatus (the SDK upserts TemporalChangeVersion once, for the run's patch marker).
    const upserts = ((await handle.fetchHistory()).events ?? []).filter((e) => e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.IntentStatus).length;
    return { intentId: sa.get(IntentIdKey), domain: sa.get(DomainKey), status: sa.get(IntentStatusKey), upserts };
  };
  sys = await startTestSystem();
  const off = uid('SAOFF');
  await create({ event_id: off });
  expect((await patch(off, { status: 'in-progress' })).status).toBe(200);
  expect(await searchAttributes(off)).toEqual({ intentId: off, domain: 'test', status: undefined, upserts: 0 });
  await sys.stop();

  sys = await startTestSystem({ config: { intentStatusSearchAttribute: true } });
  const on = uid('SAON');
  await create({ event_id: on });
  expect(await searchAttributes(on)).toEqual({ intentId: on, domain: 'test', status: 'requested', upserts: 0 });
  expect((await patch(on, { status: 'in-progress' })).status).toBe(200);
  expect(await searchAttributes(on)).toMatchObject({ status: 'in-progress', upserts: 1 });
  expect((await patch(on, { status: 'blocked', data: { error: 'e', next_step: 'n' } })).status).toBe(200);
  expect(await searchAttributes(on)).toMatchObject({ status: 'blocked', upserts: 2 });
});
