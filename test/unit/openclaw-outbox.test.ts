import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { OutboxItem } from '../../integrations/openclaw/src/mapping';
import { Outbox, type DeliveryOutcome } from '../../integrations/openclaw/src/outbox';
import { TimekeeperRecorder } from '../../integrations/openclaw/src/recorder';
import { parseConfig } from '../../integrations/openclaw/src/config';
import { eventually } from '../support/wait';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'tk-outbox-'));
const ev = (session: string, n: number): OutboxItem => ({ op: 'append', session, body: { type: 'USER_INPUT', content: n, idempotency_key: `k${n}` } });
const keyOf = (i: OutboxItem) => (i.op === 'append' ? i.body.idempotency_key : i.op);
const quiet = { info: () => {}, warn: () => {}, error: jest.fn() };

describe('OpenClaw plugin outbox', () => {
  test('delivers in order per session, retrying with backoff until delivered', async () => {
    const seen: string[] = [];
    let fails = 3;
    const box = new Outbox({
      dir: tmp(),
      retryBaseMs: 5,
      retryMaxMs: 20,
      logger: quiet,
      deliver: async (i): Promise<DeliveryOutcome> => {
        if (i.session === 'a' && fails-- > 0) return { kind: 'retry', reason: 'ECONNREFUSED' };
        seen.push(`${i.session}:${keyOf(i)}`);
        return { kind: 'delivered' };
      },
    });
    box.start();
    for (let n = 1; n <= 3; n++) box.enqueue(ev('a', n));
    box.enqueue(ev('b', 9));
    expect(await box.flush(5000)).toBe(true);
    expect(seen.filter((s) => s.startsWith('a:'))).toEqual(['a:k1', 'a:k2', 'a:k3']);
    expect(seen).toContain('b:k9');
    expect(box.status()).toMatchObject({ pending: 0, delivered: 4, retries: 3, dropped: 0 });
    box.close();
  });

  test('survives a restart: what was not acknowledged is sent by the next process, once', async () => {
    const dir = tmp();
    const first = new Outbox({ dir, logger: quiet, deliver: async () => ({ kind: 'retry', reason: 'down' }), retryBaseMs: 1000 });
    first.enqueue(ev('a', 1));
    first.enqueue(ev('a', 2));
    first.close(); // never started: both still in the journal
    const seen: string[] = [];
    const second = new Outbox({ dir, logger: quiet, deliver: async (i) => (seen.push(keyOf(i)), { kind: 'delivered' }) });
    expect(second.status().pending).toBe(2);
    second.start();
    await second.flush(2000);
    second.close();
    const third = new Outbox({ dir, logger: quiet, deliver: async (i) => (seen.push(keyOf(i)), { kind: 'delivered' }) });
    expect(third.status().pending).toBe(0);
    third.close();
    expect(seen).toEqual(['k1', 'k2']);
  });

  test("the counters are the folder's: every process (each `openclaw agent --local` run) continues them", async () => {
    const dir = tmp();
    const first = new Outbox({ dir, logger: quiet, deliver: async () => ({ kind: 'delivered' }) });
    first.start();
    first.enqueue(ev('a', 1));
    first.enqueue(ev('a', 2));
    await first.flush(2000);
    first.close();
    const since = first.status().counting_since;
    const read = () => JSON.parse(fs.readFileSync(path.join(dir, 'status.json'), 'utf8'));
    expect(read()).toMatchObject({ enqueued: 2, delivered: 2, pending: 0 });
    let down = true;
    const second = new Outbox({ dir, logger: quiet, retryBaseMs: 5, retryMaxMs: 5, deliver: async () => (down ? { kind: 'retry', reason: 'ECONNREFUSED' } : { kind: 'delivered' }) });
    expect(second.status()).toMatchObject({ enqueued: 2, delivered: 2, counting_since: since });
    second.start();
    second.enqueue(ev('a', 3));
    expect(await second.flush(50)).toBe(false);
    expect(second.pending).toBe(1);
    expect(second.lastFailure).toMatch(/ECONNREFUSED/);
    second.close();
    expect(read()).toMatchObject({ enqueued: 3, delivered: 2, pending: 1, counting_since: since });
    down = false;
    const third = new Outbox({ dir, logger: quiet, deliver: async () => ({ kind: 'delivered' }) });
    third.start();
    expect(await third.flush(2000)).toBe(true);
    third.close();
    expect(read()).toMatchObject({ enqueued: 3, delivered: 3, pending: 0, counting_since: since });
    expect(read().retries).toBeGreaterThan(0);
  });

  test('a torn last line (crash mid-write) is skipped, the rest replays', () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'journal.jsonl'), `${JSON.stringify({ t: 'enq', id: 1, item: ev('a', 1) })}\n{"t":"enq","id":2,"ite`);
    const box = new Outbox({ dir, logger: quiet, deliver: async () => ({ kind: 'delivered' }) });
    expect(box.status().pending).toBe(1);
    box.close();
  });

  test('bounded: beyond maxPending new events are dropped, counted, logged and written to status.json', () => {
    const dir = tmp();
    const error = jest.fn();
    const box = new Outbox({ dir, maxPending: 2, logger: { ...quiet, error }, deliver: async () => ({ kind: 'delivered' }) });
    expect([1, 2, 3, 4].map((n) => box.enqueue(ev('a', n)))).toEqual([true, true, false, false]);
    expect(box.status()).toMatchObject({ pending: 2, dropped: 2 });
    expect(error).toHaveBeenCalledWith(expect.stringMatching(/outbox full .*dropped so far: 1/));
    box.close();
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'status.json'), 'utf8'))).toMatchObject({ pending: 2, dropped: 2 });
  });

  test('a refusal is acknowledged, counted and logged, and does not block the session', async () => {
    const error = jest.fn();
    const seen: string[] = [];
    const box = new Outbox({
      dir: tmp(),
      logger: { ...quiet, error },
      deliver: async (i) => (keyOf(i) === 'k1' ? { kind: 'rejected', reason: 'HTTP 409 session_archived' } : (seen.push(keyOf(i)), { kind: 'delivered' })),
    });
    box.start();
    box.enqueue(ev('a', 1));
    box.enqueue(ev('a', 2));
    await box.flush(2000);
    expect(seen).toEqual(['k2']);
    expect(box.status()).toMatchObject({ rejected: 1, delivered: 1 });
    expect(error).toHaveBeenCalledWith(expect.stringMatching(/refused .*session_archived/));
    box.close();
  });

  test('a second process on the same folder writes its own journal; the owner adopts it after it exits', () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'owner.lock'), '999999999'); // a pid that is not running: stale
    const box = new Outbox({ dir, logger: quiet, deliver: async () => ({ kind: 'delivered' }) });
    expect(box.journalPath).toBe(path.join(dir, 'journal.jsonl'));
    box.close();
    fs.writeFileSync(path.join(dir, 'journal-999999998.jsonl'), `${JSON.stringify({ t: 'enq', id: 1, item: ev('z', 7) })}\n`);
    const owner = new Outbox({ dir, logger: quiet, deliver: async () => ({ kind: 'delivered' }) });
    expect(owner.status().pending_by_session).toEqual({ z: 1 });
    expect(fs.existsSync(path.join(dir, 'journal-999999998.jsonl'))).toBe(false);
    owner.close();
  });

  test('the recorder: handlers only enqueue; a run seen by message_received is not recorded again from llm_input', () => {
    const dir = tmp();
    const rec = new TimekeeperRecorder(parseConfig({ url: 'http://127.0.0.1:1', outboxDir: dir }, {}), async () => ({ kind: 'delivered' }), quiet);
    rec.sessionStart({ sessionId: 's1', sessionKey: 'k1' }, { sessionId: 's1', agentId: 'main' });
    rec.messageReceived({ from: 'u', content: 'hi', runId: 'r1' }, { channelId: 'cli', sessionKey: 'k1' });
    rec.llmInput({ runId: 'r1', sessionId: 's1', provider: 'p', model: 'm', prompt: 'hi' }, { sessionKey: 'k1' });
    rec.beforeToolCall({ toolName: 'read', params: {}, toolCallId: 'c1' }, { toolName: 'read', sessionId: 's1' });
    rec.afterToolCall({ toolName: 'read', params: {}, toolCallId: 'c1', result: 'ok', durationMs: 3 }, { toolName: 'read', sessionId: 's1' });
    rec.llmOutput({ runId: 'r1', sessionId: 's1', provider: 'p', model: 'm', assistantTexts: ['done'] }, {});
    rec.sessionEnd({ sessionId: 's1', messageCount: 2, reason: 'reset' }, { sessionId: 's1' });
    const lines = fs.readFileSync(path.join(dir, 'journal.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).item as OutboxItem);
    expect(lines.map((i) => (i.op === 'append' ? i.body.type : i.op))).toEqual(['create', 'USER_INPUT', 'TOOL_CALL', 'TOOL_RESULT', 'LLM_RESPONSE', 'end']);
    rec.outbox.close();
  });
  test('a session that goes on after session_end (reset in place, Gateway restart) continues in a new timeline, also after a restart', () => {
    const dir = tmp();
    const cfg = parseConfig({ url: 'http://127.0.0.1:1', outboxDir: dir }, {});
    const rec = new TimekeeperRecorder(cfg, async () => ({ kind: 'delivered' }), quiet);
    rec.sessionStart({ sessionId: 's1', sessionKey: 'k1' }, { sessionId: 's1' });
    rec.llmInput({ runId: 'r1', sessionId: 's1', provider: 'p', model: 'm', prompt: 'hi' }, { sessionKey: 'k1' });
    // OpenClaw 2026.9.6 sessions.reset: session_end with nextSessionId = the same id, then session_start resumedFrom it.
    rec.sessionEnd({ sessionId: 's1', messageCount: 1, reason: 'reset', nextSessionId: 's1' }, { sessionId: 's1' });
    rec.sessionStart({ sessionId: 's1', sessionKey: 'k1', resumedFrom: 's1' }, { sessionId: 's1' });
    rec.llmInput({ runId: 'r2', sessionId: 's1', provider: 'p', model: 'm', prompt: 'again' }, { sessionKey: 'k1' });
    rec.outbox.close();
    // A restart (new process) keeps sending the second generation to the same new timeline.
    const rec2 = new TimekeeperRecorder(cfg, async () => ({ kind: 'delivered' }), quiet);
    rec2.llmInput({ runId: 'r3', sessionId: 's1', provider: 'p', model: 'm', prompt: 'more' }, { sessionKey: 'k1' });
    const items = fs.readFileSync(path.join(dir, 'journal.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).item as OutboxItem);
    rec2.outbox.close();
    const shape = items.map((i) => `${i.op === 'append' ? i.body.type : i.op}@${i.session}`);
    const second = items[3].session;
    expect(second).toMatch(/^s1:r[0-9a-z]+$/);
    // The new process does not know the timeline exists and sends a create first (answered session_exists, which counts as delivered).
    expect(shape).toEqual(['create@s1', 'USER_INPUT@s1', 'end@s1', `create@${second}`, `USER_INPUT@${second}`, `create@${second}`, `USER_INPUT@${second}`]);
  });

  describe('flush (end of an agent run, CLI exit, service stop)', () => {
    test('resolves true once everything is delivered, in order, and wakes a retry that is waiting', async () => {
      const seen: string[] = [];
      let down = true;
      const box = new Outbox({
        dir: tmp(),
        logger: quiet,
        retryBaseMs: 60_000, // without the wake-up in flush the second attempt would be a minute away
        retryMaxMs: 60_000,
        deliver: async (i): Promise<DeliveryOutcome> => (down ? { kind: 'retry', reason: 'ECONNREFUSED' } : (seen.push(keyOf(i)), { kind: 'delivered' })),
      });
      box.start();
      for (let n = 1; n <= 5; n++) box.enqueue(ev('a', n));
      await eventually('the first attempt failed and sleeping', () => box.status().retries > 0, { timeoutMs: 2_000, stepMs: 5 }); // counted just before its sleep
      down = false;
      const t0 = Date.now();
      expect(await box.flush(2000)).toBe(true);
      expect(Date.now() - t0).toBeLessThan(1000);
      expect(seen).toEqual(['k1', 'k2', 'k3', 'k4', 'k5']);
      box.close();
    });

    test('is bounded: resolves false at the limit while Timekeeper is down, and loses nothing', async () => {
      const dir = tmp();
      const box = new Outbox({ dir, logger: quiet, retryBaseMs: 10, retryMaxMs: 20, deliver: async () => ({ kind: 'retry', reason: 'ECONNREFUSED' }) });
      box.start();
      for (let n = 1; n <= 4; n++) box.enqueue(ev('a', n));
      const t0 = Date.now();
      expect(await box.flush(150)).toBe(false);
      const took = Date.now() - t0;
      expect(took).toBeGreaterThanOrEqual(140);
      expect(took).toBeLessThan(1000);
      expect(box.status().pending).toBe(4);
      box.close(); // the process exits here
      const seen: string[] = [];
      const next = new Outbox({ dir, logger: quiet, deliver: async (i) => (seen.push(keyOf(i)), { kind: 'delivered' }) });
      expect(next.status().pending).toBe(4);
      next.start();
      expect(await next.flush(2000)).toBe(true);
      expect(seen).toEqual(['k1', 'k2', 'k3', 'k4']);
      next.close();
    });

    test('a limit hit part-way keeps the undelivered suffix, in order, for the next start', async () => {
      const dir = tmp();
      const seen: string[] = [];
      const box = new Outbox({
        dir,
        logger: quiet,
        retryBaseMs: 10,
        retryMaxMs: 20,
        // k1 and k2 go through, then Timekeeper goes away.
        deliver: async (i): Promise<DeliveryOutcome> => (seen.length < 2 ? (seen.push(keyOf(i)), { kind: 'delivered' }) : { kind: 'retry', reason: 'ECONNREFUSED' }),
      });
      box.start();
      for (let n = 1; n <= 5; n++) box.enqueue(ev('a', n));
      expect(await box.flush(100)).toBe(false);
      box.close();
      const next = new Outbox({ dir, logger: quiet, deliver: async (i) => (seen.push(keyOf(i)), { kind: 'delivered' }) });
      next.start();
      expect(await next.flush(2000)).toBe(true);
      next.close();
      expect(seen).toEqual(['k1', 'k2', 'k3', 'k4', 'k5']);
    });

    test('with nothing pending it resolves at once; with a limit of 0 it does not wait', async () => {
      const box = new Outbox({ dir: tmp(), logger: quiet, deliver: async () => ({ kind: 'retry', reason: 'down' }), retryBaseMs: 1000 });
      expect(await box.flush(5000)).toBe(true);
      box.enqueue(ev('a', 1));
      const t0 = Date.now();
      expect(await box.flush(0)).toBe(false);
      expect(Date.now() - t0).toBeLessThan(100);
      box.close();
    });
  });
});

describe('OpenClaw plugin delivery', () => {
  test('an occurred_at Timekeeper refuses as beyond its bound is dropped and the event sent again, so the event is kept', async () => {
    const { createDeliver } = await import('../../integrations/openclaw/src/timekeeper');
    const bodies: Record<string, unknown>[] = [];
    const fetch = (async (_url: string, init?: { body?: string }) => {
      const body = JSON.parse(init?.body ?? '{}');
      bodies.push(body);
      if (body.occurred_at)
        return new Response(JSON.stringify({ type: 'https://timekeeper.dev/problems/validation_error', title: 'Bad Request', status: 400, code: 400, msg: 'occurred_at is 700000 s before …', detail: 'occurred_at is 700000 s before …', errors: [{ field: 'occurred_at', reason: 'is 700000 s before the time the event is stored' }] }), { status: 400, headers: { 'content-type': 'application/problem+json' } });
      return new Response(JSON.stringify({ session_id: 's', seq: 2, event_id: '00000000-0000-4000-8000-000000000002', type: 'USER_INPUT', ts: 1, content: body.content, prev_hash: null, hash: 'a'.repeat(64), idempotency_key: 'k', occurred_at: null, deduplicated: false }), { status: 201, headers: { 'content-type': 'application/json' } });
    }) as unknown as typeof globalThis.fetch;
    const deliver = createDeliver({ url: 'http://tk.invalid', timeoutMs: 1000, fetch });
    const item: OutboxItem = { op: 'append', session: 's', body: { type: 'USER_INPUT', content: { input: 'old' }, idempotency_key: 'k', occurred_at: '2026-01-01T00:00:00.000Z' } };
    expect(await deliver(item)).toEqual({ kind: 'delivered' });
    expect(bodies.map((b) => b.occurred_at)).toEqual(['2026-01-01T00:00:00.000Z', undefined]);
    expect(bodies[1]).toMatchObject({ idempotency_key: 'k', content: { input: 'old' } });
  });
});
