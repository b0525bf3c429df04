/**
 * Every 503 to a write says `may_be_stored` (issue 16), on every write route of every surface
 * (seed, /v1 sessions, intents, tasks, runs, signals), generated from the route contracts and
 * their documented examples: an API whose PostgreSQL is unreachable (its pool points at a port
 * nothing listens on) and whose task queue has no worker answers each write 503, and each
 * answer says whether the write may be stored.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../api/app';
import { loadKeyStore } from '../../api/auth';
import { routes } from '../../api/routes';
import { createPool } from '../../lib/db';
import { freePort } from '../../lib/temporal-server';
import { startTestSystem, TestSystem, testEnv } from '../support';

let sys: TestSystem;
let base: string;
let server: http.Server;
let deadPool: ReturnType<typeof createPool>;
beforeAll(async () => {
  // The operator's settings the createTask example needs (docs/api.md): its local LLM allowed, its key registered.
  sys = await startTestSystem({ worker: false, config: { writeTimeoutMs: 1_000, outboundAllowHosts: ['127.0.0.1'], agentSecrets: ['LLM_API_KEY'] } });
  const url = new URL(testEnv().appUrl);
  url.host = `127.0.0.1:${await freePort()}`;
  deadPool = createPool(url.toString(), { max: 2, connectionTimeoutMillis: 500 });
  const app = createApp({ client: sys.client, pool: deadPool, config: sys.config, keys: loadKeyStore() });
  server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => {
    server?.close(() => r());
    server?.closeAllConnections();
  });
  await deadPool?.end().catch(() => undefined);
  await sys?.stop();
});

/** A write route's documented request: path parameters filled in, the rest of the examples as the query, the example body. */
const writes = Object.entries(routes)
  .filter(([, c]) => c.method !== 'get')
  .map(([name, c]) => {
    const examples: Record<string, string | number> = { eventId: 'EMAIL-20231027-001', ...('parameterExamples' in c ? c.parameterExamples : {}) };
    const query = new URLSearchParams();
    const path = c.path.replace(/:([A-Za-z_]+)/g, (_m, p: string) => encodeURIComponent(String(examples[p] ?? 'x')));
    const inPath = new Set([...c.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]));
    for (const [k, v] of Object.entries(examples)) if (!inPath.has(k) && k !== 'eventId') query.set(k, String(v));
    return { name, method: c.method.toUpperCase(), url: `${path}${query.size ? `?${query}` : ''}`, body: 'example' in c ? c.example : undefined };
  });

test.each(writes)('$method $url ($name): a 503 says may_be_stored', async ({ method, url, body }) => {
  const r = await fetch(base + url, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const problem = (await r.json()) as { may_be_stored?: unknown; detail?: string };
  expect({ status: r.status, detail: problem.detail }).toEqual({ status: 503, detail: expect.any(String) });
  expect(typeof problem.may_be_stored).toBe('boolean');
  expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
});
