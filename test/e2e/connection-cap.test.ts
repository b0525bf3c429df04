/**
 * The per-client connection cap of the API's listeners (api/listen.ts, issue 16: one client
 * held 2,000 idle sockets for ~70 s): a client holding more idle sockets than the cap has the
 * extra ones answered 503 and closed at once, while another client (another loopback address)
 * is still served; once the first client lets go, it is served again. The listeners also carry
 * the documented timeouts.
 */
import net from 'node:net';
import http from 'node:http';
import express from 'express';
import { listenApi, type ApiListeners } from '../../api/listen';
import { LIMITS } from '../../lib/domain/limits';
import { eventually } from '../support';

const CAP = 20;
let l: ApiListeners;
beforeAll(async () => {
  const app = express();
  app.get('/ping', (_req, res) => {
    res.json({ ok: true });
  });
  l = await listenApi(app, { host: '127.0.0.1', port: 0, omlPort: 0, connectionsPerClient: CAP });
});
afterAll(async () => {
  await l?.close();
});

/** An idle socket from `from`: connects and sends nothing. Resolves once connected, with what it hears and whether it was closed. */
function idleSocket(from: string): Promise<{ socket: net.Socket; heard: () => string; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    let heard = '';
    const socket = net.connect({ host: '127.0.0.1', port: l.port, localAddress: from });
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (heard += d));
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.once('error', () => undefined);
    socket.once('connect', () => resolve({ socket, heard: () => heard, closed }));
    socket.once('error', reject);
  });
}

/** One request on a fresh connection (no agent reuse) from `from`. */
function ping(from: string): Promise<{ status: number; retryAfter?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: l.port, path: '/ping', localAddress: from, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'], body }));
    });
    req.on('error', reject);
  });
}

test('a client over the cap gets 503 and its extra sockets closed at once; another client is still served', async () => {
  const held = await Promise.all(Array.from({ length: CAP + 30 }, () => idleSocket('127.0.0.1')));
  // The 30 over the cap are closed by the server without waiting for any timeout.
  const refused = held.slice(CAP);
  await Promise.all(refused.map((s) => s.closed));
  for (const s of refused) expect(s.heard()).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n[\s\S]*Retry-After: 1\r\n[\s\S]*HTTP_CONNECTIONS_PER_CLIENT_MAX/);
  const kept = held.slice(0, CAP);
  for (const s of kept) expect(s.socket.destroyed).toBe(false);

  // The capped client is refused a new connection; another address is served meanwhile.
  const again = await ping('127.0.0.1');
  expect([again.status, again.retryAfter]).toEqual([503, '1']);
  expect(JSON.parse(again.body)).toMatchObject({ status: 503, type: expect.stringMatching(/rate_limited$/) });
  expect((await ping('127.0.0.2')).status).toBe(200);

  // Once it lets go of its idle sockets, it is served again.
  for (const s of kept) s.socket.destroy();
  await Promise.all(kept.map((s) => s.closed));
  await eventually('served again after closing every socket', async () => (await ping('127.0.0.1')).status === 200, { timeoutMs: 2_000, stepMs: 20, errors: 'throw' });
});

test('the listener carries the documented timeouts', () => {
  const [server] = l.servers;
  expect({ headers: server.headersTimeout, request: server.requestTimeout, keepAlive: server.keepAliveTimeout }).toEqual({
    headers: LIMITS.httpHeadersTimeoutMs,
    request: LIMITS.httpRequestTimeoutMs,
    keepAlive: LIMITS.httpKeepAliveMs,
  });
  expect(LIMITS.httpRequestTimeoutMs).toBeLessThan(300_000); // Node's default
});
