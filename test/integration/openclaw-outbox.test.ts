/**
 * The plugin's outbox against a real Timekeeper: its API is down (the port refuses) while the
 * hooks fire, then comes up on the same port; every event arrives once, in order, and the chain verifies.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../api/app';
import { loadKeyStore } from '../../api/auth';
import { parseConfig } from '../../integrations/openclaw/src/config';
import { TimekeeperRecorder } from '../../integrations/openclaw/src/recorder';
import { createDeliver } from '../../integrations/openclaw/src/timekeeper';
import { eventually, startTestSystem, uniqueSessionId, type TestSystem } from '../support';

let sys: TestSystem;
beforeAll(async () => {
  sys = await startTestSystem();
});
afterAll(async () => {
  await sys.stop();
});

test('events recorded while Timekeeper is down are delivered once, in order, after it comes back', async () => {
  // A port that refuses: bind, note it, close.
  const probe = http.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  const url = `http://127.0.0.1:${port}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-oc-int-'));
  const config = parseConfig({ url, outboxDir: dir, retryBaseMs: 50, retryMaxMs: 200 }, {});
  const rec = new TimekeeperRecorder(config, createDeliver({ url, timeoutMs: 5000 }), { info() {}, warn() {}, error() {} });
  rec.outbox.start();
  const sid = uniqueSessionId('oc');
  rec.sessionStart({ sessionId: sid, sessionKey: 'agent:main:main' }, { sessionId: sid, agentId: 'main' });
  rec.llmInput({ runId: 'r1', sessionId: sid, provider: 'p', model: 'm', prompt: 'read hello.txt' }, {});
  rec.beforeToolCall({ toolName: 'read', params: { path: 'hello.txt' }, toolCallId: 'c1' }, { toolName: 'read', sessionId: sid });
  rec.afterToolCall({ toolName: 'read', params: { path: 'hello.txt' }, toolCallId: 'c1', result: 'hello', durationMs: 4 }, { toolName: 'read', sessionId: sid });
  rec.llmOutput({ runId: 'r1', sessionId: sid, provider: 'p', model: 'm', assistantTexts: ['It says hello.'] }, {});
  rec.sessionEnd({ sessionId: sid, messageCount: 2, reason: 'reset' }, { sessionId: sid });
  await eventually('the outbox retrying against the closed port', () => rec.outbox.status().retries > 0, { timeoutMs: 10_000, stepMs: 20 });
  expect(rec.outbox.status()).toMatchObject({ pending: 6, delivered: 0 });
  expect(rec.outbox.status().retries).toBeGreaterThan(0);

  // A "restart" of the plugin's process: a new recorder on the same folder replays the journal.
  rec.outbox.close();
  const server = http.createServer(createApp({ client: sys.client, pool: sys.pool, config: sys.config, keys: loadKeyStore(undefined) }));
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  try {
    const again = new TimekeeperRecorder(config, createDeliver({ url, timeoutMs: 5000 }), { info() {}, warn() {}, error() {} });
    expect(again.outbox.status().pending).toBe(6);
    again.outbox.start();
    expect(await again.outbox.flush(30000)).toBe(true);
    expect(again.outbox.status()).toMatchObject({ pending: 0, delivered: 6, rejected: 0, dropped: 0 });
    again.outbox.close();
    const { events } = await sys.tk.events(sid);
    expect(events.map((e) => e.type)).toEqual(['SESSION_CREATE', 'USER_INPUT', 'TOOL_CALL', 'TOOL_RESULT', 'LLM_RESPONSE', 'SESSION_END']);
    expect(events[5].content).toEqual({ reason: 'openclaw:reset' });
    expect((await sys.tk.verify(sid)).ok).toBe(true);
  } finally {
    await new Promise<void>((r) => (server.close(() => r()), server.closeAllConnections()));
  }
});
