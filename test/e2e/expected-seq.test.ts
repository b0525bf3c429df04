/**
 * Optimistic concurrency with `expected_seq` on POST /v1/sessions/:id/events and /end,
 * through the typed client against the real system: the append happens only when the chain
 * head is that seq; otherwise 412 wrong_expected_seq with the real head, and nothing is
 * written. A retry of a stored event is answered again whatever its expected_seq says.
 */
import { randomUUID } from 'node:crypto';
import { isRefusal, refusal, settle, successes, uniqueSessionId, useTestSystem } from '../support';

const t = useTestSystem();

async function newSession(): Promise<string> {
  const id = uniqueSessionId('eseq');
  expect((await t.tk.call('createSession', { body: { session_id: id } })).status).toBe(201);
  return id;
}

/** The chain head as the API describes the session. */
async function head(id: string) {
  const h = (await t.tk.session(id)).head;
  if (!h) throw new Error(`session ${id} has no head`);
  return h;
}

async function rows(id: string): Promise<number> {
  const { rows } = await t.sys.pool.query('SELECT count(*)::int AS n FROM timeline_events WHERE session_id = $1', [id]);
  return rows[0].n;
}

/** A 412 wrong_expected_seq naming expected_seq and carrying the real head. */
function expectWrongSeq(r: Awaited<ReturnType<typeof refusal>>, current: { seq: number; hash: string; ts: number }): void {
  expect(r.status).toBe(412);
  expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(r.body.type).toMatch(/\/wrong_expected_seq$/);
  expect(r.body.code).toBe(412);
  expect(r.body.errors?.[0]?.field).toBe('expected_seq');
  expect(r.body.current_head).toEqual({ seq: current.seq, hash: current.hash, ts: current.ts });
}

describe('expected_seq on POST /v1/sessions/:id/events', () => {
  test('the head seq appends (201) right after the head', async () => {
    const id = await newSession();
    const h = await head(id);
    expect(h.seq).toBe(1);
    const r = await t.tk.call('appendEvent', { params: { id }, body: { type: 'USER_INPUT', content: { input: 'a' }, expected_seq: 1 } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ seq: 2, prev_hash: h.hash, deduplicated: false });
    const next = await t.tk.call('appendEvent', { params: { id }, body: { type: 'LLM_RESPONSE', content: { response: 'b' }, expected_seq: 2 } });
    expect(next.status).toBe(201);
    expect(next.body).toMatchObject({ seq: 3, prev_hash: r.body.hash });
    expect(await rows(id)).toBe(3);
  });

  test('a stale or future expected_seq is 412 with current_head equal to the real head; nothing is written', async () => {
    const id = await newSession();
    await t.tk.append(id, { type: 'USER_INPUT', content: { input: 'a' } });
    await t.tk.append(id, { type: 'LLM_RESPONSE', content: { response: 'b' } });
    const real = await head(id);
    expect(real.seq).toBe(3);
    const before = await t.tk.events(id);
    for (const expected_seq of [1, 2, 4, 100]) {
      const r = await refusal(t.tk.append(id, { type: 'USER_INPUT', content: { input: `stale ${expected_seq}` }, expected_seq }));
      expectWrongSeq(r, real);
      expect(r.body.detail).toContain(`${expected_seq}`);
    }
    expect(await rows(id)).toBe(3);
    expect(await t.tk.events(id)).toEqual(before);
    expect(await head(id)).toEqual(real);
    // The session is not harmed: the right expected_seq still appends.
    const ok = await t.tk.call('appendEvent', { params: { id }, body: { type: 'USER_INPUT', content: { input: 'c' }, expected_seq: 3 } });
    expect(ok.status).toBe(201);
    expect(ok.body.seq).toBe(4);
  });

  test('a stale expected_seq with a new idempotency key or event id writes nothing either', async () => {
    const id = await newSession();
    await t.tk.append(id, { type: 'USER_INPUT', content: { input: 'a' } });
    const real = await head(id);
    const keyed = await refusal(t.tk.append(id, { type: 'USER_INPUT', content: { input: 'x' }, idempotency_key: 'fresh-key', expected_seq: 1 }));
    expectWrongSeq(keyed, real);
    const withId = await refusal(t.tk.append(id, { type: 'USER_INPUT', content: { input: 'x' }, event_id: randomUUID(), expected_seq: 1 }));
    expectWrongSeq(withId, real);
    expect(await rows(id)).toBe(2);
    // Neither key nor id was used up by the refusal: both append now.
    const later = await t.tk.call('appendEvent', { params: { id }, body: { type: 'USER_INPUT', content: { input: 'x' }, idempotency_key: 'fresh-key', expected_seq: 2 } });
    expect(later.status).toBe(201);
  });

  test('an idempotent retry of a stored event with a now-stale expected_seq is still 200, deduplicated', async () => {
    const id = await newSession();
    const req = { type: 'TOOL_CALL', content: { tool_name: 'search' }, idempotency_key: 'call-1', expected_seq: 1 } as const;
    const first = await t.tk.call('appendEvent', { params: { id }, body: req });
    expect(first.status).toBe(201);
    await t.tk.append(id, { type: 'TOOL_RESULT', content: { result: 'ok' } });
    for (let i = 0; i < 2; i++) {
      const retry = await t.tk.call('appendEvent', { params: { id }, body: req });
      expect(retry.status).toBe(200);
      expect(retry.body.deduplicated).toBe(true);
      for (const k of ['event_id', 'seq', 'hash', 'prev_hash', 'ts'] as const) expect(retry.body[k]).toEqual(first.body[k]);
    }
    // The same with a client-chosen event id instead of a key.
    const eventId = randomUUID();
    const byId = { type: 'USER_INPUT', content: { input: 'mine' }, event_id: eventId, expected_seq: 3 } as const;
    const stored = await t.tk.call('appendEvent', { params: { id }, body: byId });
    expect(stored.status).toBe(201);
    await t.tk.append(id, { type: 'LLM_RESPONSE', content: { response: 'after' } });
    const again = await t.tk.call('appendEvent', { params: { id }, body: byId });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ deduplicated: true, event_id: eventId, seq: stored.body.seq, hash: stored.body.hash });
    expect(await rows(id)).toBe(5);
  });

  test.each<[string, unknown]>([
    ['0', 0],
    ['-1', -1],
    ['1.5', 1.5],
    ['the string "3"', '3'],
    ['null', null],
    ['2^53', 2 ** 53],
  ])('expected_seq %s is 400 naming expected_seq, on /events and /end, and writes nothing', async (_name, expected_seq) => {
    const id = await newSession();
    for (const [path, body] of [
      [`/v1/sessions/${id}/events`, { type: 'USER_INPUT', content: { input: 'x' }, expected_seq }],
      [`/v1/sessions/${id}/end`, { reason: 'bye', expected_seq }],
    ] as const) {
      // Raw: the typed client would not let a string through.
      const r = await t.tk.raw('POST', path, { body });
      expect(r.status).toBe(400);
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(r.body.type).toMatch(/\/validation_error$/);
      expect(r.body.errors?.[0]?.field).toBe('expected_seq');
    }
    expect(await rows(id)).toBe(1);
    expect((await t.tk.session(id)).status).toBe('open');
  });

  test('two concurrent appends with the same expected_seq: exactly one 201 and one 412 naming the winner as head', async () => {
    const id = await newSession();
    for (let round = 0; round < 4; round++) {
      const { seq } = await head(id);
      const results = await Promise.all(
        ['a', 'b'].map((who) => settle(t.tk.call('appendEvent', { params: { id }, body: { type: 'USER_INPUT', content: { round, who }, expected_seq: seq } }))),
      );
      expect(results.map((r) => r.status).sort()).toEqual([201, 412]);
      const [won] = successes(results);
      const lost = results.find(isRefusal)!;
      expect(won.body).toMatchObject({ seq: seq + 1, deduplicated: false });
      expect(lost.body.type).toMatch(/\/wrong_expected_seq$/);
      expect(lost.body.current_head).toEqual({ seq: won.body.seq, hash: won.body.hash, ts: won.body.ts });
      expect(await rows(id)).toBe(seq + 1);
    }
    expect((await t.tk.verify(id)).ok).toBe(true);
  });
});

describe('expected_seq on POST /v1/sessions/:id/end', () => {
  test('the head seq ends the session (200) and archives it', async () => {
    const id = await newSession();
    const last = await t.tk.append(id, { type: 'USER_INPUT', content: { input: 'bye' } });
    const end = await t.tk.call('endSession', { params: { id }, body: { reason: 'done', expected_seq: 2 } });
    expect(end.status).toBe(200);
    expect(end.body).toMatchObject({ type: 'SESSION_END', seq: 3, prev_hash: last.hash, content: { reason: 'done' }, deduplicated: false });
    expect((await t.tk.session(id)).status).toBe('archived');
  });

  test('a stale expected_seq is 412 with current_head; the session stays open and nothing is written', async () => {
    const id = await newSession();
    await t.tk.append(id, { type: 'USER_INPUT', content: { input: 'still here' } });
    const real = await head(id);
    for (const expected_seq of [1, 3]) expectWrongSeq(await refusal(t.tk.end(id, { reason: 'too late', expected_seq })), real);
    expect(await rows(id)).toBe(2);
    const s = await t.tk.session(id);
    expect(s.status).toBe('open');
    expect(s.head).toEqual(real);
  });

  test('a retried end with a now-stale expected_seq answers the stored SESSION_END again', async () => {
    const id = await newSession();
    const body = { reason: 'done', idempotency_key: 'end-1', expected_seq: 1 } as const;
    const end = await t.tk.call('endSession', { params: { id }, body });
    expect(end.status).toBe(200);
    await t.sys.client.workflow.getHandle(`session/${id}`).result();
    const again = await t.tk.call('endSession', { params: { id }, body });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ deduplicated: true, event_id: end.body.event_id, seq: 2, hash: end.body.hash });
    expect(await rows(id)).toBe(2);
  });

  test('an append and an end racing with the same expected_seq: one wins; the other is refused and writes nothing', async () => {
    const id = await newSession();
    const [append, end] = await Promise.all([
      settle(t.tk.call('appendEvent', { params: { id }, body: { type: 'USER_INPUT', content: { input: 'race' }, expected_seq: 1 } })),
      settle(t.tk.call('endSession', { params: { id }, body: { reason: 'race', expected_seq: 1 } })),
    ]);
    const both = [append, end];
    const lost = both.filter(isRefusal);
    const [won, ...more] = successes<{ status: number; body: { seq: number; hash: string; ts: number } }>(both);
    expect(lost).toHaveLength(1);
    expect(more).toEqual([]);
    expect(won.body.seq).toBe(2);
    if (won === append) {
      // The end lost: 412 with the append as the head.
      expect(won.status).toBe(201);
      expect(lost[0].status).toBe(412);
      expect(lost[0].body.type).toMatch(/\/wrong_expected_seq$/);
      expect(lost[0].body.current_head).toEqual({ seq: 2, hash: won.body.hash, ts: won.body.ts });
    } else {
      // The append lost to SESSION_END: being archived is the refusal that stands (no expected_seq could help).
      expect(won.status).toBe(200);
      expect(lost[0].status).toBe(409);
      expect(lost[0].body.type).toMatch(/\/session_archived$/);
    }
    expect(await rows(id)).toBe(2);
    expect((await t.tk.session(id)).status).toBe(won === end ? 'archived' : 'open');
  });
});
