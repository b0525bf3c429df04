/**
 * The agent side of the intent routes through the typed client: `tk.intents` (create,
 * transition, pending, get, list, verify, stats) on the wire, and against the real system
 * `withIntent` (done or blocked, rethrown), refusals as TimekeeperApiError, and the recovery step.
 */
import { TimekeeperApiError, TimekeeperClient } from '../../sdk/client';
import { recover, withIntent } from '../../sdk/intents/helpers';
import { startTestSystem, TestSystem, uid, eventually } from '../support';


describe('tk.intents on the wire', () => {
  test('each method calls its route: method, path with the id encoded, query and JSON body', async () => {
    const sent: { method: string; url: string; body: unknown }[] = [];
    const tk = new TimekeeperClient({
      baseUrl: 'http://tk.test:1234',
      apiKey: 'agent-key-1234',
      fetch: async (url, init) => {
        sent.push({ method: String(init.method), url: url.replace('http://tk.test:1234', ''), body: init.body });
        expect((init.headers as Record<string, string>).authorization).toBe('Bearer agent-key-1234');
        return new Response(JSON.stringify({}), { status: init.method === 'POST' ? 201 : 200, headers: { 'content-type': 'application/json' } });
      },
    });
    await tk.intents.create({ event_id: 'EMAIL-1', domain: 'communication', action: 'send', data: { to: 'a@b' } });
    await tk.intents.transition('A:b.1', { status: 'done', data: { message_id: 'm-1' } });
    await tk.intents.pending({ older_than: 60, domain: 'communication' });
    await tk.intents.pending();
    await tk.intents.get('A:b.1');
    await tk.intents.list({ status: 'done', tags: 'x,y', limit: 10, offset: 20 });
    await tk.intents.verify('A:b.1');
    await tk.intents.stats();
    expect(sent).toEqual([
      { method: 'POST', url: '/api/events', body: '{"event_id":"EMAIL-1","domain":"communication","action":"send","data":{"to":"a@b"}}' },
      { method: 'PATCH', url: '/api/events/A%3Ab.1/status', body: '{"status":"done","data":{"message_id":"m-1"}}' },
      { method: 'GET', url: '/api/events/pending?older_than=60&domain=communication', body: undefined },
      { method: 'GET', url: '/api/events/pending', body: undefined },
      { method: 'GET', url: '/api/events/A%3Ab.1', body: undefined },
      { method: 'GET', url: '/api/events?status=done&tags=x%2Cy&limit=10&offset=20', body: undefined },
      { method: 'GET', url: '/api/events/A%3Ab.1/verify', body: undefined },
      { method: 'GET', url: '/api/stats', body: undefined },
    ]);
  });
});

describe('against the running API', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startTestSystem();
  });
  afterAll(async () => {
    await sys?.stop();
  });

  test('withIntent records requested, then done with the result', async () => {
    const tk = sys.tk;
    const id = uid('WORK');
    const out = await withIntent(tk, { event_id: id, domain: 'helpers', action: 'send-email' }, async () => {
      expect((await tk.intents.get(id)).status).toBe('requested');
      return { message_id: 'm-7' };
    });
    expect(out).toEqual({ message_id: 'm-7' });
    const d = await tk.intents.get(id);
    expect(d.lifecycle).toEqual(['requested', 'done']);
    expect(d.last_data).toEqual({ message_id: 'm-7' });
  });

  test('withIntent records blocked with error and next_step when the work throws, and rethrows', async () => {
    const tk = sys.tk;
    const id = uid('FAIL');
    await expect(
      withIntent(
        tk,
        { event_id: id, domain: 'helpers', action: 'call-api' },
        async () => {
          throw new Error('API rate limit exceeded');
        },
        { nextStep: () => 'Wait 1 hour and retry' },
      ),
    ).rejects.toThrow('API rate limit exceeded');
    const d = await tk.intents.get(id);
    expect(d.status).toBe('blocked');
    expect(d.last_data).toEqual({ error: 'API rate limit exceeded', next_step: 'Wait 1 hour and retry' });
  });

  test('refusals come back as TimekeeperApiError with the status and the problem', async () => {
    const tk = sys.tk;
    const id = uid('ERR');
    await tk.intents.create({ event_id: id, domain: 'helpers', action: 'x', status: 'done' });
    const err = await tk.intents.transition(id, { status: 'requested' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimekeeperApiError);
    const e = err as TimekeeperApiError;
    expect(e.route).toBe('transitionIntent');
    expect(e.status).toBe(409);
    expect(e.errorCode).toBe('invalid_transition');
    expect(e.problem.current_status).toBe('done');
    expect(e.problem.allowed_next).toEqual([]);
  });

  test('recover: resumes fresh pending intents, expires old ones, skips one whose dedupe key is already done', async () => {
    const tk = sys.tk;
    const domain = uid('recover').toLowerCase();
    const old = `${domain}-old`;
    await tk.intents.create({ event_id: old, domain, action: 'stale' });
    // Old once the server counts it older than OLD_S (what recover's expireOlderThanS asks it). The
    // intents made after it must still be younger than that when recover runs: 1 s was too short
    // for the five calls below on a loaded CI machine (the fresh one was expired too).
    const OLD_S = 5;
    await eventually(`the first intent to be older than ${OLD_S} s`, async () => (await tk.intents.pending({ domain, older_than: OLD_S })).some((i) => i.event_id === old), { stepMs: 100, timeoutMs: 30_000 });
    const fresh = `${domain}-fresh`;
    await tk.intents.create({ event_id: fresh, domain, action: 'fresh' });
    // A pending intent whose dedupe key a done intent also holds: it was blocked (freeing the key)
    // while the other was done, then re-opened.
    const key = uid('key');
    const dup = `${domain}-dup`;
    await tk.intents.create({ event_id: dup, domain, action: 'send', dedupe_key: key });
    await tk.intents.transition(dup, { status: 'blocked', data: { error: 'e', next_step: 'n' } });
    const done = `${domain}-done`;
    await tk.intents.create({ event_id: done, domain, action: 'send', dedupe_key: key, status: 'done' });
    await tk.intents.transition(dup, { status: 'requested' });

    const resumed: string[] = [];
    const report = await recover(tk, { domain, expireOlderThanS: OLD_S, resume: async (i) => void resumed.push(i.event_id) });
    expect(report.expired).toEqual([old]);
    expect(report.skipped).toEqual([dup]);
    expect(report.resumed).toEqual([fresh]);
    expect(resumed).toEqual([fresh]);
    expect((await tk.intents.get(old)).last_data).toMatchObject({ error: 'expired' });
  });
});
