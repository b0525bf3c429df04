/**
 * The OpenTelemetry export into a real Jaeger (v2, built from the Go module proxy:
 * `go get -tool github.com/jaegertracing/jaeger/cmd/jaeger@v1.76.0` in a scratch module, then
 * `go install tool`), when JAEGER_BIN names that binary: Jaeger receives the OTLP/HTTP export,
 * stores it in memory, and its query API answers the session's trace with the spans, their
 * parents and their GenAI attributes. Without JAEGER_BIN it is skipped (the build takes many
 * minutes; test/e2e/otel-export.test.ts covers the same export with the protobuf receiver).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../lib/temporal-server';
import { traceIdOf } from '../../lib/otel/session-spans';
import { eventually, startTestSystem, type TestSystem } from '../support';

const JAEGER = process.env.JAEGER_BIN;
const maybe = JAEGER ? describe : describe.skip;

jest.setTimeout(180_000);

interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: { refType: string; spanID: string }[];
  startTime: number;
  duration: number;
  tags: { key: string; value: unknown }[];
}

maybe('export into a real Jaeger', () => {
  let jaeger: ChildProcess;
  let sys: TestSystem;
  let queryUrl: string;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-jaeger-'));

  beforeAll(async () => {
    const [otlpPort, queryPort, grpcPort] = [await freePort(), await freePort(), await freePort()];
    const config = `
service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
extensions:
  jaeger_query:
    storage:
      traces: mem
    http:
      endpoint: 127.0.0.1:${queryPort}
    grpc:
      endpoint: 127.0.0.1:${grpcPort}
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${otlpPort}
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`;
    fs.writeFileSync(path.join(dir, 'jaeger.yaml'), config);
    jaeger = spawn(JAEGER!, ['--config', path.join(dir, 'jaeger.yaml')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    jaeger.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
    queryUrl = `http://127.0.0.1:${queryPort}`;
    await eventually(
      'jaeger up',
      async () => {
        if (jaeger.exitCode !== null) throw new Error(`jaeger exited: ${stderr}`);
        return fetch(`${queryUrl}/api/services`).then((r) => r.ok, () => false);
      },
      { timeoutMs: 60_000, errors: 'throw', detail: () => `jaeger did not come up: ${stderr}` },
    );
    sys = await startTestSystem({ config: { otelEndpoint: `http://127.0.0.1:${otlpPort}`, otelServiceName: 'timekeeper-jaeger', otelPollMs: 200, otelSettleMs: 100 } });
  });

  afterAll(async () => {
    await sys?.stop();
    if (jaeger && jaeger.exitCode === null) {
      jaeger.kill('SIGTERM');
      await once(jaeger, 'exit');
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test("a session is one Jaeger trace: the turn's chat and tool spans are its children, with the GenAI tags", async () => {
    const sid = `jaeger-${Date.now()}`;
    await sys.tk.createSession({ session_id: sid, agent_id: 'agent-j' });
    await sys.tk.append(sid, { type: 'USER_INPUT', content: { input: 'weather?' } });
    await sys.tk.append(sid, { type: 'TOOL_CALL', content: { tool_name: 'weather', tool_call_id: 'j1' } });
    await sys.tk.append(sid, { type: 'TOOL_RESULT', content: { tool_name: 'weather', tool_call_id: 'j1', ok: true } });
    await sys.tk.append(sid, { type: 'LLM_RESPONSE', content: { response: 'sunny', model: 'qwen2.5', usage: { input: 12, output: 3 } } });
    await sys.tk.end(sid, { reason: 'bye' });
    const events = (await sys.tk.events(sid, { limit: 100 })).events;
    const traceId = traceIdOf(sid);
    let spans: JaegerSpan[] = [];
    await eventually(
      `three spans of ${traceId} in Jaeger`,
      async () => {
        const r = await fetch(`${queryUrl}/api/traces/${traceId}`);
        if (r.ok) spans = ((await r.json()) as { data: { spans: JaegerSpan[] }[] }).data[0]?.spans ?? [];
        return spans.length >= 3;
      },
      { timeoutMs: 90_000, stepMs: 300, errors: 'throw', detail: () => `Jaeger has ${spans.length} spans of ${traceId}` },
    );
    const byName = (n: string) => spans.find((s) => s.operationName === n)!;
    const turn = byName('invoke_agent agent-j');
    const chat = byName('chat qwen2.5');
    const tool = byName('execute_tool weather');
    expect(turn.references).toEqual([]);
    for (const child of [chat, tool]) expect(child.references).toEqual([expect.objectContaining({ refType: 'CHILD_OF', spanID: turn.spanID })]);
    const tag = (s: JaegerSpan, k: string) => s.tags.find((t) => t.key === k)?.value;
    expect(tag(chat, 'gen_ai.operation.name')).toBe('chat');
    expect(tag(chat, 'gen_ai.usage.input_tokens')).toBe(12);
    expect(tag(tool, 'gen_ai.tool.name')).toBe('weather');
    expect(tag(turn, 'gen_ai.conversation.id')).toBe(sid);
    // Jaeger's times are microseconds: the tool span runs from TOOL_CALL's ts to TOOL_RESULT's.
    const at = (seq: number) => events.find((e) => e.seq === seq)!.ts * 1000;
    expect([tool.startTime, tool.startTime + tool.duration]).toEqual([at(3), at(4)]);
    // Temporal's own spans reach the same Jaeger under the same service (batched: within a few seconds).
    let operations: string[] = [];
    await eventually(
      'Temporal spans in Jaeger',
      async () => {
        const r = await fetch(`${queryUrl}/api/services/timekeeper-jaeger/operations`);
        if (r.ok) operations = ((await r.json()) as { data: string[] | null }).data ?? [];
        return operations.includes('RunActivity:appendEvents');
      },
      { timeoutMs: 60_000, stepMs: 500, errors: 'throw', detail: () => `operations: ${operations.join(', ')}` },
    );
  });
});
