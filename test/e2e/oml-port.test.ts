/**
 * OML_PORT: the API's listeners as bin/run.ts starts them (api/listen.ts). With a second port,
 * the same app answers there: an intent created on OML's port is the one the main port reads,
 * with the same authentication; with 0 there is no second port; close() stops both; a taken
 * OML port fails start-up without leaving the main port bound.
 */
import net from 'node:net';
import { createApp } from '../../api/app';
import { loadKeyStore } from '../../api/auth';
import { TimekeeperClient } from '../../sdk/client';
import { listenApi, type ApiListeners } from '../../api/listen';
import { freePort } from '../../lib/temporal-server';
import { startTestSystem, TestSystem, refusal } from '../support';

const AGENT = 'oml-port-agent-key-0123456789';
let sys: TestSystem;
let app: ReturnType<typeof createApp>;
const open: ApiListeners[] = [];

beforeAll(async () => {
  sys = await startTestSystem();
  app = createApp({ client: sys.client, pool: sys.pool, config: sys.config, keys: loadKeyStore(`${AGENT}:agent`) });
});
afterAll(async () => {
  for (const l of open) await l.close().catch(() => undefined);
  await sys?.stop();
});

const clientOn = (port: number, apiKey?: string) => new TimekeeperClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey, validateResponses: true });

/** Whether something accepts TCP connections on the port. */
const accepting = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });

test('with OML_PORT the same routes answer on the second port, over the same intents and keys', async () => {
  const omlPort = await freePort();
  const l = await listenApi(app, { host: '127.0.0.1', port: 0, omlPort });
  open.push(l);
  expect(l.omlPort).toBe(omlPort);
  expect(l.port).not.toBe(omlPort);
  const oml = clientOn(omlPort, AGENT);
  const main = clientOn(l.port, AGENT);

  const id = `OMLPORT-${process.pid}-${Date.now()}`;
  const created = await oml.call('createIntent', { body: { event_id: id, domain: 'ops', action: 'deploy-service' } });
  expect(created.status).toBe(201);
  expect((await main.intents.get(id)).status).toBe('requested');
  expect((await oml.intents.pending({ domain: 'ops' })).map((i) => i.event_id)).toContain(id);
  await main.intents.transition(id, { status: 'done', note: 'deployed' });
  expect(await oml.intents.get(id)).toMatchObject({ status: 'done', lifecycle: ['requested', 'done'] });
  // OML's own health route, and the same authentication on both ports.
  expect((await oml.raw('GET', '/api/health')).status).toBe(200);
  expect((await refusal(clientOn(omlPort).intents.pending())).status).toBe(401);
  expect((await refusal(clientOn(l.port).intents.pending())).status).toBe(401);

  await l.close();
  open.pop();
  expect(await accepting(omlPort)).toBe(false);
  expect(await accepting(l.port)).toBe(false);
});

test('OML_PORT 0: no second port', async () => {
  const l = await listenApi(app, { host: '127.0.0.1', port: 0, omlPort: 0 });
  open.push(l);
  expect(l.omlPort).toBeUndefined();
  expect((await clientOn(l.port).health()).status).toBeDefined();
});

test('a taken OML port fails start-up and leaves the main port unbound', async () => {
  const blocker = net.createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
  const taken = (blocker.address() as net.AddressInfo).port;
  const mainPort = await freePort();
  try {
    await expect(listenApi(app, { host: '127.0.0.1', port: mainPort, omlPort: taken })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    expect(await accepting(mainPort)).toBe(false);
  } finally {
    await new Promise<void>((r) => blocker.close(() => r()));
  }
});
