/** npm start's /metrics: the worker child's exposition merged into the API's, each family once, from where it is observed. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { familiesWithSamples, mergeWorkerMetrics, withoutFamilies } from '../../api/system/worker-metrics';

const block = (name: string, type: string, samples: string[]) => [`# HELP ${name} help`, `# TYPE ${name} ${type}`, ...samples].join('\n');
const childText = [
  block('process_resident_memory_bytes', 'gauge', ['process_resident_memory_bytes 123']),
  block('timekeeper_events_appended_total', 'counter', ['timekeeper_events_appended_total{type="USER_INPUT"} 3']),
  block('timekeeper_http_requests_total', 'counter', []),
  '',
].join('\n');
const apiText = [
  block('process_resident_memory_bytes', 'gauge', ['process_resident_memory_bytes 456']),
  block('timekeeper_events_appended_total', 'counter', []),
  block('timekeeper_http_requests_total', 'counter', ['timekeeper_http_requests_total{method="GET",route="/metrics",status="200"} 1']),
  '',
].join('\n');

test('familiesWithSamples: the families with a sample line, histograms by their family name', () => {
  const histogram = block('timekeeper_append_batch_seconds', 'histogram', ['timekeeper_append_batch_seconds_bucket{le="0.1"} 1', 'timekeeper_append_batch_seconds_sum 0.05', 'timekeeper_append_batch_seconds_count 1']);
  expect([...familiesWithSamples(`${apiText}${histogram}\n`)].sort()).toEqual(['process_resident_memory_bytes', 'timekeeper_append_batch_seconds', 'timekeeper_http_requests_total']);
});

test('withoutFamilies drops whole blocks and nothing else', () => {
  expect(withoutFamilies(childText, new Set(['process_resident_memory_bytes', 'timekeeper_http_requests_total']))).toBe(
    `${block('timekeeper_events_appended_total', 'counter', ['timekeeper_events_appended_total{type="USER_INPUT"} 3'])}\n`,
  );
  expect(withoutFamilies(childText, new Set(['process_resident_memory_bytes', 'timekeeper_events_appended_total', 'timekeeper_http_requests_total']))).toBe('');
});

describe('mergeWorkerMetrics', () => {
  let server: http.Server;
  let url: string;
  beforeAll(async () => {
    server = http.createServer((_req, res) => res.end(childText));
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
  });
  afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

  test('each family once: observed here from here, observed in the child from the child', async () => {
    const merged = await mergeWorkerMetrics(url, apiText);
    for (const name of ['process_resident_memory_bytes', 'timekeeper_events_appended_total', 'timekeeper_http_requests_total']) {
      expect(merged.match(new RegExp(`^# TYPE ${name} `, 'gm'))).toHaveLength(1);
    }
    expect(merged).toContain('process_resident_memory_bytes 456');
    expect(merged).not.toContain('process_resident_memory_bytes 123');
    expect(merged).toContain('timekeeper_events_appended_total{type="USER_INPUT"} 3');
    expect(merged).toContain('timekeeper_http_requests_total{method="GET",route="/metrics",status="200"} 1');
  });

  test('a child that does not answer (restarting): this process\'s part alone', async () => {
    expect(await mergeWorkerMetrics('http://127.0.0.1:1/metrics', apiText)).toBe(apiText);
  });
});
