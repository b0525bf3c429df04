/**
 * Admission over HTTP (issue 9): once the create bound is full, a create is refused before
 * its body is read (a malformed body gets the same 503 as a good one), on both surfaces, with
 * Retry-After and `may_be_stored: false`, after the key check; nothing is stored. No worker
 * runs here, so a create sent to Temporal stays in flight until the write deadline.
 */
import { startTestSystem, TestSystem, uniqueSessionId } from '../support';

const KEY = 'admission-test-key-0123456789';
let sys: TestSystem;
beforeAll(async () => {
  sys = await startTestSystem({ worker: false, apiKeys: `${KEY}:gateway`, config: { createsInFlightMax: 1, writeTimeoutMs: 8000 } });
});
afterAll(async () => {
  await sys?.stop();
});

test('a full create bound refuses creates at once, before the body, on /v1 and the seed surface; nothing is stored', async () => {
  const tk = sys.tk.with({ apiKey: KEY });
  const held = uniqueSessionId('adm-held');
  // Takes the one create slot until the write deadline (no worker answers).
  const inFlight = tk.raw('POST', '/v1/sessions', { body: { session_id: held } });
  const deadline = Date.now() + 5000;
  let r = await tk.raw('POST', '/v1/sessions', { body: '{"session_id": not json' });
  while (r.status === 400 && Date.now() < deadline) r = await tk.raw('POST', '/v1/sessions', { body: '{"session_id": not json' });
  // Refused for capacity, not for the body, which was never parsed.
  expect(r.status).toBe(503);
  expect(r.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
  expect(Number(r.headers.get('content-length'))).toBe(Buffer.byteLength(r.text));
  expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(r.body).toMatchObject({ status: 503, may_be_stored: false, instance: '/v1/sessions' });
  expect(r.body.detail).toMatch(/1 session creates in flight \(CREATES_IN_FLIGHT_MAX=1\); nothing was sent or stored/);

  const sid = uniqueSessionId('adm-refused');
  const v1 = await tk.raw('POST', '/v1/sessions/', { body: { session_id: sid } });
  expect(v1.status).toBe(503);
  const seed = await tk.raw('POST', `/timeline/init?session_id=${sid}`);
  expect(seed.status).toBe(503);
  expect(seed.body).toMatchObject({ code: 503, may_be_stored: false });
  expect(seed.headers.get('retry-after')).not.toBeNull();
  // The key is still checked first: no key, 401, whatever the load.
  expect((await sys.tk.raw('POST', '/v1/sessions', { body: { session_id: sid } })).status).toBe(401);
  // Other routes are not affected.
  expect((await tk.raw('GET', '/healthz')).status).toBe(200);

  const { rows } = await sys.pool.query('SELECT count(*)::int AS n FROM timeline_sessions WHERE session_id = $1', [sid]);
  expect(rows[0].n).toBe(0);
  // The held create ends at its deadline (its outcome unknown), and the slot comes back.
  const h = await inFlight;
  expect(h.status).toBe(503);
  expect(h.body.may_be_stored).toBe(true);
  expect((await tk.raw('POST', '/v1/sessions', { body: '{"session_id": not json' })).status).toBe(400);
});
