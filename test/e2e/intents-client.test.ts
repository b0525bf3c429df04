/** The agent helpers over HTTP: intents.create/transition/pending/get, withIntent (done or blocked, rethrown) and the recovery step. */
import { IntentApiError, intentsClient } from '../../api/intents/client-helpers';
import { startTestSystem, TestSystem } from '../support/system';

let sys: TestSystem;
beforeAll(async () => {
  sys = await startTestSystem();
});
afterAll(async () => {
  await sys?.stop();
});
let n = 0;
const uid = (p: string) => `${p}-${process.pid}-${Date.now().toString(36)}-${n++}`;

test('withIntent records requested, then done with the result', async () => {
  const c = intentsClient({ baseUrl: sys.baseUrl });
  const id = uid('WORK');
  const out = await c.withIntent({ event_id: id, domain: 'helpers', action: 'send-email' }, async () => {
    expect((await c.get(id)).status).toBe('requested');
    return { message_id: 'm-7' };
  });
  expect(out).toEqual({ message_id: 'm-7' });
  const d = await c.get(id);
  expect(d.lifecycle).toEqual(['requested', 'done']);
  expect(d.last_data).toEqual({ message_id: 'm-7' });
});

test('withIntent records blocked with error and next_step when the work throws, and rethrows', async () => {
  const c = intentsClient({ baseUrl: sys.baseUrl });
  const id = uid('FAIL');
  await expect(
    c.withIntent({ event_id: id, domain: 'helpers', action: 'call-api' }, async () => {
      throw new Error('API rate limit exceeded');
    }, { nextStep: () => 'Wait 1 hour and retry' }),
  ).rejects.toThrow('API rate limit exceeded');
  const d = await c.get(id);
  expect(d.status).toBe('blocked');
  expect(d.last_data).toEqual({ error: 'API rate limit exceeded', next_step: 'Wait 1 hour and retry' });
});

test('errors come back as IntentApiError with the status and the problem body', async () => {
  const c = intentsClient({ baseUrl: sys.baseUrl });
  const id = uid('ERR');
  await c.create({ event_id: id, domain: 'helpers', action: 'x', status: 'done' });
  const err = await c.transition(id, { status: 'requested' }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(IntentApiError);
  expect((err as IntentApiError).status).toBe(409);
  expect((err as IntentApiError).body.current_status).toBe('done');
});

test('recover: resumes fresh pending intents, expires old ones, skips one whose dedupe key is already done', async () => {
  const c = intentsClient({ baseUrl: sys.baseUrl });
  const domain = uid('recover').toLowerCase();
  const old = `${domain}-old`;
  await c.create({ event_id: old, domain, action: 'stale' });
  await new Promise((r) => setTimeout(r, 1100));
  const fresh = `${domain}-fresh`;
  await c.create({ event_id: fresh, domain, action: 'fresh' });
  // A pending intent whose dedupe key a done intent also holds: it was blocked (freeing the key)
  // while the other was done, then re-opened.
  const key = uid('key');
  const dup = `${domain}-dup`;
  await c.create({ event_id: dup, domain, action: 'send', dedupe_key: key });
  await c.transition(dup, { status: 'blocked', data: { error: 'e', next_step: 'n' } });
  const done = `${domain}-done`;
  await c.create({ event_id: done, domain, action: 'send', dedupe_key: key, status: 'done' });
  await c.transition(dup, { status: 'requested' });

  const resumed: string[] = [];
  const report = await c.recover({ domain, expireOlderThanS: 1, resume: async (i) => void resumed.push(i.event_id) });
  expect(report.expired).toEqual([old]);
  expect(report.skipped).toEqual([dup]);
  expect(report.resumed).toEqual([fresh]);
  expect(resumed).toEqual([fresh]);
  expect((await c.get(old)).last_data).toMatchObject({ error: 'expired' });
});
