/**
 * The SSRF guard on real connections (lib/platform/outbound.ts outboundRequest): a local server on
 * 127.0.0.1 stands in for an internal service, and every spelling of its address, a name
 * resolving to it, and a redirect to it must leave it without a single connection. The
 * redirecting server listens on 127.0.0.2, the only host the guard is told to allow.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { OutboundRefused, outboundRequest } from '../../lib/platform/outbound';

interface Victim {
  port: number;
  connections: number;
  requests: number;
  close(): Promise<void>;
}

async function listen(host: string, handler: http.RequestListener): Promise<Victim> {
  const v = { port: 0, connections: 0, requests: 0 } as Victim;
  const server = http.createServer((req, res) => {
    v.requests++;
    handler(req, res);
  });
  server.on('connection', () => v.connections++);
  await new Promise<void>((ok) => server.listen(0, host, () => ok()));
  v.port = (server.address() as AddressInfo).port;
  v.close = () =>
    new Promise<void>((ok) => {
      server.close(() => ok());
      server.closeAllConnections();
    });
  return v;
}

let victim: Victim;
let redirector: Victim;
let redirectTo = '';

beforeAll(async () => {
  victim = await listen('127.0.0.1', (_req, res) => res.end('internal secret'));
  redirector = await listen('127.0.0.2', (_req, res) => {
    res.writeHead(302, { location: redirectTo });
    res.end();
  });
});
afterAll(async () => {
  await victim.close();
  await redirector.close();
});
beforeEach(() => {
  victim.connections = 0;
  victim.requests = 0;
});

const spellings = (port: number) => [
  `http://127.0.0.1:${port}/`,
  `http://2130706433:${port}/`,
  `http://0x7f000001:${port}/`,
  `http://0x7f.1:${port}/`,
  `http://0177.0.0.1:${port}/`,
  `http://127.1:${port}/`,
  `http://[::ffff:127.0.0.1]:${port}/mapped`,
  `http://[::ffff:7f00:1]:${port}/`,
  `http://[::127.0.0.1]:${port}/`,
  `http://[64:ff9b::127.0.0.1]:${port}/`,
  `http://[2002:7f00:1::]:${port}/`,
  `http://localhost:${port}/`,
];

test('every spelling of 127.0.0.1, and a name resolving to it, is refused before a connection is made', async () => {
  for (const url of spellings(victim.port)) {
    await expect(outboundRequest(url, { method: 'POST', body: '{}', allowHosts: ['127.0.0.2'] })).rejects.toBeInstanceOf(OutboundRefused);
  }
  expect({ connections: victim.connections, requests: victim.requests }).toEqual({ connections: 0, requests: 0 });
});

test('a redirect to any spelling of a local address is refused on that hop', async () => {
  for (const url of spellings(victim.port)) {
    redirectTo = url;
    const before = redirector.requests;
    await expect(outboundRequest(`http://127.0.0.2:${redirector.port}/start`, { method: 'POST', body: '{}', allowHosts: ['127.0.0.2'] })).rejects.toThrow(/private or local address/);
    expect(redirector.requests).toBe(before + 1);
  }
  expect({ connections: victim.connections, requests: victim.requests }).toEqual({ connections: 0, requests: 0 });
});

test('the allowed host is reached (the servers do answer), in any spelling of its address', async () => {
  const allowed = await outboundRequest(`http://[::ffff:127.0.0.1]:${victim.port}/`, { method: 'GET', allowHosts: ['127.0.0.1'] });
  expect(allowed).toMatchObject({ status: 200, body: 'internal secret' });
  expect(victim.requests).toBe(1);
});

test('a refused address names itself, what it carries and its range', async () => {
  await expect(outboundRequest(`http://[::ffff:127.0.0.1]:${victim.port}/`, { allowHosts: [] })).rejects.toThrow('::ffff:7f00:1 (carrying 127.0.0.1) is a private or local address (loopback)');
  await expect(outboundRequest(`http://localhost:${victim.port}/`, { allowHosts: [] })).rejects.toThrow(/^localhost resolves to (127\.0\.0\.1|::1), a private or local address \(loopback\)/);
});

test('a bearer token follows a redirect within the origin, never to another one', async () => {
  const seen: (string | undefined)[] = [];
  const other = await listen('127.0.0.3', (req, res) => {
    seen.push(req.headers.authorization);
    res.end('{}');
  });
  try {
    const allowHosts = ['127.0.0.2', '127.0.0.3'];
    const headers = { authorization: 'Bearer gateway-token', 'content-type': 'application/json' };
    redirectTo = `http://127.0.0.3:${other.port}/elsewhere`;
    await outboundRequest(`http://127.0.0.2:${redirector.port}/start`, { method: 'POST', body: '{}', headers, allowHosts });
    expect(seen).toEqual([undefined]);
    // Within the origin the token stays: the redirector sends itself to /final, answered by the same server.
    const same = await listen('127.0.0.3', (req, res) => {
      if (req.url === '/start') {
        res.writeHead(307, { location: '/final' });
        return res.end();
      }
      seen.push(req.headers.authorization);
      res.end('{}');
    });
    await outboundRequest(`http://127.0.0.3:${same.port}/start`, { method: 'POST', body: '{}', headers, allowHosts });
    await same.close();
    expect(seen).toEqual([undefined, 'Bearer gateway-token']);
  } finally {
    await other.close();
  }
});
