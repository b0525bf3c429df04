/** History formatted for an LLM (api/sessions/context.ts), in both label languages. */
import { formatContext, formatLine, toMessage } from '../../api/sessions/context';
import type { JsonValue, StoredEvent } from '../../lib/domain/sessions';

const TS = Date.UTC(2024, 0, 2, 3, 4, 5, 6); // 2024-01-02T03:04:05.006Z
let seq = 0;
function ev(event_type: string, content: JsonValue, ts = TS): StoredEvent {
  seq++;
  return {
    session_id: 's',
    seq,
    event_id: `00000000-0000-4000-8000-${String(seq).padStart(12, '0')}`,
    event_type,
    ts,
    content,
    prev_hash: null,
    hash: 'f'.repeat(64),
    idempotency_key: null,
  };
}

describe('formatLine', () => {
  const cases: [string, JsonValue, string, string][] = [
    ['USER_INPUT', { input: 'hello' }, 'User: hello', '用户：hello'],
    ['USER_INPUT', { text: 'via text' }, 'User: via text', '用户：via text'],
    ['USER_INPUT', { message: 'via message' }, 'User: via message', '用户：via message'],
    ['USER_INPUT', 'plain string', 'User: plain string', '用户：plain string'],
    ['USER_INPUT', { other: 1, a: [2] }, 'User: {"a":[2],"other":1}', '用户：{"a":[2],"other":1}'],
    ['LLM_RESPONSE', { response: 'It is sunny.' }, 'Agent: It is sunny.', '智能体：It is sunny.'],
    ['LLM_RESPONSE', { text: 't' }, 'Agent: t', '智能体：t'],
    ['TOOL_CALL', { tool_name: 'weather', params: { city: '北京', days: 2 } }, 'Tool call: weather, params: {"city":"北京","days":2}', '调用工具：weather，参数：{"city":"北京","days":2}'],
    ['TOOL_CALL', { name: 'search', arguments: { q: 'x' } }, 'Tool call: search, params: {"q":"x"}', '调用工具：search，参数：{"q":"x"}'],
    ['TOOL_CALL', { params: 'raw' }, 'Tool call: ?, params: raw', '调用工具：?，参数：raw'],
    ['TOOL_CALL', 'not an object', 'Tool call: ?, params: {}', '调用工具：?，参数：{}'],
    ['TOOL_RESULT', { result: { temp: 21 } }, 'Tool result: {"temp":21}', '工具返回：{"temp":21}'],
    ['TOOL_RESULT', { output: 'done' }, 'Tool result: done', '工具返回：done'],
    ['SESSION_CREATE', { msg: 'session created', session_id: 's' }, 'Session created', '会话创建'],
    ['SESSION_END', { reason: 'idle', idle_timeout_s: 2 }, 'Session ended (idle)', '会话结束 (idle)'],
    ['SESSION_END', {}, 'Session ended', '会话结束'],
    ['SESSION_END', null, 'Session ended', '会话结束'],
  ];
  test.each(cases)('%s %j', (type, content, en, zh) => {
    const e = ev(type, content);
    expect(formatLine(e, 'en')).toBe(en);
    expect(formatLine(e, 'zh')).toBe(zh);
  });

  test('the first field name present wins, even when it is not a string', () => {
    expect(formatLine(ev('USER_INPUT', { input: { nested: true }, text: 'ignored' }), 'en')).toBe('User: {"nested":true}');
    expect(formatLine(ev('USER_INPUT', { text: 'second', message: 'third' }), 'en')).toBe('User: second');
  });

  test('an unknown event type shows its type and canonical content', () => {
    expect(formatLine(ev('CUSTOM_THING', { b: 1, a: 2 }), 'en')).toBe('CUSTOM_THING: {"a":2,"b":1}');
    expect(formatLine(ev('CUSTOM_THING', 'x'), 'zh')).toBe('CUSTOM_THING: "x"');
  });
});

describe('toMessage', () => {
  test('user and assistant messages carry the bare text; tools and lifecycle events the labelled line', () => {
    const user = ev('USER_INPUT', { input: 'hi' }, 10);
    expect(toMessage(user, 'en')).toEqual({ role: 'user', content: 'hi', seq: user.seq, ts: 10, occurred_at: null });
    expect(toMessage(user, 'zh').content).toBe('hi');
    const agent = ev('LLM_RESPONSE', { response: 'hello' }, 11);
    expect(toMessage(agent, 'zh')).toEqual({ role: 'assistant', content: 'hello', seq: agent.seq, ts: 11, occurred_at: null });
    expect(toMessage({ ...agent, occurred_at: 7 }, 'en')).toMatchObject({ ts: 11, occurred_at: 7 });
    const call = ev('TOOL_CALL', { tool_name: 'weather', params: {} });
    expect(toMessage(call, 'en')).toMatchObject({ role: 'tool', content: 'Tool call: weather, params: {}' });
    expect(toMessage(call, 'zh')).toMatchObject({ role: 'tool', content: '调用工具：weather，参数：{}' });
    expect(toMessage(ev('TOOL_RESULT', { result: 'r' }), 'en')).toMatchObject({ role: 'tool', content: 'Tool result: r' });
    expect(toMessage(ev('SESSION_CREATE', {}), 'en')).toMatchObject({ role: 'system', content: 'Session created' });
    expect(toMessage(ev('SESSION_END', { reason: 'done' }), 'zh')).toMatchObject({ role: 'system', content: '会话结束 (done)' });
    expect(toMessage(ev('CUSTOM', 1), 'en')).toMatchObject({ role: 'system', content: 'CUSTOM: 1' });
  });

  test('a user message without a known field is its canonical JSON', () => {
    expect(toMessage(ev('USER_INPUT', { z: 1, a: 'b' }), 'en').content).toBe('{"a":"b","z":1}');
  });
});

describe('formatContext', () => {
  const events = () => [
    ev('SESSION_CREATE', { msg: 'session created' }, TS),
    ev('USER_INPUT', { input: '今天天气怎么样？' }, TS + 1000),
    ev('TOOL_CALL', { tool_name: 'weather', params: { city: '北京' } }, TS + 2000),
    ev('TOOL_RESULT', { result: '晴' }, TS + 3000),
    ev('LLM_RESPONSE', { response: 'Sunny.' }, TS + 4000),
    ev('SESSION_END', { reason: 'user left' }, TS + 5000),
  ];

  test('one line per event, in the given order, without timestamps', () => {
    expect(formatContext(events(), 'en', false)).toBe(
      ['Session created', 'User: 今天天气怎么样？', 'Tool call: weather, params: {"city":"北京"}', 'Tool result: 晴', 'Agent: Sunny.', 'Session ended (user left)'].join('\n'),
    );
  });

  test('with timestamps each line starts with the ISO time of its event', () => {
    expect(formatContext(events(), 'zh', true)).toBe(
      [
        '[2024-01-02T03:04:05.006Z] 会话创建',
        '[2024-01-02T03:04:06.006Z] 用户：今天天气怎么样？',
        '[2024-01-02T03:04:07.006Z] 调用工具：weather，参数：{"city":"北京"}',
        '[2024-01-02T03:04:08.006Z] 工具返回：晴',
        '[2024-01-02T03:04:09.006Z] 智能体：Sunny.',
        '[2024-01-02T03:04:10.006Z] 会话结束 (user left)',
      ].join('\n'),
    );
  });

  test('an event with occurred_at is timed by it (when it happened), the others by ts', () => {
    const late = { ...ev('USER_INPUT', { input: 'sent during an outage' }, TS + 60_000), occurred_at: TS + 1000 };
    expect(formatContext([ev('SESSION_CREATE', {}, TS), late, ev('LLM_RESPONSE', { response: 'ok' }, TS + 61_000)], 'en', true)).toBe(
      ['[2024-01-02T03:04:05.006Z] Session created', '[2024-01-02T03:04:06.006Z] User: sent during an outage', '[2024-01-02T03:05:06.006Z] Agent: ok'].join('\n'),
    );
  });

  test('no events is empty text', () => {
    expect(formatContext([], 'en', true)).toBe('');
  });
});
