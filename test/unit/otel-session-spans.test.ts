/** The event → span mapping alone: pairing, occurred time, task runs, and which spans a batch owes. */
import { sessionSpans, spanIdOf, traceIdOf, type TelemetryEvent } from '../../lib/otel/session-spans';

const session = { session_id: 's-1', agent_id: null, channel: null };
let seq = 0;
const ev = (event_type: string, ts: number, content: unknown = {}, occurred_at?: number): TelemetryEvent => ({ session_id: 's-1', seq: ++seq, event_id: `e${seq}`, event_type, ts, content, occurred_at });

beforeEach(() => (seq = 0));

test('occurred_at, when an event carries it, times the span; ts otherwise', () => {
  const events = [ev('SESSION_CREATE', 1000), ev('USER_INPUT', 5000, {}, 2000), ev('TOOL_CALL', 5100, { tool_name: 't' }, 2100), ev('TOOL_RESULT', 5200, { tool_name: 't' }), ev('SESSION_END', 6000)];
  const spans = sessionSpans(session, events, 1);
  const tool = spans.find((s) => s.name === 'execute_tool t')!;
  expect([tool.startMs, tool.endMs]).toEqual([2100, 5200]);
  const turn = spans.find((s) => s.name === 'invoke_agent')!;
  expect([turn.startMs, turn.endMs]).toEqual([2000, 5200]);
  expect(turn.traceId).toBe(traceIdOf('s-1'));
});

test('tool results pair with their call by id, then by name; an end before its start is clamped', () => {
  const events = [ev('USER_INPUT', 10), ev('TOOL_CALL', 20, { tool_name: 'a', tool_call_id: 'x' }), ev('TOOL_CALL', 30, { tool_name: 'b' }), ev('TOOL_RESULT', 40, { tool_name: 'b' }), ev('TOOL_RESULT', 50, { tool_call_id: 'x' }, 5)];
  const spans = sessionSpans(session, events, 1);
  const b = spans.find((s) => s.name === 'execute_tool b')!;
  expect([b.startMs, b.endMs]).toEqual([30, 40]);
  const a = spans.find((s) => s.name === 'execute_tool a')!;
  expect(a.attributes['gen_ai.tool.call.id']).toBe('x');
  expect([a.startMs, a.endMs]).toEqual([20, 20]);
  expect(a.parentSpanId).toBe(spanIdOf('s-1', 1, 'invoke_agent'));
});

test('a task run is a span over its own start and finish; a failed one is an error', () => {
  const events = [ev('USER_INPUT', 10), ev('TASK_RUN', 9000, { run_id: 'run/t/1', task_id: 't', task_name: 'digest', started_at: '2026-01-01T00:00:00.000Z', finished_at: '2026-01-01T00:00:03.000Z', status: 'failed', summary: 'agent down', attempt: 2 })];
  const [run] = sessionSpans(session, events, 1);
  expect(run.name).toBe('task_run digest');
  expect(run.endMs - run.startMs).toBe(3000);
  expect(run.error).toBe('agent down');
  expect(run.attributes).toMatchObject({ 'timekeeper.run.id': 'run/t/1', 'timekeeper.run.attempt': 2, 'timekeeper.run.status': 'failed' });
});

test('only spans that close at or after fromSeq are due; the same events give the same spans', () => {
  const events = [ev('USER_INPUT', 10), ev('TOOL_CALL', 15, { tool_name: 't' }), ev('TOOL_RESULT', 18, { tool_name: 't' }), ev('LLM_RESPONSE', 20, { model: 'm' }), ev('USER_INPUT', 30), ev('TOOL_CALL', 40, { tool_name: 't' })];
  // Batch from seq 4: the first turn's answer (LLM_RESPONSE, no tool call open) closes it and its chat.
  const answered = sessionSpans(session, events, 4);
  expect(answered.map((s) => s.name).sort()).toEqual(['chat m', 'invoke_agent']);
  expect(answered.find((s) => s.name === 'invoke_agent')).toMatchObject({ spanId: spanIdOf('s-1', 1, 'invoke_agent'), startMs: 10, endMs: 20 });
  expect(sessionSpans(session, events, 4)).toEqual(answered);
  // The next batch (from seq 5: the next USER_INPUT) sends nothing for the first turn again, and the second turn, its tool call open, is not due.
  expect(sessionSpans(session, events, 5)).toEqual([]);
});

test('a turn goes out with its answer, not at the next turn; one with a tool call open waits for it', () => {
  const open = [ev('USER_INPUT', 10), ev('LLM_RESPONSE', 20, { model: 'm', usage: { input: 3, output: 4 } })];
  const [chat, turn] = sessionSpans(session, open, 1);
  expect(chat.name).toBe('chat m');
  expect(turn).toMatchObject({ name: 'invoke_agent', startMs: 10, endMs: 20, attributes: expect.objectContaining({ 'gen_ai.usage.output_tokens': 4, 'timekeeper.seq.last': 2 }) });
  // More events after the answer stay its children; the closing USER_INPUT / SESSION_END sends no second turn span.
  const more = [...open, ev('TOOL_CALL', 30, { tool_name: 'late' }), ev('TOOL_RESULT', 40, { tool_name: 'late' }), ev('SESSION_END', 50)];
  const rest = sessionSpans(session, more, 3);
  expect(rest.map((s) => s.name)).toEqual(['execute_tool late']);
  expect(rest[0].parentSpanId).toBe(turn.spanId);
  // An LLM_RESPONSE while a tool call is open is not the answer: the turn ends at the later one.
  seq = 0;
  const tools = [ev('USER_INPUT', 10), ev('TOOL_CALL', 20, { tool_name: 'a', tool_call_id: 'x' }), ev('LLM_RESPONSE', 30, { model: 'm' }), ev('TOOL_RESULT', 40, { tool_call_id: 'x' }), ev('LLM_RESPONSE', 50, { model: 'm' })];
  const all = sessionSpans(session, tools, 1);
  expect(all.filter((s) => s.name === 'invoke_agent')).toEqual([expect.objectContaining({ startMs: 10, endMs: 50, attributes: expect.objectContaining({ 'timekeeper.seq.last': 5 }) })]);
  // A turn never answered ends with its last event, sent with the next USER_INPUT.
  seq = 0;
  const unanswered = [ev('USER_INPUT', 10), ev('TOOL_CALL', 20, { tool_name: 'a' }), ev('USER_INPUT', 30)];
  expect(sessionSpans(session, unanswered, 3).filter((s) => s.name === 'invoke_agent')).toEqual([expect.objectContaining({ spanId: spanIdOf('s-1', 1, 'invoke_agent'), endMs: 20 })]);
});
