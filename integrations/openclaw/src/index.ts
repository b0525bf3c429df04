/**
 * The OpenClaw plugin entry: every OpenClaw session becomes a Timekeeper timeline.
 * Names and payload types come from openclaw's published package (2026.9.6):
 * `definePluginEntry` from openclaw/plugin-sdk/plugin-entry, `api.on(hookName, handler)` with
 * PluginHookHandlerMap's hook names, `api.registerService({id, start, stop})`,
 * `api.pluginConfig`, `api.logger`, `api.registrationMode`.
 */
import { definePluginEntry } from 'openclaw/plugin-sdk/plugin-entry';
import { parseConfig } from './config';
import { TimekeeperRecorder } from './recorder';
import { createDeliver } from './timekeeper';

export default definePluginEntry({
  id: 'timekeeper',
  name: 'Timekeeper',
  description: 'Records every OpenClaw session as a hash-chained Timekeeper timeline, through a durable outbox.',
  register(api) {
    // Only a real runtime load records; discovery and CLI-metadata loads register nothing.
    if (api.registrationMode !== 'full') return;
    const config = parseConfig(api.pluginConfig);
    const log = api.logger;
    const recorder = new TimekeeperRecorder(config, createDeliver({ url: config.url, apiKey: config.apiKey, timeoutMs: config.requestTimeoutMs }), log);
    // Deliveries start at once (a CLI run may have no service lifecycle) and the service stop drains them.
    recorder.outbox.start();
    const r = recorder;
    // Every handler only enqueues: it returns before any network I/O, and returns nothing (no policy decisions).
    api.on('session_start', (e, ctx) => r.sessionStart(e, ctx));
    api.on('message_received', (e, ctx) => r.messageReceived(e, ctx));
    api.on('llm_input', (e, ctx) => r.llmInput(e, ctx));
    api.on('llm_output', (e, ctx) => r.llmOutput(e, ctx));
    api.on('before_tool_call', (e, ctx) => {
      r.beforeToolCall(e, ctx);
    });
    api.on('after_tool_call', (e, ctx) => r.afterToolCall(e, ctx));
    api.on('session_end', (e, ctx) => r.sessionEnd(e, ctx));
    api.registerService({
      id: 'timekeeper-outbox',
      start: () => recorder.outbox.start(),
      stop: async () => {
        const drained = await recorder.outbox.flush(config.flushOnStopMs);
        recorder.outbox.close();
        if (!drained) log.warn(`[timekeeper] stopping with events still in the outbox (${recorder.outbox.journalPath}); they are sent on the next start`);
      },
    });
    log.info(`[timekeeper] recording to ${config.url} (outbox ${config.outboxDir}, redaction ${config.redaction})`);
  },
});
