/**
 * WORKER_METRICS_PORT: a Prometheus scrape endpoint for a worker-only process (`npm run worker`).
 * The worker-side series (appends, intent transitions and wakes, task runs, firing lateness,
 * deliveries) are counted in the process whose activities do the work; without this listener
 * they would stay invisible when the API runs elsewhere. `npm start` and `npm run api` serve
 * the same registry at the API's own GET /metrics, so this is off (0) by default.
 *
 * A bare node:http server rather than Express: one read-only path, nothing else to route.
 * Behind the API's own key check (lib/platform/api-keys.ts; issue 16: under npm start this port was open to anything
 * on the host): with API keys configured a scrape needs a key with the `auditor` (or `admin`)
 * scope, exactly as the API's GET /metrics does; the API forwards its scraper's key when it
 * merges these series into its own answer.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DomainError } from '../lib/domain/errors';
import { registry } from '../lib/metrics';
import type { KeyStore } from '../lib/platform/api-keys';
import { problemBody } from '../lib/platform/problem';
import { Operation } from '../lib/platform/scopes';

export interface MetricsListener {
  port: number;
  close(): Promise<void>;
}

export async function listenWorkerMetrics(host: string, port: number, keys: KeyStore): Promise<MetricsListener> {
  const server = http.createServer((req, res) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not_found', message: 'only GET /metrics is served here' }));
      return;
    }
    try {
      keys.authorise(req.headers.authorization, Operation.Metrics);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      const status = err.code === 'unauthorized' ? 401 : 403;
      res.writeHead(status, { 'content-type': 'application/problem+json; charset=utf-8' }).end(JSON.stringify(problemBody(err, status, '/metrics')));
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (err: Error) => res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'metrics_unavailable', message: err.message })),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
