/**
 * OpenTelemetry export end to end: sessions appended through the API reach an OTLP/HTTP
 * receiver (protobuf, decoded with the official OTLP definitions) as one trace per session,
 * with GenAI span names and attributes, turn → chat / execute_tool / intent parent links, and
 * the events' times; a collector outage stalls the export, which then resumes with every span
 * once. Real Temporal and PostgreSQL; the receiver stands in for Jaeger, Langfuse or Phoenix.
 */
import { metrics } from '../../lib/metrics';
import { spanIdOf, traceIdOf } from '../../lib/otel/session-spans';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';
import { startTestSystem, type TestSystem, eventually, type WaitOptions } from '../support';

jest.setTimeout(120_000);

/** Waiting on what the stand-in collector received (checked every 20 ms) and on the metrics (every 50 ms); a failing check fails the wait. */
const SPANS: WaitOptions = { timeoutMs: 10_000, stepMs: 20, errors: 'throw' };
const SCRAPE: WaitOptions = { timeoutMs: 30_000, stepMs: 50, errors: 'throw' };
let sys: TestSystem;
let rx: OtlpReceiver;

beforeAll(async () => {
  rx = await startOtlpReceiver();
  sys = await startTestSystem({ config: { otelEndpoint: rx.url, otelServiceName: 'timekeeper-test', otelPollMs: 200, otelSettleMs: 100 } });
});

afterAll(async () => {
  await sys?.stop();
  await rx?.close();
});

const spansOf = (sessionId: string) => rx.spans.filter((s) => s.traceId === traceIdOf(sessionId) && s.scope === 'timekeeper.sessions');
const byName = (spans: ReceivedSpan[], name: string) => {
  const found = spans.filter((s) => s.name === name);
  if (found.length === 0) throw new Error(`no span "${name}" among ${spans.map((s) => s.name).join(', ')}`);
  return found;
};

test('a session becomes one trace of invoke_agent, chat and execute_tool spans with the events as parents and times', async () => {
  const sid = `otel-a-${Date.now()}`;
  const tk = sys.tk;
  await tk.createSession({ session_id: sid, agent_id: 'agent-otel', channel: 'cli' });
  await tk.append(sid, { type: 'USER_INPUT', content: { input: 'weather in Beijing?' } });
  await tk.append(sid, { type: 'TOOL_CALL', content: { tool_name: 'weather', tool_call_id: 'call-1', params: { city: 'Beijing' } } });
  await tk.append(sid, { type: 'TOOL_RESULT', content: { tool_name: 'weather', tool_call_id: 'call-1', ok: true, result: { c: 21 } } });
  await tk.append(sid, { type: 'LLM_RESPONSE', content: { response: 'Sunny, 21 °C', model: 'qwen2.5', provider: 'openai', usage: { input: 120, output: 9 } } });
  await tk.append(sid, { type: 'USER_INPUT', content: { input: 'and tomorrow?' } });
  await tk.append(sid, { type: 'TOOL_CALL', content: { tool_name: 'forecast', tool_call_id: 'call-2' } });
  await tk.append(sid, { type: 'TOOL_RESULT', content: { tool_name: 'forecast', tool_call_id: 'call-2', ok: false, error: 'upstream timeout' } });
  await tk.append(sid, { type: 'LLM_RESPONSE', content: { response: 'No forecast', model: 'qwen2.5', usage: { input: 150, output: 4 } } });
  await tk.end(sid, { reason: 'user left' });
  const events = (await tk.events(sid, { limit: 100 })).events;
  const at = (seq: number) => events.find((e) => e.seq === seq)!.ts;

  // 2 turns, 2 chats, 2 tool calls.
  const spans = await eventually('the session trace', () => spansOf(sid).length >= 6 && spansOf(sid), { ...SPANS, timeoutMs: 60_000 });
  expect(spans).toHaveLength(6);
  const trace = traceIdOf(sid);
  for (const s of spans) {
    expect(s.traceId).toBe(trace);
    expect(s.attributes['gen_ai.conversation.id']).toBe(sid);
    expect(s.attributes['session.id']).toBe(sid);
    expect(s.attributes['gen_ai.agent.name']).toBe('agent-otel');
    expect(s.resource['service.name']).toBe('timekeeper-test');
  }
  const [turn1, turn2] = byName(spans, 'invoke_agent agent-otel').sort((a, b) => a.startMs - b.startMs);
  expect(turn1.attributes['gen_ai.operation.name']).toBe('invoke_agent');
  expect(turn1.parentSpanId).toBe('');
  expect(turn2.parentSpanId).toBe('');
  // seq: 1 SESSION_CREATE, 2 USER_INPUT, 3 TOOL_CALL, 4 TOOL_RESULT, 5 LLM_RESPONSE, 6 USER_INPUT, 7, 8, 9 LLM_RESPONSE, 10 SESSION_END
  expect(turn1.spanId).toBe(spanIdOf(sid, 2, 'invoke_agent'));
  expect([turn1.startMs, turn1.endMs]).toEqual([at(2), at(5)]);
  expect([turn2.startMs, turn2.endMs]).toEqual([at(6), at(9)]);
  expect(turn1.attributes['gen_ai.usage.input_tokens']).toBe(120);
  expect(turn1.attributes['gen_ai.request.model']).toBe('qwen2.5');

  const tool1 = byName(spans, 'execute_tool weather')[0];
  expect(tool1.parentSpanId).toBe(turn1.spanId);
  expect(tool1.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'weather', 'gen_ai.tool.call.id': 'call-1' });
  expect([tool1.startMs, tool1.endMs]).toEqual([at(3), at(4)]);
  expect(tool1.status.code).toBe(0);
  const tool2 = byName(spans, 'execute_tool forecast')[0];
  expect(tool2.parentSpanId).toBe(turn2.spanId);
  expect(tool2.status).toEqual({ code: 2, message: 'upstream timeout' });
  expect(tool2.attributes['error.type']).toBe('tool_error');

  const [chat1, chat2] = byName(spans, 'chat qwen2.5').sort((a, b) => a.startMs - b.startMs);
  expect(chat1.kind).toBe(3); // SPAN_KIND_CLIENT
  expect(chat1.parentSpanId).toBe(turn1.spanId);
  expect(chat2.parentSpanId).toBe(turn2.spanId);
  expect(chat1.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'qwen2.5', 'gen_ai.provider.name': 'openai', 'gen_ai.usage.input_tokens': 120, 'gen_ai.usage.output_tokens': 9 });
  // A model call starts when what it answers was recorded (the tool result) and ends with the response.
  expect([chat1.startMs, chat1.endMs]).toEqual([at(4), at(5)]);
  expect(new Set(spans.map((s) => s.spanId)).size).toBe(6);
  // The activity counts a batch once the collector has answered, just after the receiver saw it.
  await eventually(async () => ((await metrics.otelSpansExported.get()).values[0]?.value ?? 0) >= 6, SCRAPE);
});

test('intent transitions linked to a session are spans of the turn they happened in', async () => {
  const sid = `otel-i-${Date.now()}`;
  const tk = sys.tk;
  await tk.createSession({ session_id: sid, agent_id: 'agent-otel' });
  await tk.append(sid, { type: 'USER_INPUT', content: { input: 'send the report' } });
  const eventId = `REPORT-${Date.now()}`;
  await tk.intents.create({ event_id: eventId, domain: 'reporting', action: 'send-report', session_id: sid });
  await tk.intents.transition(eventId, { status: 'in-progress' });
  const linked = await eventually(async () => {
    const ev = (await tk.events(sid, { limit: 100 })).events.filter((e) => e.type === 'INTENT_TRANSITION');
    return ev.length === 2 && ev;
  }, SCRAPE);
  await tk.end(sid, { reason: 'done' });
  const spans = await eventually('the intent spans and the turn', () => spansOf(sid).length >= 3 && spansOf(sid), { ...SPANS, timeoutMs: 60_000 });
  const turn = byName(spans, 'invoke_agent agent-otel')[0];
  const requested = byName(spans, 'intent requested')[0];
  const progress = byName(spans, 'intent in-progress')[0];
  for (const s of [requested, progress]) {
    expect(s.parentSpanId).toBe(turn.spanId);
    expect(s.attributes['timekeeper.intent.id']).toBe(eventId);
  }
  expect(progress.attributes['timekeeper.intent.from']).toBe('requested');
  // in-progress spans the time the intent was requested: from the first transition to the second.
  expect([progress.startMs, progress.endMs]).toEqual([linked[0].ts, linked[1].ts]);
  // Temporal's own spans (interceptors): the activity that linked the transition to the session, and the worker client's update it sent.
  const temporal = await eventually('Temporal spans', () => {
    const t = rx.spans.filter((x) => x.scope === 'timekeeper.temporal');
    return t.some((x) => x.name === 'RunActivity:linkToSession') && t;
  }, { ...SPANS, timeoutMs: 30_000 });
  const link = temporal.find((x) => x.name === 'RunActivity:linkToSession')!;
  expect(link.resource['service.name']).toBe('timekeeper-test');
  expect(temporal.some((x) => x.name === 'StartWorkflowUpdate:append' && x.traceId === link.traceId && x.parentSpanId === link.spanId)).toBe(true);
  expect(temporal.some((x) => x.name === 'RunActivity:exportSessionTelemetry')).toBe(false);
});

test("an open session's turn goes out with its answer, not at the next turn, and only once", async () => {
  const sid = `otel-t-${Date.now()}`;
  const tk = sys.tk;
  await tk.createSession({ session_id: sid });
  await tk.append(sid, { type: 'USER_INPUT', content: { input: 'still there?' } });
  const answer = await tk.append(sid, { type: 'LLM_RESPONSE', content: { response: 'yes', model: 'm2' } });
  // No next USER_INPUT, no end: the answered turn is exported all the same.
  const spans = await eventually('the answered turn', () => spansOf(sid).length >= 2 && spansOf(sid), { ...SPANS, timeoutMs: 60_000 });
  expect(spans.map((s) => s.name).sort()).toEqual(['chat m2', 'invoke_agent']);
  const turn = byName(spans, 'invoke_agent')[0];
  expect(turn.spanId).toBe(spanIdOf(sid, 2, 'invoke_agent'));
  expect(turn.endMs).toBe(answer.ts);
  expect(turn.attributes['timekeeper.seq.last']).toBe(3);
  // The next turn (never answered) goes out with the end; the first is not sent again.
  await tk.append(sid, { type: 'USER_INPUT', content: { input: 'bye' } });
  await tk.end(sid, { reason: 'bye' });
  await eventually('the second turn', () => spansOf(sid).filter((s) => s.name === 'invoke_agent').length >= 2, { ...SPANS, timeoutMs: 60_000 });
  expect(spansOf(sid).filter((s) => s.spanId === turn.spanId)).toHaveLength(1);
  expect(spansOf(sid)).toHaveLength(3);
});

test("Temporal's workflow spans: the API's client span → RunWorkflow → StartActivity → RunActivity form one trace", async () => {
  const sid = `otel-w-${Date.now()}`;
  const tk = sys.tk;
  await tk.createSession({ session_id: sid, agent_id: 'agent-otel' });
  await tk.append(sid, { type: 'USER_INPUT', content: { input: 'hi' } });
  // The workflow's RunWorkflow span ends, and is sent, when the session's workflow completes.
  await tk.end(sid, { reason: 'bye' });
  const ofSession = () => rx.spans.filter((x) => x.scope === '@temporalio/interceptor-workflow' && x.attributes.workflowId === `session/${sid}`);
  const run = await eventually('RunWorkflow:sessionWorkflow', () => ofSession().find((x) => x.name === 'RunWorkflow:sessionWorkflow'), { ...SPANS, timeoutMs: 60_000 });
  expect(run.attributes).toMatchObject({ workflowType: 'sessionWorkflow', workflowId: `session/${sid}` });
  expect(run.resource['service.name']).toBe('timekeeper-test');
  expect(run.status.code).toBe(1); // SPAN_STATUS_CODE_OK: the interceptor marks a run that completed
  // Its parent is the API's client span that started the workflow (createSession is an update-with-start).
  const starter = await eventually('the client span', () => rx.spans.find((x) => x.spanId === run.parentSpanId), { ...SPANS, timeoutMs: 30_000 });
  expect(starter.name).toBe('UpdateWithStartWorkflow:created');
  expect(starter.scope).toBe('timekeeper.temporal');
  expect(starter.parentSpanId).toBe('');
  expect(starter.traceId).toBe(run.traceId);
  expect(run.startMs).toBeGreaterThanOrEqual(starter.startMs);
  // The workflow's appends (a local activity): StartActivity in the workflow, RunActivity in the worker, one trace.
  const trace = () => rx.spans.filter((x) => x.traceId === run.traceId);
  const runActivity = await eventually('RunActivity:appendEvents', () => trace().find((x) => x.name === 'RunActivity:appendEvents'), { ...SPANS, timeoutMs: 30_000 });
  const startActivity = trace().find((x) => x.spanId === runActivity.parentSpanId)!;
  expect(startActivity.name).toBe('StartActivity:appendEvents');
  expect(startActivity.scope).toBe('@temporalio/interceptor-workflow');
  const ids = new Set(trace().map((x) => x.spanId));
  // Every span of the trace but the client's has its parent in it: nothing dangles.
  for (const x of trace()) if (x !== starter) expect(ids.has(x.parentSpanId)).toBe(true);
  // The exporter workflow's own polls send no span.
  expect(rx.spans.some((x) => x.name === 'StartActivity:exportSessionTelemetry')).toBe(false);
});

test('a collector outage stalls the export; it resumes at its cursor and sends every span once', async () => {
  rx.down = true;
  const refusedBefore = rx.refused;
  const failuresBefore = (await metrics.otelExportFailures.get()).values[0]?.value ?? 0;
  const sid = `otel-o-${Date.now()}`;
  const tk = sys.tk;
  await tk.createSession({ session_id: sid });
  await tk.append(sid, { type: 'USER_INPUT', content: { input: 'hello' } });
  await tk.append(sid, { type: 'LLM_RESPONSE', content: { response: 'hi', model: 'm1' } });
  await tk.end(sid, { reason: 'bye' });
  // The appends were answered while the collector was down; the exporter is being refused.
  await eventually(async () => rx.refused > refusedBefore + 1, { ...SCRAPE, timeoutMs: 60_000 });
  expect(spansOf(sid)).toHaveLength(0);
  await eventually(async () => ((await metrics.otelExportFailures.get()).values[0]?.value ?? 0) > failuresBefore, SCRAPE);
  rx.down = false;
  const spans = await eventually('the spans after the outage', () => spansOf(sid).length >= 2 && spansOf(sid), { ...SPANS, timeoutMs: 60_000 });
  // A later session's span arrives only after every batch before it: by then a resend would have shown.
  const probe = `${sid}-later`;
  await tk.createSession({ session_id: probe });
  await tk.append(probe, { type: 'USER_INPUT', content: { input: 'later' } });
  await tk.end(probe, { reason: 'bye' });
  await eventually('the later session', () => spansOf(probe).length >= 1, { ...SPANS, timeoutMs: 60_000 });
  expect(spansOf(sid).map((s) => s.name).sort()).toEqual(['chat m1', 'invoke_agent']);
  expect(new Set(spansOf(sid).map((s) => s.spanId)).size).toBe(spans.length);
});

