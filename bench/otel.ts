/**
 * `npm run bench:otel`: what the OpenTelemetry export costs and how fast it is, on private rigs
 * (own Temporal dev server and embedded PostgreSQL, test/support/fault-rig.ts; the worker a
 * child process), with a stand-in OTLP/HTTP receiver that decodes every request
 * (test/support/otlp-receiver.ts).
 *
 *   1. appends with export off: --sessions sessions × --turns turns of 4 events (USER_INPUT,
 *      TOOL_CALL, TOOL_RESULT, LLM_RESPONSE) and the end, --concurrency sessions at once;
 *   2. the same on a second rig with OTEL_EXPORTER_OTLP_ENDPOINT set (poll --poll-ms, default 200; settle 200 ms):
 *      append latency beside phase 1's, then the export lag (last append answered → last span
 *      received) and spans/s;
 *   3. the floor: the same number of spans, built in memory, sent by the SDK's exporter to the
 *      same receiver in batches of the exporter's size (no database, no workflow).
 *
 *   npm run bench:otel -- --sessions 20 --turns 5 --concurrency 10 [--poll-ms 5000] [--on-first]
 */
import { performance } from 'node:perf_hooks';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { createSpanExporter, exportSpans, otelResource, toReadableSpan } from '../lib/otel/exporter';
import { sessionSpans, traceIdOf, type TelemetryEvent } from '../lib/otel/session-spans';
import { LIMITS } from '../lib/domain/limits';
import { startFaultRig, type FaultRig } from '../test/support/fault-rig';
import { startOtlpReceiver, type OtlpReceiver } from '../test/support/otlp-receiver';
import { LATENCY_HEADER, Series, f1, latencyRow, runPool, timed } from './measure';

const { values } = parseArgs({
  options: { sessions: { type: 'string', default: '20' }, turns: { type: 'string', default: '5' }, concurrency: { type: 'string', default: '10' }, 'poll-ms': { type: 'string', default: '200' }, 'on-first': { type: 'boolean', default: false } },
});
const POLL_MS = values['poll-ms'];
const SESSIONS = Number(values.sessions);
const TURNS = Number(values.turns);
const CONCURRENCY = Number(values.concurrency);
const log = (m: string) => console.log(m);
const load = () => os.loadavg()[0].toFixed(1);

async function appendAll(rig: FaultRig, prefix: string): Promise<{ series: Series; wallMs: number; ids: string[] }> {
  const series = new Series();
  const ids = Array.from({ length: SESSIONS }, (_, i) => `${prefix}-${i}`);
  const wallMs = await runPool(SESSIONS, CONCURRENCY, async (i) => {
    const sid = ids[i];
    await rig.tk.createSession({ session_id: sid, agent_id: 'bench-agent' });
    for (let t = 0; t < TURNS; t++) {
      const call = `c-${t}`;
      await timed(series, 'append', () => rig.tk.append(sid, { type: 'USER_INPUT', content: { input: `question ${t}` } }));
      await timed(series, 'append', () => rig.tk.append(sid, { type: 'TOOL_CALL', content: { tool_name: 'lookup', tool_call_id: call } }));
      await timed(series, 'append', () => rig.tk.append(sid, { type: 'TOOL_RESULT', content: { tool_name: 'lookup', tool_call_id: call, ok: true } }));
      await timed(series, 'append', () => rig.tk.append(sid, { type: 'LLM_RESPONSE', content: { response: `answer ${t}`, model: 'bench-model', usage: { input: 100, output: 20 } } }));
    }
    await rig.tk.end(sid, { reason: 'bench' });
  });
  return { series, wallMs, ids };
}

/** Per session: TURNS invoke_agent, TURNS chat, TURNS execute_tool. */
const expectedSpans = () => SESSIONS * TURNS * 3;

async function floor(rx: OtlpReceiver): Promise<number> {
  // The same spans the exporter would send, from synthetic events, sent by the same SDK exporter.
  const settings = { endpoint: rx.url, serviceName: 'bench-floor' };
  const exporter = createSpanExporter(settings);
  const resource = otelResource(settings);
  const spans = [];
  for (let s = 0; s < SESSIONS; s++) {
    const sid = `floor-${s}`;
    let seq = 0;
    const ev = (event_type: string, content: unknown = {}): TelemetryEvent => ({ session_id: sid, seq: ++seq, event_id: `${sid}-${seq}`, event_type, ts: Date.now() + seq, content });
    const events = [ev('SESSION_CREATE')];
    for (let t = 0; t < TURNS; t++) events.push(ev('USER_INPUT'), ev('TOOL_CALL', { tool_name: 'lookup', tool_call_id: `c-${t}` }), ev('TOOL_RESULT', { tool_name: 'lookup', tool_call_id: `c-${t}` }), ev('LLM_RESPONSE', { model: 'bench-model' }));
    events.push(ev('SESSION_END'));
    spans.push(...sessionSpans({ session_id: sid, agent_id: 'bench-agent', channel: null }, events, 1).map((x) => toReadableSpan(x, resource)));
  }
  // One request per batch the exporter activity would send (LIMITS.otelExportBatchEvents events ≈ 3/4 as many spans).
  const perBatch = Math.max(1, Math.floor((LIMITS.otelExportBatchEvents * 3) / 4));
  const t0 = performance.now();
  for (let i = 0; i < spans.length; i += perBatch) await exportSpans(exporter, spans.slice(i, i + perBatch));
  const ms = performance.now() - t0;
  await exporter.shutdown();
  return ms;
}

async function main(): Promise<void> {
  log(`bench:otel  sessions ${SESSIONS} × turns ${TURNS} (4 events each) + create + end, concurrency ${CONCURRENCY}, export poll ${POLL_MS} ms${values['on-first'] ? ', export on first' : ''}; load ${load()} at start`);
  const rx = await startOtlpReceiver();
  const results: string[] = [LATENCY_HEADER];
  try {
    // 1. export off (after phase 2 with --on-first, to see how much the order, i.e. the machine's drift, moves the figures)
    const offPhase = async () => {
      const off = await startFaultRig({ log: () => undefined });
      try {
        await off.startWorker();
        const a = await appendAll(off, 'off');
        results.push(latencyRow('off', a.series, a.wallMs) + `   (load ${load()})`);
      } finally {
        await off.stop();
      }
    };
    if (!values['on-first']) await offPhase();
    // 2. export on
    const on = await startFaultRig({ log: () => undefined, workerEnv: { OTEL_EXPORTER_OTLP_ENDPOINT: rx.url, TIMEKEEPER_OTEL_POLL_MS: POLL_MS, TIMEKEEPER_OTEL_SETTLE_MS: '200', OTEL_SERVICE_NAME: 'bench' } });
    let lagMs = NaN;
    let sessionSpanCount = 0;
    try {
      await on.startWorker();
      const t0 = performance.now();
      const b = await appendAll(on, 'on');
      results.push(latencyRow('on', b.series, b.wallMs) + `   (load ${load()})`);
      const done = performance.now();
      const traces = new Set(b.ids.map(traceIdOf));
      const mine = () => rx.spans.filter((s) => traces.has(s.traceId) && s.scope === 'timekeeper.sessions').length;
      const deadline = Date.now() + 300_000;
      while (mine() < expectedSpans() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      lagMs = performance.now() - done;
      sessionSpanCount = mine();
      results.push(`  export: ${sessionSpanCount}/${expectedSpans()} session spans; last one ${f1(lagMs)} ms after the last append was answered; ${f1((sessionSpanCount * 1000) / (performance.now() - t0))} spans/s over the whole phase`);
    } finally {
      await on.stop();
    }
    if (values['on-first']) await offPhase();
    // 3. floor
    const floorMs = await floor(rx);
    results.push(`  floor: the SDK exporter alone sends ${expectedSpans()} spans to the same receiver in ${f1(floorMs)} ms (${f1((expectedSpans() * 1000) / floorMs)} spans/s); load ${load()} at the end`);
  } finally {
    await rx.close();
  }
  for (const r of results) log(r);
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
