/**
 * The worker child's /metrics port (worker/metrics-listener.ts) is behind the API's key check
 * (issue 16: under npm start it answered anything on the host): with keys configured, no key
 * or a wrong one is 401 and a key without the metrics scope 403; an auditor key is served,
 * and the API's merge forwards its scraper's key, so the merged /metrics keeps the child's series.
 */
import { loadKeyStore } from '../../api/auth';
import { mergeWorkerMetrics } from '../../api/system/worker-metrics';
import { metrics } from '../../lib/metrics';
import { listenWorkerMetrics, type MetricsListener } from '../../worker/metrics-listener';

const AUDITOR = 'auditor-key-123';
const AGENT = 'agent-key-12345';
let open: MetricsListener;
let guarded: MetricsListener;
beforeAll(async () => {
  guarded = await listenWorkerMetrics('127.0.0.1', 0, loadKeyStore(`${AUDITOR}:auditor,${AGENT}:agent`));
  open = await listenWorkerMetrics('127.0.0.1', 0, loadKeyStore());
  metrics.intentWakes.inc({ outcome: 'off' });
});
afterAll(async () => {
  await Promise.all([open?.close(), guarded?.close()]);
});

const scrape = (m: MetricsListener, key?: string) => fetch(`http://127.0.0.1:${m.port}/metrics`, { headers: key ? { authorization: `Bearer ${key}` } : {} });

test('with keys configured: no key or an unknown one is 401, a key without the metrics scope 403, and nothing is exposed', async () => {
  for (const [key, status] of [[undefined, 401], ['not-a-real-key-00', 401], [AGENT, 403]] as const) {
    const r = await scrape(guarded, key);
    const text = await r.text();
    expect({ key, status: r.status }).toEqual({ key, status });
    expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(text).not.toContain('timekeeper_');
  }
});

test('an auditor key is served the series', async () => {
  const r = await scrape(guarded, AUDITOR);
  expect(r.status).toBe(200);
  expect(await r.text()).toContain('timekeeper_intent_wakes_total');
});

test("without keys (open mode, loopback only) it stays open, as the API's own /metrics", async () => {
  expect((await scrape(open)).status).toBe(200);
});

test("the API's merge forwards the scraper's key: with it the child's series come along, without it only the API's part", async () => {
  const url = `http://127.0.0.1:${guarded.port}/metrics`;
  const own = '# HELP x_total x\n# TYPE x_total counter\nx_total 1\n';
  expect(await mergeWorkerMetrics(url, own, `Bearer ${AUDITOR}`)).toContain('timekeeper_intent_wakes_total');
  expect(await mergeWorkerMetrics(url, own)).toBe(own);
});
