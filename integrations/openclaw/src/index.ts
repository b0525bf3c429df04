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
import { createDeliver } from './timekeeper';

/**
 * One recorder (one outbox) per process and outbox folder. OpenClaw may load the plugin more
 * than once in a process (a `full` load, then `discovery` loads whose registry becomes the
 * active hook registry in `openclaw agent --local`), so every load registers the hooks and
 * they all share this recorder, created on the first hook that fires.
 */
const recorders = new Map<string, TimekeeperRecorder>();
function recorderFor(config: TimekeeperPluginConfig, log: OutboxLogger): TimekeeperRecorder {
  let r = recorders.get(config.outboxDir);
  if (!r) {
    r = new TimekeeperRecorder(config, createDeliver({ url: config.url, apiKey: config.apiKey, timeoutMs: config.requestTimeoutMs }), log);
    r.outbox.start();
    recorders.set(config.outboxDir, r);
    log.info(`[timekeeper] recording to ${config.url} (outbox ${config.outboxDir}, redaction ${config.redaction})`);
  }
  return r;
}

export default definePluginEntry({
  id: 'timekeeper',
  name: 'Timekeeper',
  description: 'Records every OpenClaw session as a hash-chained Timekeeper timeline, through a durable outbox.',
  register(api) {
    const mode = api.registrationMode;
    if (process.env.TIMEKEEPER_PLUGIN_DEBUG) api.logger.info(`[timekeeper] register in mode ${mode}`);
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
