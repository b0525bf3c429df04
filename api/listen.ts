/**
 * The API's listeners: the main port and, with OML_PORT, a second port serving the same app,
 * so an agent configured for the OML Event Log (port 3847 there) needs no change. Used by
 * bin/run.ts; a function of its own so that tests can start and stop exactly what production does.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { LIMITS } from '../lib/domain/limits';

export interface ApiListeners {
  /** The main port as bound (the real one when 0 was asked for). */
  port: number;
  /** The OML-compatible port as bound, or undefined when OML_PORT is 0 (off). */
  omlPort: number | undefined;
  /** Stops accepting, closes idle keep-alive connections, and resolves once both servers are closed. */
  close(): Promise<void>;
}

async function listen(app: http.RequestListener, port: number, host: string): Promise<http.Server> {
  const server = http.createServer(app);
  // Longer than the usual load-balancer idle timeout (60 s), so the balancer closes first
  // and never sends a request into a socket we are closing.
  server.keepAliveTimeout = LIMITS.httpKeepAliveMs;
  server.headersTimeout = LIMITS.httpHeadersTimeoutMs;
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
export async function listenApi(app: http.RequestListener, opts: { host: string; port: number; omlPort: number }): Promise<ApiListeners> {
  const main = await listen(app, opts.port, opts.host);
  let oml: http.Server | undefined;
  if (opts.omlPort > 0) {
    try {
      oml = await listen(app, opts.omlPort, opts.host);
    } catch (err) {
      await closeServer(main);
      throw err;
    }
  }
  return {
    port: (main.address() as AddressInfo).port,
    omlPort: oml ? (oml.address() as AddressInfo).port : undefined,
    close: async () => {
      await Promise.all([main, oml].filter((s): s is http.Server => !!s).map(closeServer));
    },
  };
}
