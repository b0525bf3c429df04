/**
 * The OML-compatible intent API end to end, over HTTP against the real system through the
 * typed client (every answer checked against its route contract; raw requests for input the
 * contract does not describe): create, transitions and the state machine's refusals, pending
 * (the crash-resume scenarios of the OML article), list filters, detail, verify, stats,
 * health, dedupe, and bad input.
 */
import type { CallRequest } from '../../sdk/client';
import type { CreateIntentBody } from '../../sdk/intents/helpers';
import { refusal, settle, uid, expectProblem, useTestSystem } from '../support';

const t = useTestSystem();

const HEX64 = /^[0-9a-f]{64}$/;

const create = (body: Partial<CreateIntentBody> & { event_id: string }) => t.tk.intents.create({ domain: 'test', action: 'do-something', ...body });
const post = (body: CreateIntentBody) => t.tk.call('createIntent', { body });
const patch = (id: string, body: CallRequest<'transitionIntent'>['body']) => t.tk.call('transitionIntent', { params: { eventId: id }, body });
const pending = (query: CallRequest<'pendingIntents'>['query'] = {}) => t.tk.call('pendingIntents', { query });

async function rows(id: string): Promise<number> {
  const { rows: r } = await t.sys.pool.query('SELECT count(*)::int AS n FROM intent_transitions WHERE event_id = $1', [id]);
  return r[0].n;
}

describe('POST /api/events', () => {
  test('201 with the stored intent, Location, lifecycle and hash; one intents row and one transition row', async () => {
    const id = uid('EMAIL');
    const r = await post({
      event_id: id,
      domain: 'communication',
      action: 'send-daily-summary',
      status: 'requested',
      tags: ['automation', 'user-john'],
      data: { recipient: 'john@example.com', report_date: '2023-10-27' },
    });
    expect(r.status).toBe(201);
    expect(r.headers.get('location')).toBe(`/api/events/${id}`);
    expect(r.body).toMatchObject({
      event_id: id,
      domain: 'communication',
      action: 'send-daily-summary',
      status: 'requested',
      tags: ['automation', 'user-john'],
      data: { recipient: 'john@example.com', report_date: '2023-10-27' },
      lifecycle: ['requested'],
      lifecycle_text: 'requested',
      seq: 1,
      workflow_id: `intent/${id}`,
      ttl_s: 86400,
    });
    expect(r.body.hash).toMatch(HEX64);
    expect(await rows(id)).toBe(1);
    // The answer is built from the stored transition, not read back: it must equal what a read shows.
    const { transitions: _t, workflow: _w, ...read } = await t.tk.intents.get(id);
    expect(r.body).toEqual({ ...read, deduplicated: false });
  });

  test('the /api/events/log alias creates too', async () => {
    const id = uid('LOG');
    const r = await t.tk.call('createIntentLog', { body: { event_id: id, domain: 'ops', action: 'deploy' } });
    expect(r.status).toBe(201);
    expect(r.body.status).toBe('requested');
  });

  test('a duplicate event_id is 409 intent_exists and writes nothing more', async () => {
    const id = uid('DUP');
    await create({ event_id: id });
    const r = await refusal(post({ event_id: id, domain: 'test', action: 'again' }));
    expect(r.status).toBe(409);
    expect(r.body.type).toMatch(/intent_exists$/);
    expect(r.body.error).toMatch(id);
    expect(await rows(id)).toBe(1);
  });

  test('unknown fields are ignored, not refused (as in OML), on create and on transition', async () => {
    const id = uid('EXTRA');
    // Not in the contract's types: sent raw.
    const c = await t.tk.raw('POST', '/api/events', { body: { event_id: id, domain: 'test', action: 'x', priority: 'high' } });
    expect(c.status).toBe(201);
    expect(c.body.priority).toBeUndefined();
    const done = await t.tk.raw('PATCH', `/api/events/${id}/status`, { body: { status: 'done', reason: 'extra' } });
    expect(done.status).toBe(200);
    expect(done.body.status).toBe('done');
    expect(await rows(id)).toBe(2);
  });

  test('creating directly as done is allowed (as in OML)', async () => {
    const id = uid('DIRECT');
    const b = await create({ event_id: id, status: 'done', data: { result: 1 } });
    expect(b.status).toBe('done');
  });

  test.each([
    [{ domain: 'x', action: 'y' }, 'event_id'],
    [{ event_id: 'has space', domain: 'x', action: 'y' }, 'event_id'],
    [{ event_id: 'A'.repeat(201), domain: 'x', action: 'y' }, 'event_id'],
    [{ event_id: 'OK-1', domain: 'x', action: 'y', status: 'finished' }, 'status'],
    [{ event_id: 'OK-2', domain: 'x', action: 'y', tags: ['a', 3] }, 'tags.1'],
    [{ event_id: 'OK-3', domain: 'x', action: 'y', tags: 'a,b' }, 'tags'],
    [{ event_id: 'OK-4', domain: 'x', action: 'y', data: [1, 2] }, 'data'],
    [{ event_id: 'OK-5', domain: 'x', action: 42 }, 'action'],
    [{ event_id: 'OK-6', domain: 'x', action: 'y', ttl_s: 0 }, 'ttl_s'],
    [{ event_id: 'OK-7', domain: 'x', action: 'y', ttl_s: '60' }, 'ttl_s'],
    [{ event_id: 'OK-8', domain: 'x', action: 'y', status: 'blocked', data: { error: 'e' } }, 'data.next_step'],
    [{ event_id: 'OK-9', domain: 'x', action: 'y', status: 'blocked', data: { error: 'e', next_step: 'n', retry_after: 'tomorrow' } }, 'data.retry_after'],
    [{ event_id: 'OK-10', domain: 'x', action: 'y', session_id: 'no such session!' }, 'session_id'],
  ] as [Record<string, unknown>, string][])('bad input %j → 400 naming %s; nothing written', async (body, field) => {
    const r = await t.tk.raw('POST', '/api/events', { body });
    expectProblem(r, 400);
    expect(r.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    if (typeof body.event_id === 'string' && body.event_id.startsWith('OK-')) expect(await rows(body.event_id)).toBe(0);
  });

  test('oversized data is 413 naming data; nothing written', async () => {
    const id = uid('BIG');
    const r = await refusal(post({ event_id: id, domain: 'x', action: 'y', data: { blob: 'x'.repeat(70 * 1024) } }));
    expect(r.status).toBe(413);
    expect(r.body.errors?.[0]?.field).toBe('data');
    expect(await rows(id)).toBe(0);
  });

  test('an unknown session_id is 404 naming session_id; nothing written', async () => {
    const id = uid('NOSESS');
    const r = await refusal(post({ event_id: id, domain: 'x', action: 'y', session_id: 'never-created-session' }));
    expect(r.status).toBe(404);
    expect(r.body.errors?.[0]?.field).toBe('session_id');
    expect(await rows(id)).toBe(0);
  });
});

describe('PATCH /api/events/:eventId/status: the state machine', () => {
  test('requested → in-progress → done; every change is a new chained row; done is final', async () => {
    const id = uid('FLOW');
    await create({ event_id: id });
    const a = await patch(id, { status: 'in-progress', note: 'starting' });
    expect(a.status).toBe(200);
    expect(a.body.status).toBe('in-progress');
    expect(a.body.transition).toMatchObject({ seq: 2, from: 'requested', to: 'in-progress', note: 'starting', actor: 'agent' });
    const b = await patch(id, { status: 'done', note: 'Email sent', data: { message_id: 'm-1' } });
    expect(b.status).toBe(200);
    expect(b.body).toMatchObject({ status: 'done', lifecycle: ['requested', 'in-progress', 'done'], lifecycle_text: 'requested → in-progress → done', last_data: { message_id: 'm-1' } });
    expect(b.body.transition.prev_hash).toBe(a.body.transition.hash);

    const c = await refusal(patch(id, { status: 'requested' }));
    expect(c.status).toBe(409);
    expect(c.body).toMatchObject({ current_status: 'done', allowed_next: [] });
    expect(c.body.type).toMatch(/invalid_transition$/);
    expect(await rows(id)).toBe(3);

    const d = await t.tk.call('getIntent', { params: { eventId: id } });
    expect(d.status).toBe(200);
    expect(d.body.transitions.map((t) => [t.from, t.to])).toEqual([
      [null, 'requested'],
      ['requested', 'in-progress'],
      ['in-progress', 'done'],
    ]);
    const v = await t.tk.call('verifyIntent', { params: { eventId: id } });
    expect(v.body).toMatchObject({ ok: true, checked: 3, head_seq: 3, header_ok: true });
  });

  test('illegal transitions are 409 naming the current state and the allowed next states; nothing written', async () => {
    const id = uid('ILLEGAL');
    await create({ event_id: id });
    const same = await refusal(patch(id, { status: 'requested' }));
    expect(same.status).toBe(409);
    expect(same.body).toMatchObject({ current_status: 'requested', allowed_next: ['in-progress', 'done', 'blocked'] });
    expect(same.body.detail).toMatch(/is requested; it cannot become requested \(allowed next: in-progress, done, blocked\)/);
    const blocked = await patch(id, { status: 'blocked', data: { error: 'boom', next_step: 'look' } });
    expect(blocked.status).toBe(200);
    const toInProgress = await refusal(patch(id, { status: 'in-progress' }));
    expect(toInProgress.status).toBe(409);
    expect(toInProgress.body).toMatchObject({ current_status: 'blocked', allowed_next: ['requested', 'done'] });
    expect(await rows(id)).toBe(2);
    // blocked → requested (a retry) is allowed, and then done.
    expect((await patch(id, { status: 'requested', note: 'retrying' })).status).toBe(200);
    expect((await patch(id, { status: 'done' })).status).toBe(200);
    expect(await rows(id)).toBe(4);
  });

  test("OML drop-in (seed 001): the same done PATCH again is 200 deduplicated and writes nothing; another body stays 409 naming the state", async () => {
    const id = uid('SEED-DONE');
    await create({ event_id: id });
    const done = { status: 'done' as const, note: 'Report generated and sent successfully', data: { report_file: 'artifacts/report_20231027.pdf' } };
    const first = await patch(id, done);
    expect(first.body).toMatchObject({ status: 'done', deduplicated: false, seq: 2 });
    // The intent's workflow has completed at done: the repeat is answered from the stored head.
    const again = await patch(id, done);
    expect(again.status).toBe(200);
    expect(again.body.deduplicated).toBe(true);
    expect(again.body.transition).toEqual(first.body.transition);
    expect(await rows(id)).toBe(2);
    const other = await refusal(patch(id, { ...done, note: 'sent again?' }));
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ current_status: 'done', allowed_next: [] });
    expect(await rows(id)).toBe(2);
  });

  test('OML drop-in (seed 001): a blocked intent redone goes straight to done; the chain verifies', async () => {
    const id = uid('SEED-RECOVER');
    await create({ event_id: id });
    const blocked = { status: 'blocked' as const, note: 'Failed to connect to SMTP server', data: { error: 'Connection timeout after 10s', next_step: 'Retry in 5 minutes.' } };
    expect((await patch(id, blocked)).status).toBe(200);
    const again = await patch(id, blocked);
    expect(again.body.deduplicated).toBe(true);
    const done = await patch(id, { status: 'done', note: 'sent on the second try' });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: 'done', lifecycle: ['requested', 'blocked', 'done'], deduplicated: false });
    expect(done.body.transition).toMatchObject({ from: 'blocked', to: 'done', seq: 3 });
    expect(await rows(id)).toBe(3);
    expect((await t.tk.call('verifyIntent', { params: { eventId: id } })).body).toMatchObject({ ok: true, checked: 3 });
    expect((await t.tk.intents.pending()).some((i) => i.event_id === id)).toBe(false);
  });

  test('unknown intent is 404; bad status and bad blocked data are 400 naming the field', async () => {
    expect((await refusal(patch(uid('NOPE'), { status: 'done' }))).status).toBe(404);
    const id = uid('BADPATCH');
    await create({ event_id: id });
    const path = `/api/events/${encodeURIComponent(id)}/status`;
    const a = await t.tk.raw('PATCH', path, { body: { status: 'complete' } });
    expectProblem(a, 400);
    expect(a.body.errors[0].field).toBe('status');
    const b = await refusal(patch(id, { status: 'blocked', data: { error: 'x', next_step: 'y', retry: 'yes' } }));
    expect(b.status).toBe(400);
    expect(b.body.errors?.[0]?.field).toBe('data.retry');
    const c = await t.tk.raw('PATCH', path, { body: {} });
    expectProblem(c, 400);
    expect(c.body.errors[0].field).toBe('status');
    expect(await rows(id)).toBe(1);
  });

  test('a PATCH after the workflow closed still works and is checked against the stored state', async () => {
    const id = uid('CLOSED');
    await create({ event_id: id, status: 'done' });
    const handle = t.sys.client.workflow.getHandle(`intent/${id}`);
    await handle.result();
    const r = await refusal(patch(id, { status: 'in-progress' }));
    expect(r.status).toBe(409);
    expect(r.body.current_status).toBe('done');
  });
});

describe('pending, list, stats, health', () => {
  test('scenario: a daily report survives a crash of the agent and is resumed from pending', async () => {
    const id = uid('REPORT');
    await create({ event_id: id, domain: 'reporting', action: 'generate-and-send-daily-report', data: { date: '2023-10-27', recipients: ['team@company.com'] } });
    // ...the agent process dies here. On restart it asks what is pending:
    const p = await pending({ domain: 'reporting' });
    expect(p.status).toBe(200);
    expect(Array.isArray(p.body)).toBe(true);
    const mine = p.body.find((e) => e.event_id === id);
    expect(mine).toMatchObject({ status: 'requested', action: 'generate-and-send-daily-report', data: { date: '2023-10-27' } });
    // It redoes the work and closes the loop; the intent is no longer pending.
    expect((await patch(id, { status: 'done', note: 'Report generated and sent', data: { report_file: 'artifacts/report.pdf' } })).status).toBe(200);
    const after = await pending({ domain: 'reporting' });
    expect(after.body.find((e) => e.event_id === id)).toBeUndefined();
  });

  test('scenario: a multi-step refactor resumes at the first unfinished step', async () => {
    const domain = uid('refactor').toLowerCase();
    const steps = ['rename-UserService', 'update-imports', 'fix-tests', 'update-docs'];
    for (const [i, s] of steps.entries()) await create({ event_id: `${domain}-${i}`, domain, action: s, data: { step: i } });
    expect((await patch(`${domain}-0`, { status: 'done' })).status).toBe(200);
    expect((await patch(`${domain}-1`, { status: 'in-progress' })).status).toBe(200);
    // Context lost. Pending lists the unfinished steps oldest first: resume at step 1.
    const p = await pending({ domain });
    expect(p.body.map((e) => e.action)).toEqual(['update-imports', 'fix-tests', 'update-docs']);
    expect(p.body[0].status).toBe('in-progress');
  });

  test('older_than keeps only intents at least that old', async () => {
    const domain = uid('age').toLowerCase();
    await create({ event_id: `${domain}-1`, domain });
    expect((await pending({ domain, older_than: 3600 })).body).toEqual([]);
    expect((await pending({ domain, older_than: 0 })).body).toHaveLength(1);
    const bad = await refusal(pending({ older_than: 'soon' }));
    expect(bad.status).toBe(400);
    expect(bad.body.errors?.[0]?.field).toBe('older_than');
  });

  test('GET /api/events filters by domain, status, tags (all must match) and search; pages with limit/offset', async () => {
    const domain = uid('list').toLowerCase();
    await create({ event_id: `${domain}-a`, domain, action: 'send-email', tags: ['x', 'y'] });
    await create({ event_id: `${domain}-b`, domain, action: 'write-code', tags: ['x'] });
    await create({ event_id: `${domain}-c`, domain, action: 'search-web', tags: ['y'] });
    await patch(`${domain}-b`, { status: 'done', note: 'merged the pull request' });
    const q = (query: CallRequest<'listIntents'>['query'] = {}) => t.tk.call('listIntents', { query: { domain, ...query } });
    const ids = async (query: CallRequest<'listIntents'>['query']) => (await q(query)).body.events.map((e) => e.event_id);
    expect((await q()).body.total).toBe(3);
    expect(await ids({ tags: 'x,y' })).toEqual([`${domain}-a`]);
    expect(await ids({ status: 'done' })).toEqual([`${domain}-b`]);
    expect(await ids({ search: 'PULL' })).toEqual([`${domain}-b`]);
    expect(await ids({ search: 'web' })).toEqual([`${domain}-c`]);
    const page = await q({ limit: 2, offset: 2 });
    expect(page.body).toMatchObject({ total: 3, limit: 2, offset: 2 });
    expect(page.body.events).toHaveLength(1);
    // A LIKE wildcard is searched for as itself.
    expect((await q({ search: '%' })).body.total).toBe(0);
  });

  test('GET /api/stats counts by status and domain', async () => {
    const domain = uid('stats').toLowerCase();
    await create({ event_id: `${domain}-1`, domain });
    await create({ event_id: `${domain}-2`, domain, status: 'done' });
    const s = await t.tk.call('intentStats');
    expect(s.status).toBe(200);
    expect(s.body.by_domain[domain]).toBe(2);
    expect(s.body.by_status.done).toBeGreaterThanOrEqual(1);
    expect(s.body.total).toBeGreaterThanOrEqual(2);
  });

  test('GET /api/health reports database, Temporal and the database URL without its password', async () => {
    const h = await t.tk.call('omlHealth');
    expect(h.status).toBe(200);
    expect(h.body).toMatchObject({ status: 'ok', database: 'ok', temporal: 'ok', read_only: false });
    expect(h.body.db_path).toMatch(/^postgres/);
    expect(h.body.db_path).not.toMatch(/:[^:@/]+@/);
  });
});

describe('dedupe_key', () => {
  test('a key held by a done intent is refused with 409 naming that intent and its result; an open one too; a blocked one frees it', async () => {
    const key = uid('send-email-john-2023-10-27');
    const first = uid('MAIL');
    await create({ event_id: first, dedupe_key: key });
    const whileOpen = await refusal(post({ event_id: uid('MAIL'), domain: 'test', action: 'x', dedupe_key: key }));
    expect(whileOpen.status).toBe(409);
    expect(whileOpen.body.existing).toMatchObject({ event_id: first, status: 'requested' });

    expect((await patch(first, { status: 'done', data: { message_id: 'm-42' } })).status).toBe(200);
    const second = uid('MAIL');
    const afterDone = await refusal(post({ event_id: second, domain: 'test', action: 'x', dedupe_key: key }));
    expect(afterDone.status).toBe(409);
    expect(afterDone.body.type).toMatch(/duplicate_intent$/);
    expect(afterDone.body.existing).toEqual({ event_id: first, status: 'done', result: { message_id: 'm-42' } });
    expect(await rows(second)).toBe(0);

    const key2 = uid('other-key');
    const b = uid('MAIL');
    await create({ event_id: b, dedupe_key: key2 });
    expect((await patch(b, { status: 'blocked', data: { error: 'smtp down', next_step: 'retry later' } })).status).toBe(200);
    expect((await post({ event_id: uid('MAIL'), domain: 'test', action: 'x', dedupe_key: key2 })).status).toBe(201);
  });

  test('concurrent creates with one dedupe_key: exactly one is stored', async () => {
    const key = uid('race');
    const results = await Promise.all(Array.from({ length: 6 }, () => settle(post({ event_id: uid('RACE'), domain: 'test', action: 'x', dedupe_key: key }))));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(5);
    const { rows: r } = await t.sys.pool.query('SELECT count(*)::int AS n FROM intents WHERE dedupe_key = $1', [key]);
    expect(r[0].n).toBe(1);
  });
});

test('the OpenAPI document lists the OML routes', async () => {
  const r = await t.tk.call('openapi');
  const paths = r.body.paths as Record<string, any>;
  expect(Object.keys(paths)).toEqual(expect.arrayContaining(['/api/events', '/api/events/log', '/api/events/{eventId}/status', '/api/events/pending', '/api/events/{eventId}', '/api/events/{eventId}/verify', '/api/stats', '/api/health']));
  expect(paths['/api/events'].post.requestBody.content['application/json'].schema.properties.event_id).toBeDefined();
});
