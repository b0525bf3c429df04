/**
 * POST /v1/signals over HTTP against the real system: accepted signals are stored once by
 * signal_id and reach the tasks listening to their name; bad input is a 400 naming the field
 * and stores nothing; a signal_id reused for other content is a 409. Delay and condition
 * tasks read back with their trigger in words and no clock fire times.
 */
import { refusal, uid, useTestSystem } from '../support';

const t = useTestSystem();
const agent = { type: 'webhook' as const, url: 'https://agent.example/run', prompt_template: 'go' };

const stored = async (signalId: string) => (await t.sys.pool.query('SELECT count(*)::int AS n FROM signals WHERE signal_id = $1', [signalId])).rows[0].n as number;

test('a signal is stored once by signal_id and delivered to the enabled tasks listening to its name', async () => {
  const name = uid('deploy');
  const delayTask = uid('followup');
  const condTask = uid('watch');
  const paused = uid('paused');
  const d = await t.tk.tasks.create({ task_id: delayTask, trigger: { type: 'delay', event: name, seconds: 600, deduplicate: true, dedupe_key: '{{values.host}}' }, agent });
  expect(d.definition.trigger).toEqual({ type: 'delay', event: name, seconds: 600, deduplicate: true, dedupe_key: '{{values.host}}' });
  expect(d.trigger_text).toBe(`10 min 0 s after each "${name}" signal, one run per dedupe key {{values.host}} for events that arrive while it waits`);
  expect(d.next_fire_times).toEqual([]);
  const c = await t.tk.tasks.create({ task_id: condTask, trigger: { type: 'condition', when: { any: [{ signal: name, op: '==', value: 'failed', field: 'result' }, { signal: 'other', op: '>', value: 1 }] } }, agent });
  expect(c.definition.trigger).toMatchObject({ timezone: 'UTC', delay_s: 0, cooldown_s: 0, when: { any: [{ for_s: 0 }, { for_s: 0 }] } });
  await t.tk.tasks.create({ task_id: paused, trigger: { type: 'delay', event: name, seconds: 1 }, agent, enabled: false });

  const signalId = uid('sig');
  const sent = await t.tk.call('sendSignal', { body: { name, value: 1, values: { host: 'web-1', result: 'failed' }, at: '2026-03-09T09:00:00+08:00', signal_id: signalId } });
  expect(sent.status).toBe(202);
  expect(sent.body).toMatchObject({ signal_id: signalId, name, at: '2026-03-09T01:00:00.000Z', deduplicated: false });
  expect(sent.body.delivered_to).toEqual([condTask, delayTask].sort());
  const again = await t.tk.signals.send({ name, value: 1, values: { result: 'failed', host: 'web-1' }, signal_id: signalId });
  expect(again).toMatchObject({ seq: sent.body.seq, deduplicated: true, at: '2026-03-09T01:00:00.000Z' });
  expect(await stored(signalId)).toBe(1);

  // The same id for other content is refused, and nothing changes.
  const reused = await refusal(t.tk.signals.send({ name, value: 2, signal_id: signalId }));
  expect(reused.status).toBe(409);
  expect(reused.body.errors?.[0]?.field).toBe('signal_id');

  // No listener: stored, delivered to nobody; an id is generated.
  const lone = await t.tk.signals.send({ name: uid('nobody') });
  expect(lone.delivered_to).toEqual([]);
  expect(lone.signal_id).toMatch(/^sig-[0-9a-f-]{36}$/);
  // Append-only for the application role.
  await expect(t.sys.pool.query('DELETE FROM signals WHERE signal_id = $1', [signalId])).rejects.toThrow(/permission denied for table signals/);
  await expect(t.sys.ownerPool.query('DELETE FROM signals WHERE signal_id = $1', [signalId])).rejects.toThrow(/append-only/);
});

test.each([
  ['no name', {}, 'name'],
  ['a name with spaces', { name: 'error rate' }, 'name'],
  ['a reserved task_run: name', { name: 'task_run:crawler' }, 'name'],
  ['an object value', { name: 'x', value: { a: 1 } }, 'value'],
  ['a nested values field', { name: 'x', values: { host: { name: 'web-1' } } }, 'values.host'],
  ['too many values', { name: 'x', values: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, i])) }, 'values'],
  ['an at without a zone', { name: 'x', at: '2026-03-09T09:00:00' }, 'at'],
  ['an unknown field', { name: 'x', colour: 'blue' }, 'colour'],
] as [string, Record<string, unknown>, string][])('refuses %s with a 400 naming the field, and stores nothing', async (_what, body, field) => {
  const signalId = uid('bad');
  const r = await t.tk.raw('POST', '/v1/signals', { body: { ...body, signal_id: signalId } });
  expect(r.status).toBe(400);
  expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(r.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  expect(await stored(signalId)).toBe(0);
});

test('a bad signal_id is refused naming it', async () => {
  const r = await t.tk.raw('POST', '/v1/signals', { body: { name: 'x', signal_id: ' spaced id' } });
  expect(r.status).toBe(400);
  expect(r.body.errors.map((e: { field: string }) => e.field)).toEqual(['signal_id']);
});
