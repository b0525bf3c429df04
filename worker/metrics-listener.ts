/**
 * WORKER_METRICS_PORT: a Prometheus scrape endpoint for a worker-only process (`npm run worker`).
 * The worker-side series (appends, intent transitions and wakes, task runs, firing lateness,
 * deliveries) are counted in the process whose activities do the work; without this listener
 * they would stay invisible when the API runs elsewhere. `npm start` and `npm run api` serve
 * the same registry at the API's own GET /metrics, so this is off (0) by default.
 *
 * A bare node:http server rather than Express: one read-only path, no auth (bind it to a
 * private interface, as the API's HOST rules do for open mode), nothing else to route.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { registry } from '../lib/metrics';

export interface MetricsListener {
  port: number;
  close(): Promise<void>;
}

export async function listenWorkerMetrics(host: string, port: number): Promise<MetricsListener> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not_found', message: 'only GET /metrics is served here' }));
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
