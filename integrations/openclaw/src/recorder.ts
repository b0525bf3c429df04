/**
 * The hook handlers, free of OpenClaw imports: each maps its payload (src/mapping.ts) and
 * enqueues into the outbox, synchronously, and returns. Nothing here waits for the network.
 * Each event is stamped with the time its hook fired (Timekeeper's occurred_at), so events
 * the outbox delivers late keep when they happened.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { RecordableHook, TimekeeperPluginConfig } from './config';
import * as m from './mapping';
import { Outbox, type Deliver, type OutboxLogger } from './outbox';

export class TimekeeperRecorder {
  readonly outbox: Outbox;
  private readonly map: m.HookMapper;
  /** OpenClaw sessionKey → sessionId, learned from hooks that carry both (message hooks carry only the key). */
  private readonly keyToSession = new Map<string, string>();
  /** message_received events whose sessionId is not known yet, by sessionKey. */
  private readonly waiting = new Map<string, m.OutboxItem[]>();
  private readonly created = new Set<string>();
  private readonly userRecorded = new Set<string>();
  private readonly llmAttempts = new Map<string, number>();
  private readonly toolSeq = new Map<string, number>();
  private readonly runChannel = new Map<string, string>();
  /** OpenClaw sessionId → suffix of its current timeline, for sessions reset in place; kept in `<outboxDir>/timelines.json` across restarts. */
  private readonly generations: Map<string, string>;
  private readonly generationsFile: string;

  constructor(
    readonly config: TimekeeperPluginConfig,
    deliver: Deliver,
    private readonly log: OutboxLogger,
  ) {
    this.generationsFile = path.join(config.outboxDir, 'timelines.json');
    this.generations = loadGenerations(this.generationsFile, log);
    this.map = new m.HookMapper({ prefix: config.sessionPrefix, redaction: config.redaction, generation: (id) => this.generations.get(id) });
    this.outbox = new Outbox({ dir: config.outboxDir, deliver, maxPending: config.maxPending, retryBaseMs: config.retryBaseMs, retryMaxMs: config.retryMaxMs, fsync: config.fsync, logger: log });
  }

  private on(hook: RecordableHook) {
    return this.config.hooks.has(hook);
  }

  private learn(sessionKey: string | undefined, sessionId: string | undefined) {
    if (!sessionKey || !sessionId) return;
    if (this.keyToSession.size > 10000) this.keyToSession.clear();
    this.keyToSession.set(sessionKey, sessionId);
    const held = this.waiting.get(sessionKey);
    if (held) {
      this.waiting.delete(sessionKey);
      this.ensureCreated(sessionId);
      for (const it of held) this.put({ ...it, session: this.map.timeline(sessionId) } as m.OutboxItem);
    }
  }

  private ensureCreated(sessionId: string, agentId?: string, channel?: string) {
    const tl = this.map.timeline(sessionId);
    if (this.created.has(tl) || !this.on('session_start')) return;
    this.created.add(tl);
    this.outbox.enqueue(this.map.implicitCreate(sessionId, agentId, channel));
  }

  private put(item: m.OutboxItem) {
    this.outbox.enqueue(item);
  }

  /** Handlers never throw into OpenClaw: a bug here is logged, the agent goes on. */
  private guard<A extends unknown[]>(name: string, f: (...a: A) => void): (...a: A) => void {
    return (...a: A) => {
      if (this.config.debug) this.log.info(`[timekeeper] hook ${name} ${JSON.stringify(a).slice(0, 300)}`);
      try {
        f(...a);
      } catch (err) {
        this.log.error(`[timekeeper] ${name} handler failed: ${(err as Error).stack ?? String(err)}`);
      }
    };
  }

  readonly sessionStart = this.guard('session_start', (e: m.SessionStartEvent, ctx: m.SessionContext) => {
    this.learn(e.sessionKey ?? ctx.sessionKey, e.sessionId);
    const tl = this.map.timeline(e.sessionId);
    if (!this.on('session_start') || this.created.has(tl)) return;
    this.created.add(tl);
    this.put(this.map.sessionStart(e, ctx, channelOfKey(e.sessionKey ?? ctx.sessionKey), Date.now()));
  });

  readonly messageReceived = this.guard('message_received', (e: m.MessageReceivedEvent, ctx: m.MessageContext) => {
    if (!this.on('message_received')) return;
    const runId = e.runId ?? ctx.runId;
    if (runId) {
      this.userRecorded.add(runId);
      this.runChannel.set(runId, ctx.channelId);
    }
    const key = e.sessionKey ?? ctx.sessionKey;
    const sessionId = key ? this.keyToSession.get(key) : undefined;
    if (sessionId) {
      this.ensureCreated(sessionId, undefined, ctx.channelId);
      this.put(this.map.messageReceived(sessionId, e, ctx, Date.now()));
      return;
    }
    if (!key) return this.log.warn('[timekeeper] message_received without a sessionKey: not recorded');
    // Held until a hook tells which sessionId this key belongs to (llm_input does, before the model runs).
    const held = this.waiting.get(key) ?? [];
    if (held.length < 100) held.push(this.map.messageReceived('pending', e, ctx, Date.now()));
    this.waiting.set(key, held);
  });

  readonly llmInput = this.guard('llm_input', (e: m.LlmInputEvent, ctx: m.AgentContext) => {
    this.learn(ctx.sessionKey, e.sessionId);
    if (!this.on('llm_input') || this.userRecorded.has(e.runId)) return;
    this.userRecorded.add(e.runId);
    this.ensureCreated(e.sessionId, ctx.agentId, ctx.channel ?? ctx.messageProvider);
    this.put(this.map.llmInput(e, ctx, Date.now()));
  });

  readonly llmOutput = this.guard('llm_output', (e: m.LlmOutputEvent, ctx: m.AgentContext) => {
    this.learn(ctx.sessionKey, e.sessionId);
    if (!this.on('llm_output')) return;
    const n = (this.llmAttempts.get(e.runId) ?? 0) + 1;
    this.llmAttempts.set(e.runId, n);
    this.ensureCreated(e.sessionId, ctx.agentId, ctx.channel ?? ctx.messageProvider);
    this.put(this.map.llmOutput(e, n, Date.now()));
  });

  private toolSession(ctx: m.ToolContext): string | undefined {
    const sid = ctx.sessionId ?? (ctx.sessionKey ? this.keyToSession.get(ctx.sessionKey) : undefined);
    if (!sid) this.log.warn(`[timekeeper] ${ctx.toolName} tool hook without a sessionId: not recorded`);
    return sid;
  }

  private seq(ctx: m.ToolContext, e: { runId?: string; toolName: string }, bump: boolean) {
    const k = `${e.runId ?? ctx.runId}:${e.toolName}`;
    const n = (this.toolSeq.get(k) ?? 0) + (bump ? 1 : 0);
    this.toolSeq.set(k, n);
    return n;
  }

  readonly beforeToolCall = this.guard('before_tool_call', (e: m.BeforeToolCallEvent, ctx: m.ToolContext) => {
    this.learn(ctx.sessionKey, ctx.sessionId);
    if (!this.on('before_tool_call')) return;
    const sid = this.toolSession(ctx);
    if (!sid) return;
    this.ensureCreated(sid, ctx.agentId, ctx.channelId);
    this.put(this.map.beforeToolCall(sid, e, ctx, this.seq(ctx, e, true), Date.now()));
  });

  readonly afterToolCall = this.guard('after_tool_call', (e: m.AfterToolCallEvent, ctx: m.ToolContext) => {
    if (!this.on('after_tool_call')) return;
    const sid = this.toolSession(ctx);
    if (!sid) return;
    this.ensureCreated(sid, ctx.agentId, ctx.channelId);
    this.put(this.map.afterToolCall(sid, e, ctx, this.seq(ctx, e, false), Date.now()));
  });

  readonly sessionEnd = this.guard('session_end', (e: m.SessionEndEvent, _ctx: m.SessionContext) => {
    if (this.on('session_end')) this.put(this.map.sessionEnd(e, Date.now()));
    // An ended timeline takes no more events, but OpenClaw may go on with the same sessionId:
    // sessions.reset resets in place (nextSessionId = sessionId), and a Gateway shutdown or
    // restart ends every active session (reason shutdown/restart) that the next Gateway resumes.
    // Whatever follows goes to a new timeline.
    {
      if (this.generations.size > 10000) this.generations.delete(this.generations.keys().next().value!);
      this.generations.set(e.sessionId, `r${Date.now().toString(36)}`);
      saveGenerations(this.generationsFile, this.generations, this.log);
    }
  });
}

/** The channel a session key names (`agent:<agentId>:<channel>:…`), when it has that shape. */
export function channelOfKey(key: string | undefined): string | undefined {
  const parts = key?.split(':');
  return parts && parts.length >= 3 && parts[0] === 'agent' && parts[2] !== 'main' ? parts[2] : undefined;
}

function loadGenerations(file: string, log: OutboxLogger): Map<string, string> {
  try {
    const o = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    return new Map(Object.entries(o).filter((kv): kv is [string, string] => typeof kv[1] === 'string'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') log.warn(`[timekeeper] could not read ${file}: ${(err as Error).message}`);
    return new Map();
  }
}

function saveGenerations(file: string, g: Map<string, string>, log: OutboxLogger): void {
  try {
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(Object.fromEntries(g)) + '\n');
    fs.renameSync(`${file}.tmp`, file);
  } catch (err) {
    log.warn(`[timekeeper] could not write ${file}: ${(err as Error).message}`);
  }
}
