/**
 * The key is checked before the body is read (issue 16: a request without a key got 400 for a
 * malformed body and 413 for a large one, after parsing up to 576 KiB; the docs say 401 first).
 * Every write route of every surface, generated from the route contracts: with no key, a wrong
 * key or a key without the route's scope, a malformed and an oversized body answer 401/403;
 * with the right key the same malformed body is 400 (it is parsed then). A body sent to no
 * route needs a valid key too.
 */
import http from 'node:http';
import { routes } from '../../api/routes';
import { startTestSystem, TestSystem } from '../support';

const KEYS = { gateway: 'gw-key-123456', agent: 'agent-key-1234', auditor: 'audit-key-1234' } as const;

let sys: TestSystem;
beforeAll(async () => {
  // No worker: nothing here may get as far as a write.
  sys = await startTestSystem({ worker: false, apiKeys: `${KEYS.gateway}:gateway,${KEYS.agent}:agent,${KEYS.auditor}:auditor` });
});
afterAll(async () => {
  await sys?.stop();
});

interface Sent {
  status: number;
  body: { type?: string };
}
/** A raw request (fetch would refuse none of this, but a raw one shows exactly what was sent). */
function send(method: string, path: string, body: string | Buffer, headers: Record<string, string> = {}, type = 'application/json'): Promise<Sent> {
  const url = new URL(sys.baseUrl + path);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, method, path: url.pathname, headers: { 'content-type': type, 'content-length': String(Buffer.byteLength(body)), ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, body: text ? (JSON.parse(text) as Sent['body']) : {} }));
      },
    );
    // The server may answer and close before taking the whole body: that is the point.
    req.on('error', reject);
    req.end(body);
  });
}
const bearer = (k: string) => ({ authorization: `Bearer ${k}` });

/** Concrete paths of the write routes (every parameter "x1"). */
const writes = Object.values(routes)
  .filter((c) => c.method !== 'get')
  .map((c) => ({ method: c.method.toUpperCase(), path: c.path.replace(/:[A-Za-z]+/g, 'X-20260101-1'), scopes: c.scopes as readonly string[] }));
const malformed = '{"session_id": "a", oops';
const oversized = Buffer.alloc(2 * 1024 * 1024, 'a');

test.each(writes)('$method $path: no key, a wrong key → 401 before the body is parsed (malformed and oversized alike)', async ({ method, path }) => {
  for (const headers of [{}, bearer('not-a-real-key-000')]) {
    const bad = await send(method, path, malformed, headers);
    expect([bad.status, bad.body.type]).toEqual([401, expect.stringMatching(/unauthorized$/)]);
    const big = await send(method, path, oversized, headers);
    expect(big.status).toBe(401);
  }
});

test.each(writes)('$method $path: a key without its scope → 403 before the body; with the scope the malformed body is 400', async ({ method, path, scopes }) => {
  const outsider = (Object.keys(KEYS) as (keyof typeof KEYS)[]).find((k) => !scopes.includes(k));
  if (outsider) expect((await send(method, path, malformed, bearer(KEYS[outsider]))).status).toBe(403);
  const insider = (Object.keys(KEYS) as (keyof typeof KEYS)[]).find((k) => scopes.includes(k))!;
  expect((await send(method, path, malformed, bearer(KEYS[insider]))).status).toBe(400);
});

test('a form body on the seed surface is refused unread too', async () => {
  expect((await send('POST', '/timeline/append', 'session_id=a&type=%ZZ', {}, 'application/x-www-form-urlencoded')).status).toBe(401);
});

test('a body sent to no route needs a valid key: 401 without, 404 with one', async () => {
  expect((await send('POST', '/nowhere', malformed)).status).toBe(401);
  expect((await send('POST', '/nowhere', '{}', bearer(KEYS.auditor))).status).toBe(404);
});
