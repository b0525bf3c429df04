/**
 * The API's listeners: the main port and, with OML_PORT, a second port serving the same app,
 * so an agent configured for the OML Event Log (port 3847 there) needs no change. Used by
 * bin/run.ts; a function of its own so that tests can start and stop exactly what production does.
 *
 * Each port bounds what one client can hold (docs/operations.md, "HTTP limits"): at most
 * HTTP_CONNECTIONS_PER_CLIENT_MAX open connections per remote address, the request's headers
 * within 66 s and the whole request within 90 s (Node's default is 300 s), idle keep-alive
 * connections closed after 65 s.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { LIMITS, TUNABLE } from '../lib/domain/limits';

export interface ApiListeners {
  /** The main port as bound (the real one when 0 was asked for). */
  port: number;
  /** The OML-compatible port as bound, or undefined when OML_PORT is 0 (off). */
  omlPort: number | undefined;
  /** The servers as bound (main first): their timeouts are what docs/operations.md lists. */
  readonly servers: http.Server[];
  /** Stops accepting, closes idle keep-alive connections, and resolves once both servers are closed. */
  close(): Promise<void>;
}

/** What an over-cap connection hears before it is closed: a plain 503 with Retry-After (no request needs to be read for it). */
const OVER_CAP =
  'HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\nContent-Type: application/problem+json\r\n' +
  'X-Content-Type-Options: nosniff\r\nContent-Length: LEN\r\n\r\nBODY';
function overCapAnswer(max: number): string {
  const body = JSON.stringify({
    type: 'https://timekeeper.dev/problems/rate_limited',
    title: 'Too many connections',
    status: 503,
    detail: `this client already holds ${max} open connections to this port (HTTP_CONNECTIONS_PER_CLIENT_MAX); close idle ones or reuse them`,
  });
  return OVER_CAP.replace('LEN', String(Buffer.byteLength(body))).replace('BODY', body);
}

/**
 * At most `max` open connections per remote address: one more is answered 503 and closed at
 * once, before the HTTP parser sees anything, so a client holding thousands of idle sockets
 * costs one file descriptor per socket for a moment, and other clients are served meanwhile.
 */
export function capConnectionsPerClient(server: http.Server, max: number): void {
  const open = new Map<string, number>();
  const answer = overCapAnswer(max);
  // Before http's own listener: a refused socket never gets to a request handler.
  server.prependListener('connection', (socket: Socket) => {
    const who = socket.remoteAddress ?? 'unknown';
    const n = (open.get(who) ?? 0) + 1;
    if (n > max) {
      socket.on('error', () => undefined);
      socket.end(answer, () => socket.destroy());
      return;
    }
    open.set(who, n);
    socket.once('close', () => {
      const left = (open.get(who) ?? 1) - 1;
      if (left > 0) open.set(who, left);
      else open.delete(who);
    });
  });
}

async function listen(app: http.RequestListener, port: number, host: string, connectionsPerClient: number): Promise<http.Server> {
  const server = http.createServer({ requestTimeout: LIMITS.httpRequestTimeoutMs, headersTimeout: LIMITS.httpHeadersTimeoutMs }, app);
  // Longer than the usual load-balancer idle timeout (60 s), so the balancer closes first
  // and never sends a request into a socket we are closing.
  server.keepAliveTimeout = LIMITS.httpKeepAliveMs;
  capConnectionsPerClient(server, connectionsPerClient);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, LIMITS.httpListenBacklog, resolve);
  });
  return server;
}

const closeServer = (s: http.Server) =>
  new Promise<void>((resolve) => {
    s.close(() => resolve());
    s.closeIdleConnections();
  });

/** Binds the main port, then (omlPort > 0) the OML port; if the second fails, the first is closed again. */
export async function listenApi(
  app: http.RequestListener,
  opts: { host: string; port: number; omlPort: number; connectionsPerClient?: number },
): Promise<ApiListeners> {
  const cap = opts.connectionsPerClient ?? TUNABLE.connectionsPerClientMax.default;
  const main = await listen(app, opts.port, opts.host, cap);
  let oml: http.Server | undefined;
  if (opts.omlPort > 0) {
    try {
      oml = await listen(app, opts.omlPort, opts.host, cap);
    } catch (err) {
      await closeServer(main);
      throw err;
    }
  }
  return {
    port: (main.address() as AddressInfo).port,
    omlPort: oml ? (oml.address() as AddressInfo).port : undefined,
    servers: [main, ...(oml ? [oml] : [])],
    close: async () => {
      await Promise.all([main, oml].filter((s): s is http.Server => !!s).map(closeServer));
    },
  };
}
