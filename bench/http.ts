/**
 * The benches' HTTP transport: fetch over node:http with one keep-alive agent, so connection
 * set-up is not part of the latencies (see bench/timeline.ts for why not the global fetch).
 */
import http from 'node:http';
import type { TimekeeperClientOptions } from '../sdk/client';

type Fetch = NonNullable<TimekeeperClientOptions['fetch']>;

/** fetch over node:http with one keep-alive agent of at most `maxSockets` connections. */
export function keepAliveFetch(maxSockets: number, timeoutMs: number): { fetch: Fetch; close(): void } {
  // An agent-level timeout makes Node honour the server's "Keep-Alive: timeout=5" hint and close
  // an idle socket a second before the server does; without it a request can be written to a
  // socket the server is just closing and fail with ECONNRESET (seen between the phases).
  const agent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets, timeout: timeoutMs });
  const fetch: Fetch = (url, init) =>
    new Promise((resolve, reject) => {
      const req = http.request(url, { method: init.method, headers: init.headers as Record<string, string>, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const headers = new Headers();
          for (let i = 0; i < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
          const status = res.statusCode ?? 0;
          resolve(new Response([101, 204, 205, 304].includes(status) ? null : Buffer.concat(chunks), { status, headers }));
        });
        res.on('error', reject);
      });
      // The agent's idle timer must not run while a request is in flight (a slow append would be
      // cut off); the agent sets it again when the socket goes back to the pool. The client's
      // timeoutMs is the per-request wall-clock deadline, through the signal.
      req.on('socket', (sock) => sock.setTimeout(0));
      const signal = init.signal;
      if (signal?.aborted) req.destroy(signal.reason as Error);
      else signal?.addEventListener('abort', () => req.destroy(signal.reason as Error), { once: true });
      req.on('error', reject);
      req.end(init.body as string | undefined);
    });
  return { fetch, close: () => agent.destroy() };
}
