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
  const events = [ev('USER_INPUT', 10), ev('LLM_RESPONSE', 20, { model: 'm' }), ev('USER_INPUT', 30), ev('LLM_RESPONSE', 40, { model: 'm' })];
  const later = sessionSpans(session, events, 3);
  // The first turn closes at seq 3 (the next USER_INPUT); its chat closed at seq 2, in an earlier batch.
  expect(later.map((s) => s.name).sort()).toEqual(['chat m', 'invoke_agent']);
  expect(later.find((s) => s.name === 'invoke_agent')!.spanId).toBe(spanIdOf('s-1', 1, 'invoke_agent'));
  expect(sessionSpans(session, events, 3)).toEqual(later);
  // The second turn is still open: nothing for it yet.
  expect(later.some((s) => s.spanId === spanIdOf('s-1', 3, 'invoke_agent'))).toBe(false);
});
