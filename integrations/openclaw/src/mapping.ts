/**
 * OpenClaw hook payloads → Timekeeper outbox items. Pure: no I/O, no clock (the recorder
 * hands in `at`, the time the hook fired, which becomes the event's occurred_at).
 *
 * The payload types below are the subset of OpenClaw 2026.9.6's own hook types that the
 * mapping reads, copied field for field from `openclaw/dist/hook-runner-global-*.d.ts`
 * (PluginHookSessionStartEvent, PluginHookSessionEndEvent, PluginHookSessionContext,
 * PluginHookMessageReceivedEvent, PluginHookMessageContext, PluginHookLlmInputEvent,
 * PluginHookLlmOutputEvent, PluginHookAgentContext, PluginHookBeforeToolCallEvent,
 * PluginHookAfterToolCallEvent, PluginHookToolContext). They are kept structural here so the
 * root test suite can exercise the mapping without the 650 MB openclaw install; src/index.ts
 * passes OpenClaw's real types in, which the plugin's own `tsc` checks against the package.
 */
import { createHash } from 'node:crypto';
import type { Redaction } from './config';

export interface SessionStartEvent { sessionId: string; sessionKey?: string; resumedFrom?: string }
export interface SessionEndEvent { sessionId: string; sessionKey?: string; messageCount: number; durationMs?: number; reason?: string; nextSessionId?: string }
export interface SessionContext { agentId?: string; sessionId: string; sessionKey?: string }
export interface MessageReceivedEvent { from: string; content: string; timestamp?: number; messageId?: string; senderId?: string; sessionKey?: string; runId?: string }
export interface MessageContext { channelId: string; accountId?: string; conversationId?: string; sessionKey?: string; runId?: string; messageId?: string; senderId?: string }
export interface LlmInputEvent { runId: string; sessionId: string; provider: string; model: string; prompt: string }
export interface LlmOutputEvent {
  runId: string;
  sessionId: string;
  provider: string;
  model: string;
  assistantTexts: string[];
  usage?: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number; total?: number };
}
export interface AgentContext { runId?: string; agentId?: string; sessionKey?: string; sessionId?: string; channel?: string; channelId?: string; messageProvider?: string; trigger?: string }
export interface BeforeToolCallEvent { toolName: string; params: Record<string, unknown>; runId?: string; toolCallId?: string }
export interface AfterToolCallEvent { toolName: string; params: Record<string, unknown>; runId?: string; toolCallId?: string; result?: unknown; error?: string; durationMs?: number }
export interface ToolContext { agentId?: string; sessionKey?: string; sessionId?: string; runId?: string; toolName: string; toolCallId?: string; channelId?: string }

export type EventType = 'USER_INPUT' | 'LLM_RESPONSE' | 'TOOL_CALL' | 'TOOL_RESULT';

/** One unit of work for the outbox: what to send to which Timekeeper session. */
export type OutboxItem =
  | { op: 'create'; session: string; body: { session_id: string; agent_id?: string; channel?: string; metadata?: Record<string, unknown>; occurred_at?: string } }
  | { op: 'append'; session: string; body: { type: EventType; content: unknown; idempotency_key: string; occurred_at?: string } }
  | { op: 'end'; session: string; body: { reason: string; idempotency_key: string; occurred_at?: string } };

/** The hook's time as Timekeeper's occurred_at (RFC 3339, UTC); none when the caller gave no time. */
const occurred = (at: number | undefined): { occurred_at?: string } => (at === undefined ? {} : { occurred_at: new Date(at).toISOString() });

const SESSION_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const KEY_MAX = 200;

/** The Timekeeper session id of an OpenClaw sessionId: the prefix, then the id (hashed when it would not be a valid id). */
export function timelineId(prefix: string, sessionId: string): string {
  const id = prefix + sessionId;
  if (SESSION_ID_RE.test(id)) return id;
  return `${prefix || 'oc-'}${sha256(sessionId).slice(0, 40)}`;
}

export function sha256(s: string): string {
  return createHash('sha256').update(s, 'utf8').digest('hex');
}

/** An idempotency key from OpenClaw ids: printable ASCII, at most 200 characters (hashed past that). */
export function idempotencyKey(...parts: (string | number)[]): string {
  const k = ['oc', ...parts.map(String)].join(':').replace(/[^\x21-\x7e]/g, '_');
  return k.length <= KEY_MAX ? k : `oc:h:${sha256(k)}`;
}

/** A body under the configured redaction: as it is, `{sha256}` of its JSON, or `{redacted: true}`. */
export function redact(value: unknown, mode: Redaction): unknown {
  if (mode === 'none' || value === undefined) return value;
  if (mode === 'drop') return { redacted: true };
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'undefined');
  return { sha256: sha256(text) };
}

const clip = (s: string | undefined, n: number) => (s === undefined || s === '' ? undefined : s.length > n ? s.slice(0, n) : s);
const defined = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

export class HookMapper {
  /**
   * `generation` names the current timeline of an OpenClaw sessionId when it has had more than
   * one: OpenClaw's `sessions.reset` resets a session in place (session_end, then session_start
   * with the same sessionId), and an ended Timekeeper timeline takes no more events.
   */
  constructor(private readonly opts: { prefix: string; redaction: Redaction; generation?: (sessionId: string) => string | undefined }) {}

  /** The Timekeeper session id that events of this OpenClaw sessionId go to now. */
  timeline(sessionId: string): string {
    const g = this.opts.generation?.(sessionId);
    return timelineId(this.opts.prefix, g ? `${sessionId}:${g}` : sessionId);
  }

  private sid(sessionId: string) {
    return this.timeline(sessionId);
  }

  sessionStart(e: SessionStartEvent, ctx: SessionContext, channel?: string, at?: number): OutboxItem {
    const session = this.sid(e.sessionId);
    const metadata = defined({ source: 'openclaw', openclaw_session_id: e.sessionId, session_key: e.sessionKey, resumed_from: e.resumedFrom });
    return { op: 'create', session, body: defined({ session_id: session, agent_id: clip(ctx.agentId, 128), channel: clip(channel, 64), metadata, ...occurred(at) }) };
  }

  /** A create for a session first seen through another hook (plugin installed mid-session, or session_start not emitted on this path). */
  implicitCreate(sessionId: string, agentId?: string, channel?: string): OutboxItem {
    const session = this.sid(sessionId);
    return { op: 'create', session, body: defined({ session_id: session, agent_id: clip(agentId, 128), channel: clip(channel, 64), metadata: { source: 'openclaw', openclaw_session_id: sessionId } }) };
  }

  /** message_received → USER_INPUT, keyed by the run id (so llm_input's fallback for the same run is the same key), else the message id. */
  messageReceived(sessionId: string, e: MessageReceivedEvent, ctx: MessageContext, at?: number): OutboxItem {
    const runId = e.runId ?? ctx.runId;
    const messageId = e.messageId ?? ctx.messageId;
    const key = runId ? idempotencyKey('user', runId) : messageId ? idempotencyKey('msg', ctx.channelId, messageId) : idempotencyKey('msg', sha256(`${sessionId}\n${e.timestamp ?? ''}\n${e.content}`));
    const content = defined({ input: redact(e.content, this.opts.redaction), from: e.from, channel: ctx.channelId, message_id: messageId, run_id: runId, sender_id: e.senderId ?? ctx.senderId, timestamp: e.timestamp });
    return { op: 'append', session: this.sid(sessionId), body: { type: 'USER_INPUT', content, idempotency_key: key, ...occurred(at) } };
  }

  /** llm_input → USER_INPUT for runs no message_received announced (CLI and cron runs): the run's prompt. */
  llmInput(e: LlmInputEvent, ctx: AgentContext, at?: number): OutboxItem {
    const content = defined({ input: redact(e.prompt, this.opts.redaction), channel: ctx.channel ?? ctx.messageProvider, run_id: e.runId, trigger: ctx.trigger });
    return { op: 'append', session: this.sid(e.sessionId), body: { type: 'USER_INPUT', content, idempotency_key: idempotencyKey('user', e.runId), ...occurred(at) } };
  }

  /** llm_output → LLM_RESPONSE; `attempt` numbers the outputs of one run (OpenClaw emits one per attempt). */
  llmOutput(e: LlmOutputEvent, attempt: number, at?: number): OutboxItem {
    const content = defined({ response: redact(e.assistantTexts.join('\n'), this.opts.redaction), provider: e.provider, model: e.model, run_id: e.runId, usage: e.usage });
    return { op: 'append', session: this.sid(e.sessionId), body: { type: 'LLM_RESPONSE', content, idempotency_key: idempotencyKey('llm', e.runId, attempt), ...occurred(at) } };
  }

  beforeToolCall(sessionId: string, e: BeforeToolCallEvent, ctx: ToolContext, fallbackSeq: number, at?: number): OutboxItem {
    const callId = e.toolCallId ?? ctx.toolCallId;
    const runId = e.runId ?? ctx.runId;
    const key = callId ? idempotencyKey('tool', callId, 'call') : idempotencyKey('tool', runId ?? 'norun', e.toolName, fallbackSeq, 'call');
    const content = defined({ tool_name: e.toolName, params: redact(e.params, this.opts.redaction), tool_call_id: callId, run_id: runId });
    return { op: 'append', session: this.sid(sessionId), body: { type: 'TOOL_CALL', content, idempotency_key: key, ...occurred(at) } };
  }

  afterToolCall(sessionId: string, e: AfterToolCallEvent, ctx: ToolContext, fallbackSeq: number, at?: number): OutboxItem {
    const callId = e.toolCallId ?? ctx.toolCallId;
    const runId = e.runId ?? ctx.runId;
    const key = callId ? idempotencyKey('tool', callId, 'result') : idempotencyKey('tool', runId ?? 'norun', e.toolName, fallbackSeq, 'result');
    const content = defined({
      tool_name: e.toolName,
      result: redact(e.result === undefined ? null : e.result, this.opts.redaction),
      error: e.error,
      ok: e.error === undefined,
      duration_ms: e.durationMs,
      tool_call_id: callId,
      run_id: runId,
    });
    return { op: 'append', session: this.sid(sessionId), body: { type: 'TOOL_RESULT', content, idempotency_key: key, ...occurred(at) } };
  }

  /** session_end → end with OpenClaw's reason (PluginHookSessionEndReason), `unknown` when it gave none. */
  sessionEnd(e: SessionEndEvent, at?: number): OutboxItem {
    const reason = `openclaw:${e.reason ?? 'unknown'}`;
    return { op: 'end', session: this.sid(e.sessionId), body: { reason, idempotency_key: idempotencyKey('end', e.sessionId), ...occurred(at) } };
  }
}
