/**
 * A session's committed events → OpenTelemetry spans in the GenAI semantic conventions
 * (semconv gen-ai: `invoke_agent`, `chat`, `execute_tool`), plus Timekeeper's own intent
 * transitions and task runs. Pure (no I/O, no clock): the exporter activity hands it a
 * session's events in seq order and the seq from which spans are due, and gets span specs
 * with ids derived from the data, so exporting the same events twice yields the same spans
 * (a collector that sees a span id again is seeing a resend, not a new span).
 *
 * A session is one trace (trace id from the session id). A turn (`invoke_agent`, one agent
 * invocation) runs from a USER_INPUT to the agent's answer: the first LLM_RESPONSE with no tool
 * call of the turn still open, and is emitted with that event, so an open session's last turn
 * is exported as soon as it is answered, not at the next turn. A turn that never gets such an
 * answer (the agent failed, the user moved on) ends with its last event before the next
 * USER_INPUT or SESSION_END, and is emitted with that closing event. Whether a turn is answered
 * is decided from its own events alone (a batch always sees the turn from its USER_INPUT), so
 * every batch, after any restart, reaches the same decision and emits each turn once: the
 * exporter's cursor passes the emitting event exactly once. Events after the answer and before
 * the next USER_INPUT (a client that records more) stay children of the answered turn, whose
 * span is not sent again. The turn's `chat` (LLM_RESPONSE, from the event before it),
 * `execute_tool` (TOOL_CALL → its TOOL_RESULT), intent and task run spans are its children
 * and go out as soon as their closing event is committed. Times are the event's
 * `occurred_at` when it carries one (when it happened), else `ts` (when it was committed).
 */
import { createHash } from 'node:crypto';
import type { TelemetryEvent, TelemetrySession } from '../store/telemetry';

export type { TelemetryEvent, TelemetrySession };

export type SpanKindName = 'internal' | 'client';
export type AttributeValue = string | number | boolean;

/** A finished span, in OTLP's terms but with no SDK types (lib/otel/exporter.ts converts it). */
export interface SpanSpec {
  name: string;
  kind: SpanKindName;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  startMs: number;
  endMs: number;
  attributes: Record<string, AttributeValue>;
  error?: string;
}

/** The GenAI attribute names this module writes (semconv gen-ai, Development status). */
export const GenAi = {
  operation: 'gen_ai.operation.name',
  conversation: 'gen_ai.conversation.id',
  agentName: 'gen_ai.agent.name',
  agentId: 'gen_ai.agent.id',
  provider: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
} as const;

const hex = (s: string, chars: number) => createHash('sha256').update(s, 'utf8').digest('hex').slice(0, chars);
/** 16 bytes from the session id: one trace per session, the same on every export. */
export const traceIdOf = (sessionId: string): string => hex(`timekeeper/trace/${sessionId}`, 32);
/** 8 bytes from the session, the seq of the event that names the span, and the span's role. */
export const spanIdOf = (sessionId: string, seq: number, role: string): string => hex(`timekeeper/span/${sessionId}/${seq}/${role}`, 16);

/** When an event happened: occurred_at when it carries one, else its commit time. */
export const eventTime = (e: TelemetryEvent): number => (typeof e.occurred_at === 'number' && Number.isFinite(e.occurred_at) ? e.occurred_at : e.ts);

const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const isoMs = (v: unknown): number | undefined => {
  const t = typeof v === 'string' ? Date.parse(v) : NaN;
  return Number.isFinite(t) ? t : undefined;
};

/** Token counts in the shapes agents report them: OpenClaw's {input, output}, OpenAI's {prompt_tokens, completion_tokens}, {input_tokens, output_tokens}. */
function usageOf(content: Record<string, unknown>): { input?: number; output?: number } {
  const u = obj(content.usage);
  return { input: num(u.input) ?? num(u.input_tokens) ?? num(u.prompt_tokens), output: num(u.output) ?? num(u.output_tokens) ?? num(u.completion_tokens) };
}

interface Turn {
  input: TelemetryEvent;
  spanId: string;
  last: TelemetryEvent;
  inputTokens: number;
  outputTokens: number;
  models: Set<string>;
  /** Answered (emitted with its answering LLM_RESPONSE): the next USER_INPUT or SESSION_END emits nothing for it. */
  answered?: boolean;
}

/**
 * The spans whose closing event has seq ≥ `fromSeq`. `events` are one session's events in seq
 * order, starting early enough to hold what those spans open with (the exporter starts at the
 * turn's USER_INPUT); earlier events only give context.
 */
export function sessionSpans(session: TelemetrySession, events: readonly TelemetryEvent[], fromSeq: number): SpanSpec[] {
  const traceId = traceIdOf(session.session_id);
  const common: Record<string, AttributeValue> = { [GenAi.conversation]: session.session_id, 'session.id': session.session_id };
  if (session.agent_id) Object.assign(common, { [GenAi.agentName]: session.agent_id, [GenAi.agentId]: session.agent_id });
  if (session.channel) common['timekeeper.channel'] = session.channel;
  const out: SpanSpec[] = [];
  const emit = (closing: TelemetryEvent, s: Omit<SpanSpec, 'traceId' | 'attributes' | 'endMs'> & { attributes: Record<string, AttributeValue>; endMs?: number }) => {
    if (closing.seq < fromSeq) return;
    const endMs = Math.max(s.startMs, s.endMs ?? eventTime(closing));
    out.push({ ...s, traceId, endMs, attributes: { ...common, ...s.attributes } });
  };

  let turn: Turn | undefined;
  const closeTurn = (closing: TelemetryEvent) => {
    if (!turn || turn.answered) return;
    const t = turn;
    const attributes: Record<string, AttributeValue> = {
      [GenAi.operation]: 'invoke_agent',
      'timekeeper.seq.first': t.input.seq,
      'timekeeper.seq.last': t.last.seq,
      'timekeeper.event_id': t.input.event_id,
    };
    if (t.inputTokens > 0) attributes[GenAi.inputTokens] = t.inputTokens;
    if (t.outputTokens > 0) attributes[GenAi.outputTokens] = t.outputTokens;
    if (t.models.size === 1) attributes[GenAi.requestModel] = [...t.models][0];
    const ch = str(obj(t.input.content).channel);
    if (ch && !session.channel) attributes['timekeeper.channel'] = ch;
    emit(closing, { name: session.agent_id ? `invoke_agent ${session.agent_id}` : 'invoke_agent', kind: 'internal', spanId: t.spanId, startMs: eventTime(t.input), endMs: eventTime(t.last), attributes });
    t.answered = true;
  };

  const pendingTools: TelemetryEvent[] = [];
  /** The open TOOL_CALL a result answers: same tool_call_id, else the latest with the same tool_name, else the latest. */
  const takeCall = (result: Record<string, unknown>): TelemetryEvent | undefined => {
    const id = str(result.tool_call_id);
    const name = str(result.tool_name);
    let i = id ? pendingTools.findIndex((c) => str(obj(c.content).tool_call_id) === id) : -1;
    if (i < 0 && name) i = pendingTools.map((c) => str(obj(c.content).tool_name)).lastIndexOf(name);
    if (i < 0 && !id) i = pendingTools.length - 1;
    return i < 0 ? undefined : pendingTools.splice(i, 1)[0];
  };

  /** The latest INTENT_TRANSITION in view per intent. */
  const intentSeen = new Map<string, TelemetryEvent>();
  let previous: TelemetryEvent | undefined;
  for (const e of events) {
    const c = obj(e.content);
    const parent = turn?.spanId;
    switch (e.event_type) {
      case 'USER_INPUT':
        closeTurn(e);
        turn = { input: e, spanId: spanIdOf(e.session_id, e.seq, 'invoke_agent'), last: e, inputTokens: 0, outputTokens: 0, models: new Set() };
        pendingTools.length = 0;
        break;
      case 'SESSION_END':
        closeTurn(e);
        break;
      case 'LLM_RESPONSE': {
        const model = str(c.model);
        const usage = usageOf(c);
        const attributes: Record<string, AttributeValue> = { [GenAi.operation]: 'chat', 'timekeeper.seq.first': previous?.seq ?? e.seq, 'timekeeper.seq.last': e.seq, 'timekeeper.event_id': e.event_id };
        if (model) attributes[GenAi.requestModel] = model;
        if (str(c.provider)) attributes[GenAi.provider] = str(c.provider)!;
        if (usage.input !== undefined) attributes[GenAi.inputTokens] = usage.input;
        if (usage.output !== undefined) attributes[GenAi.outputTokens] = usage.output;
        // The model call began when what it answers was recorded: the event before it.
        emit(e, { name: model ? `chat ${model}` : 'chat', kind: 'client', spanId: spanIdOf(e.session_id, e.seq, 'chat'), parentSpanId: parent, startMs: previous ? eventTime(previous) : eventTime(e), attributes });
        if (turn && !turn.answered) {
          turn.inputTokens += usage.input ?? 0;
          turn.outputTokens += usage.output ?? 0;
          if (model) turn.models.add(model);
          // The agent's answer: no tool call of the turn left open. The turn ends here and goes out with this event.
          if (pendingTools.length === 0) {
            turn.last = e;
            closeTurn(e);
          }
        }
        break;
      }
      case 'TOOL_CALL':
        pendingTools.push(e);
        break;
      case 'TOOL_RESULT': {
        const call = takeCall(c);
        const name = str(c.tool_name) ?? str(obj(call?.content).tool_name);
        const callId = str(c.tool_call_id) ?? str(obj(call?.content).tool_call_id);
        const attributes: Record<string, AttributeValue> = { [GenAi.operation]: 'execute_tool', [GenAi.toolType]: 'function', 'timekeeper.seq.first': call?.seq ?? e.seq, 'timekeeper.seq.last': e.seq, 'timekeeper.event_id': e.event_id };
        if (name) attributes[GenAi.toolName] = name;
        if (callId) attributes[GenAi.toolCallId] = callId;
        const failed = c.ok === false || str(c.error) !== undefined;
        if (failed) attributes['error.type'] = 'tool_error';
        emit(e, { name: name ? `execute_tool ${name}` : 'execute_tool', kind: 'internal', spanId: spanIdOf(e.session_id, e.seq, 'execute_tool'), parentSpanId: parent, startMs: eventTime(call ?? e), attributes, error: failed ? (str(c.error) ?? 'tool failed') : undefined });
        break;
      }
      case 'INTENT_TRANSITION': {
        // The time the intent spent in `from`: since its previous transition in this session, when that is in view.
        const before = intentSeen.get(String(c.event_id));
        intentSeen.set(String(c.event_id), e);
        const attributes: Record<string, AttributeValue> = { 'timekeeper.operation': 'intent_transition', 'timekeeper.intent.id': str(c.event_id) ?? '', 'timekeeper.intent.to': str(c.to) ?? '', 'timekeeper.event_id': e.event_id };
        if (str(c.from)) attributes['timekeeper.intent.from'] = str(c.from)!;
        if (str(c.action)) attributes['timekeeper.intent.action'] = str(c.action)!;
        if (str(c.actor)) attributes['timekeeper.intent.actor'] = str(c.actor)!;
        emit(e, { name: `intent ${str(c.to) ?? 'transition'}`, kind: 'internal', spanId: spanIdOf(e.session_id, e.seq, 'intent'), parentSpanId: parent, startMs: before ? eventTime(before) : eventTime(e), attributes, error: c.to === 'blocked' ? 'blocked' : undefined });
        break;
      }
      case 'TASK_RUN': {
        const started = isoMs(c.started_at) ?? eventTime(e);
        const finished = isoMs(c.finished_at) ?? eventTime(e);
        const status = str(c.status) ?? 'unknown';
        const attributes: Record<string, AttributeValue> = { 'timekeeper.operation': 'task_run', 'timekeeper.task.id': str(c.task_id) ?? '', 'timekeeper.run.id': str(c.run_id) ?? '', 'timekeeper.run.status': status, 'timekeeper.event_id': e.event_id };
        if (num(c.attempt) !== undefined) attributes['timekeeper.run.attempt'] = num(c.attempt)!;
        if (str(c.scheduled_at)) attributes['timekeeper.run.scheduled_at'] = str(c.scheduled_at)!;
        const label = str(c.task_name) ?? str(c.task_id) ?? 'task';
        emit(e, { name: `task_run ${label}`, kind: 'internal', spanId: spanIdOf(e.session_id, e.seq, 'task_run'), parentSpanId: parent, startMs: started, endMs: finished, attributes, error: status === 'failed' ? (str(c.summary) ?? 'failed') : undefined });
        break;
      }
      default:
        break;
    }
    if (turn && !turn.answered && e.event_type !== 'USER_INPUT' && e.event_type !== 'SESSION_END') turn.last = e;
    previous = e;
  }
  return out;
}
