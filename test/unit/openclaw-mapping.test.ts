import { parseConfig, ConfigError } from '../../integrations/openclaw/src/config';
import { HookMapper, idempotencyKey, redact, sha256, timelineId } from '../../integrations/openclaw/src/mapping';
import { channelOfKey } from '../../integrations/openclaw/src/recorder';

const map = new HookMapper({ prefix: '', redaction: 'none' });

describe('OpenClaw hook payloads → timeline events', () => {
  test('session_start creates the session with agent id, channel and OpenClaw ids', () => {
    const it = map.sessionStart({ sessionId: 'sess-1', sessionKey: 'agent:main:telegram:dm:42' }, { sessionId: 'sess-1', agentId: 'main' }, channelOfKey('agent:main:telegram:dm:42'));
    expect(it).toEqual({
      op: 'create',
      session: 'sess-1',
      body: { session_id: 'sess-1', agent_id: 'main', channel: 'telegram', metadata: { source: 'openclaw', openclaw_session_id: 'sess-1', session_key: 'agent:main:telegram:dm:42' } },
    });
  });

  test("session_start carries the hook's time as SESSION_CREATE's occurred_at", () => {
    const at = Date.UTC(2026, 11, 1, 18, 27, 59, 120);
    const it = map.sessionStart({ sessionId: 'sess-2' }, { sessionId: 'sess-2' }, undefined, at);
    expect(it.op === 'create' && it.body.occurred_at).toBe('2026-12-01T18:27:59.120Z');
  });

  test('message_received → USER_INPUT keyed by the run id, else the message id', () => {
    const a = map.messageReceived('s', { from: 'u1', content: 'hi', runId: 'run-1', messageId: 'm-9' }, { channelId: 'telegram' });
    expect(a).toMatchObject({ op: 'append', body: { type: 'USER_INPUT', content: { input: 'hi', channel: 'telegram', message_id: 'm-9', run_id: 'run-1' }, idempotency_key: 'oc:user:run-1' } });
    const b = map.messageReceived('s', { from: 'u1', content: 'hi', messageId: 'm-9' }, { channelId: 'telegram' });
    expect(b.op === 'append' && b.body.idempotency_key).toBe('oc:msg:telegram:m-9');
  });

  test('llm_input (no message hook on CLI runs) → USER_INPUT with the same run key', () => {
    const it = map.llmInput({ runId: 'run-1', sessionId: 's', provider: 'p', model: 'm', prompt: 'read it' }, {});
    expect(it).toMatchObject({ body: { type: 'USER_INPUT', content: { input: 'read it', run_id: 'run-1' }, idempotency_key: 'oc:user:run-1' } });
  });

  test('llm_output → LLM_RESPONSE per attempt', () => {
    const it = map.llmOutput({ runId: 'r', sessionId: 's', provider: 'mock', model: 'm', assistantTexts: ['a', 'b'], usage: { total: 3 } }, 2);
    expect(it).toEqual({ op: 'append', session: 's', body: { type: 'LLM_RESPONSE', content: { response: 'a\nb', provider: 'mock', model: 'm', run_id: 'r', usage: { total: 3 } }, idempotency_key: 'oc:llm:r:2' } });
  });

  test('before/after_tool_call → TOOL_CALL / TOOL_RESULT keyed by the tool call id, with error and duration', () => {
    const c = map.beforeToolCall('s', { toolName: 'read', params: { path: 'x' }, toolCallId: 'call_1', runId: 'r' }, { toolName: 'read' }, 1);
    expect(c).toMatchObject({ body: { type: 'TOOL_CALL', content: { tool_name: 'read', params: { path: 'x' }, tool_call_id: 'call_1' }, idempotency_key: 'oc:tool:call_1:call' } });
    const r = map.afterToolCall('s', { toolName: 'read', params: {}, toolCallId: 'call_1', error: 'ENOENT', durationMs: 12 }, { toolName: 'read' }, 1);
    expect(r).toMatchObject({ body: { type: 'TOOL_RESULT', content: { tool_name: 'read', result: null, error: 'ENOENT', ok: false, duration_ms: 12 }, idempotency_key: 'oc:tool:call_1:result' } });
    const noId = map.beforeToolCall('s', { toolName: 'read', params: {} }, { toolName: 'read', runId: 'r' }, 3);
    expect(noId.op === 'append' && noId.body.idempotency_key).toBe('oc:tool:r:read:3:call');
  });

  test("session_end → end with OpenClaw's reason", () => {
    expect(map.sessionEnd({ sessionId: 's', messageCount: 4, reason: 'idle' })).toEqual({ op: 'end', session: 's', body: { reason: 'openclaw:idle', idempotency_key: 'oc:end:s' } });
    expect(map.sessionEnd({ sessionId: 's', messageCount: 0 }).body).toMatchObject({ reason: 'openclaw:unknown' });
  });

  test("every event carries its hook's time as occurred_at (RFC 3339), the create none", () => {
    const at = Date.UTC(2026, 11, 1, 18, 27, 59, 120);
    const items = [
      map.messageReceived('s', { from: 'u', content: 'hi', runId: 'r' }, { channelId: 'c' }, at),
      map.llmInput({ runId: 'r', sessionId: 's', provider: 'p', model: 'm', prompt: 'x' }, {}, at),
      map.llmOutput({ runId: 'r', sessionId: 's', provider: 'p', model: 'm', assistantTexts: ['a'] }, 1, at),
      map.beforeToolCall('s', { toolName: 'read', params: {} }, { toolName: 'read' }, 1, at),
      map.afterToolCall('s', { toolName: 'read', params: {} }, { toolName: 'read' }, 1, at),
      map.sessionEnd({ sessionId: 's', messageCount: 1 }, at),
    ];
    for (const it of items) expect(it.op !== 'create' && it.body.occurred_at).toBe('2026-12-01T18:27:59.120Z');
    // Without a time (journals written before occurred_at existed) the body has none.
    expect('occurred_at' in map.sessionEnd({ sessionId: 's', messageCount: 1 }).body).toBe(false);
  });

  test('idempotency keys are printable ASCII of at most 200 characters; session ids valid', () => {
    expect(idempotencyKey('tool', 'a b\u00e9')).toBe('oc:tool:a_b_');
    const long = idempotencyKey('x'.repeat(300));
    expect(long).toMatch(/^oc:h:[0-9a-f]{64}$/);
    expect(timelineId('oc-', 'abc')).toBe('oc-abc');
    expect(timelineId('', 'bad id/with slash')).toMatch(/^oc-[0-9a-f]{40}$/);
  });

  test('redaction: hash or drop bodies, keep tool names', () => {
    expect(redact('secret', 'hash')).toEqual({ sha256: sha256('secret') });
    expect(redact({ a: 1 }, 'drop')).toEqual({ redacted: true });
    const h = new HookMapper({ prefix: '', redaction: 'hash' });
    const c = h.beforeToolCall('s', { toolName: 'exec', params: { cmd: 'cat /etc/passwd' }, toolCallId: 'c' }, { toolName: 'exec' }, 1);
    expect(c).toMatchObject({ body: { content: { tool_name: 'exec', params: { sha256: sha256('{"cmd":"cat /etc/passwd"}') } } } });
    const d = new HookMapper({ prefix: '', redaction: 'drop' }).llmOutput({ runId: 'r', sessionId: 's', provider: 'p', model: 'm', assistantTexts: ['x'] }, 1);
    expect(d).toMatchObject({ body: { content: { response: { redacted: true }, model: 'm' } } });
  });

  test('config: url required, unknown fields and bad values refused', () => {
    expect(() => parseConfig({}, {})).toThrow(ConfigError);
    const c = parseConfig({ url: 'http://127.0.0.1:8000/', apiKey: 'k', hooks: ['llm_output'], redaction: 'hash', outboxDir: '/tmp/x' }, {});
    expect(c).toMatchObject({ url: 'http://127.0.0.1:8000', apiKey: 'k', redaction: 'hash', outboxDir: '/tmp/x' });
    expect([...c.hooks]).toEqual(['llm_output']);
    expect(() => parseConfig({ url: 'http://x', nope: 1 }, {})).toThrow(/unknown config field nope/);
    expect(() => parseConfig({ url: 'http://x', redaction: 'maybe' }, {})).toThrow(/redaction/);
    expect(parseConfig(undefined, { TIMEKEEPER_URL: 'http://h:1' }).url).toBe('http://h:1');
  });
});
