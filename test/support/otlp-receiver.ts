/**
 * An OTLP/HTTP traces receiver for tests: POST /v1/traces with a protobuf
 * ExportTraceServiceRequest, decoded with the official OTLP protobuf definitions as the
 * OpenTelemetry JS SDK ships them compiled (@opentelemetry/otlp-transformer's generated root).
 * `down = true` makes it answer 503 and keep nothing, as a collector in an outage would.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const root = require('@opentelemetry/otlp-transformer/build/src/generated/root') as {
  opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: { decode(b: Uint8Array): unknown }; ExportTraceServiceResponse: { encode(m: object): { finish(): Uint8Array } } } } } } };
};
const v1 = root.opentelemetry.proto.collector.trace.v1;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, string | number | boolean>;
  status: { code: number; message: string };
  resource: Record<string, string | number | boolean>;
  scope: string;
}

type AnyValue = { stringValue?: string | null; intValue?: { toString(): string } | number | null; doubleValue?: number | null; boolValue?: boolean | null; arrayValue?: unknown; kvlistValue?: unknown };
type KeyValue = { key: string; value: AnyValue | null };
const hex = (b: Uint8Array | undefined) => (b && b.length ? Buffer.from(b).toString('hex') : '');
/** A scalar attribute's value; arrays and maps (Temporal's workflow spans carry the workflow info's objects) as their JSON. */
const value = (v: AnyValue | null): string | number | boolean => {
  if (!v) return '';
  if (v.stringValue != null) return v.stringValue;
  if (v.intValue != null) return Number(v.intValue.toString());
  if (v.doubleValue != null) return v.doubleValue;
  if (v.boolValue != null) return v.boolValue;
  if (v.arrayValue != null) return JSON.stringify(v.arrayValue);
  if (v.kvlistValue != null) return JSON.stringify(v.kvlistValue);
  return '';
};
const attrs = (kvs: KeyValue[] | undefined) => Object.fromEntries((kvs ?? []).map((kv) => [kv.key, value(kv.value)]));
/** Nanoseconds (a protobufjs Long) to milliseconds. */
const ms = (n: { toString(): string }) => Number(BigInt(n.toString()) / 1_000_000n);

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Requests answered 503 while down. */
  refused: number;
  down: boolean;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const r: OtlpReceiver = { url: '', spans: [], refused: 0, down: false, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || req.headers['content-type'] !== 'application/x-protobuf') {
        res.writeHead(404).end();
        return;
      }
      if (r.down) {
        r.refused++;
        res.writeHead(503, { 'retry-after': '0' }).end();
        return;
      }
      const msg = v1.ExportTraceServiceRequest.decode(Buffer.concat(chunks)) as {
        resourceSpans: { resource?: { attributes: KeyValue[] }; scopeSpans: { scope?: { name: string }; spans: Record<string, unknown>[] }[] }[];
      };
      for (const rs of msg.resourceSpans) {
        const resource = attrs(rs.resource?.attributes);
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) {
            r.spans.push({
              traceId: hex(s.traceId as Uint8Array),
              spanId: hex(s.spanId as Uint8Array),
              parentSpanId: hex(s.parentSpanId as Uint8Array),
              name: s.name as string,
              kind: s.kind as number,
              startMs: ms(s.startTimeUnixNano as { toString(): string }),
              endMs: ms(s.endTimeUnixNano as { toString(): string }),
              attributes: attrs(s.attributes as KeyValue[]),
              status: { code: ((s.status as { code?: number } | undefined)?.code ?? 0), message: ((s.status as { message?: string } | undefined)?.message ?? '') },
              resource,
              scope: ss.scope?.name ?? '',
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(Buffer.from(v1.ExportTraceServiceResponse.encode({}).finish()));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  r.close = () =>
    new Promise<void>((ok) => {
      server.close(() => ok());
      server.closeAllConnections();
    });
  return r;
}
