/**
 * The OpenClaw plugin entry: every OpenClaw session becomes a Timekeeper timeline.
 * Names and payload types come from openclaw's published package (2026.9.6):
 * `definePluginEntry` from openclaw/plugin-sdk/plugin-entry, `api.on(hookName, handler)` with
 * PluginHookHandlerMap's hook names, `api.registerService({id, start, stop})`,
 * `api.pluginConfig`, `api.logger`, `api.registrationMode`.
 */
import { definePluginEntry } from 'openclaw/plugin-sdk/plugin-entry';
import { parseConfig, type TimekeeperPluginConfig } from './config';
import type { OutboxLogger } from './outbox';
import { TimekeeperRecorder } from './recorder';
import { registerStatusCli } from './status-cli';
import { createDeliver } from './timekeeper';

/**
 * One recorder (one outbox) per process and outbox folder. OpenClaw may load the plugin more
 * than once in a process (a `full` load, then `discovery` loads whose registry becomes the
 * active hook registry in `openclaw agent --local`), and the Gateway may evaluate this module
 * more than once, so every load registers the hooks and they all share one recorder, kept on
 * `globalThis` (a module-level map would give each evaluation its own outbox writing the same
 * journal), created on the first hook that fires.
 */
const REGISTRY = Symbol.for('timekeeper.openclaw.recorders');
const recorders: Map<string, TimekeeperRecorder> = ((globalThis as Record<symbol, unknown>)[REGISTRY] as Map<string, TimekeeperRecorder> | undefined) ??
  ((globalThis as Record<symbol, unknown>)[REGISTRY] = new Map<string, TimekeeperRecorder>());

function recorderFor(config: TimekeeperPluginConfig, log: OutboxLogger): TimekeeperRecorder {
  let r = recorders.get(config.outboxDir);
  if (!r) {
    r = new TimekeeperRecorder(config, createDeliver({ url: config.url, apiKey: config.apiKey, timeoutMs: config.requestTimeoutMs }), log);
    r.outbox.start();
    recorders.set(config.outboxDir, r);
    log.info(`[timekeeper] recording to ${config.url} (outbox ${config.outboxDir}, redaction ${config.redaction})`);
    // A CLI run (`openclaw agent --local`) never stops the service: when its event loop runs
    // dry, give the outbox one bounded chance to drain. What is left stays in the journal.
    const rec = r;
    process.once('beforeExit', () => {
      void rec.outbox.flush(config.flushOnAgentEndMs);
    });
    // Whichever way the process ends (the CLI may call process.exit): say what stays behind,
    // and where, instead of exiting silently with a backlog. Synchronous, as 'exit' requires.
    process.once('exit', () => {
      if (rec.outbox.closed) return; // the service's stop has reported already
      rec.outbox.flushStatus();
      if (rec.outbox.pending > 0) log.warn(exitLine(config, rec.outbox.pending, rec.outbox.journalPath, rec.outbox.lastFailure));
    });
  }
  return r;
}

/** The line a process exiting with undelivered events logs. */
export function exitLine(config: Pick<TimekeeperPluginConfig, 'url'>, pending: number, journal: string, lastFailure: string | null): string {
  return (
    `[timekeeper] exiting with ${pending} event(s) not yet delivered to ${config.url}${lastFailure ? ` (last error: ${lastFailure})` : ''}; ` +
    `they are kept in ${journal} and sent, with their original times, when OpenClaw next loads the plugin (the next \`openclaw agent\` run or Gateway start)`
  );
}

export default definePluginEntry({
  id: 'timekeeper',
  name: 'Timekeeper',
  description: 'Records every OpenClaw session as a hash-chained Timekeeper timeline, through a durable outbox.',
  register(api) {
    const mode = api.registrationMode;
    // `openclaw timekeeper status`: its descriptor for the CLI's parse (cli-metadata), and the
    // command itself, which the CLI takes from the `discovery` load that runs it (2026.9.6).
    if (mode === 'cli-metadata' || mode === 'discovery' || mode === 'full') {
      api.registerCli(({ program }) => registerStatusCli(program, api.pluginConfig), {
        descriptors: [{ name: 'timekeeper', description: 'Timekeeper plugin: outbox status', hasSubcommands: true }],
      });
    }
    // Loads without a live runtime (CLI metadata, setup) and tool-only loads record nothing.
    if (mode !== 'full' && mode !== 'discovery') return;
    const config = parseConfig(api.pluginConfig);
    const log = api.logger;
    const r = () => recorderFor(config, log);
    // Every handler only enqueues (one journal line) and returns before any network I/O;
    // none returns a decision, so recording never changes what the agent does.
    api.on('session_start', (e, ctx) => r().sessionStart(e, ctx));
    api.on('message_received', (e, ctx) => r().messageReceived(e, ctx));
    api.on('llm_input', (e, ctx) => r().llmInput(e, ctx));
    api.on('llm_output', (e, ctx) => r().llmOutput(e, ctx));
    api.on('before_tool_call', (e, ctx) => {
      r().beforeToolCall(e, ctx);
    });
    api.on('after_tool_call', (e, ctx) => r().afterToolCall(e, ctx));
    api.on('session_end', (e, ctx) => r().sessionEnd(e, ctx));
    // The end of an agent run: wait (bounded by flushOnAgentEndMs) for the outbox to deliver
    // what the run recorded. Runners that await agent_end (CLI backends) then exit with the
    // timeline up to date; the embedded runner does not await it, and the Gateway keeps
    // delivering anyway. Never throws, never blocks past the limit.
    api.on('agent_end', async () => {
      const rec = recorders.get(config.outboxDir);
      if (rec && config.flushOnAgentEndMs > 0) await rec.outbox.flush(config.flushOnAgentEndMs);
    });
    if (mode !== 'full') return;
    api.registerService({
      id: 'timekeeper-outbox',
      start: () => {
        r();
      },
      stop: async () => {
        const rec = recorders.get(config.outboxDir);
        if (!rec) return;
        const drained = await rec.outbox.flush(config.flushOnStopMs);
        rec.outbox.close();
        recorders.delete(config.outboxDir);
        if (!drained) log.warn(`[timekeeper] stopping with events still in the outbox (${rec.outbox.journalPath}); they are sent on the next start`);
      },
    });
  },
});
