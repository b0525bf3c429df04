/** Admission control: bounded writes in flight per process, per create, per session; refusals name the bound and send nothing. */
import { Admission } from '../../api/admission';
import { DomainError, ErrorCode } from '../../lib/domain/errors';

const limits = { writesInFlightMax: 4, createsInFlightMax: 2, sessionWritesInFlightMax: 2 };

function gate() {
  let open!: () => void;
  const p = new Promise<void>((r) => (open = r));
  return { p, open };
}

async function refusalOf(p: Promise<unknown>): Promise<DomainError> {
  try {
    await p;
  } catch (e) {
    return e as DomainError;
  }
  throw new Error('expected a refusal');
}

test('beyond the per-session bound: 429 with Retry-After, the write is never started', async () => {
  const a = new Admission(limits);
  const g = gate();
  const held = [a.run('write', 's1', () => g.p), a.run('write', 's1', () => g.p)];
  let called = false;
  const e = await refusalOf(a.run('write', 's1', async () => void (called = true)));
  expect(called).toBe(false);
  expect(e.code).toBe(ErrorCode.RateLimited);
  expect(e.retryAfterS).toBe(1);
  expect(e.extra).toEqual({ may_be_stored: false });
  expect(e.message).toMatch(/SESSION_WRITES_IN_FLIGHT_MAX=2.*nothing was sent/);
  // Another session is not affected.
  await a.run('write', 's2', async () => undefined);
  g.open();
  await Promise.all(held);
  expect(a.inFlight).toEqual({ total: 0, creates: 0, keys: 0 });
  await a.run('write', 's1', async () => undefined);
});

test('beyond the process and create bounds: 503 naming the variable; slots come back after failures too', async () => {
  const a = new Admission(limits);
  const g = gate();
  const creates = [a.run('create', 'c1', () => g.p), a.run('create', 'c2', () => g.p)];
  expect((await refusalOf(a.run('create', 'c3', async () => undefined))).message).toMatch(/CREATES_IN_FLIGHT_MAX=2/);
  const writes = [a.run('write', 'w1', () => g.p), a.run('write', 'w2', () => g.p)];
  const e = await refusalOf(a.run('write', 'w3', async () => undefined));
  expect(e.code).toBe(ErrorCode.Unavailable);
  expect(e.message).toMatch(/4 writes in flight.*WRITES_IN_FLIGHT_MAX=4/);
  g.open();
  await Promise.all([...creates, ...writes]);
  await expect(a.run('write', 'w1', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  expect(a.inFlight).toEqual({ total: 0, creates: 0, keys: 0 });
});
