/**
 * `npm run worker` alone (bin/worker.ts as its own process) with WORKER_METRICS_PORT: the
 * worker-side series are scraped from that process, and they move when the process does
 * the work (an append written by its activity), while the API in this test process, which
 * did not write it, shows no such change.
 */
import type { ChildProcess } from 'node:child_process';
import { freePort } from '../../lib/temporal-server';
import { spawnWorker, startTestSystem, TestSystem, testEnv, uniqueSessionId } from '../support';

let sys: TestSystem;
let worker: ChildProcess | undefined;

afterAll(async () => {
  worker?.kill('SIGKILL');
  await sys?.stop();
});

/** A counter's total over its label sets in a Prometheus text scrape (0 when absent). */
const counter = (text: string, name: string) =>
  [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))].reduce((sum, m) => sum + Number(m[1]), 0);

test('a worker-only process serves its own series on WORKER_METRICS_PORT, and they count its work', async () => {
  sys = await startTestSystem({ worker: false });
  const env = testEnv();
  const port = await freePort();
  // bin/worker.ts itself, ready once it logs its metrics address.
  worker = await spawnWorker(undefined, {
    script: 'bin/worker.ts',
    readyWhen: '/metrics',
    env: {
      DATABASE_URL: env.ownerUrl,
      APP_DATABASE_URL: env.appUrl,
      TEMPORAL_ADDRESS: env.temporalAddress,
      TEMPORAL_TASK_QUEUE: sys.config.taskQueue,
      WORKER_METRICS_PORT: String(port),
      HOST: '127.0.0.1',
      LOG_FORMAT: 'json',
    },
  });
  const scrape = async () => {
    const r = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('text/plain');
    return r.text();
  };

  const id = uniqueSessionId('wm');
  expect((await sys.tk.call('createSession', { body: { session_id: id } })).status).toBe(201);
  const before = counter(await scrape(), 'timekeeper_events_appended_total');
  for (let n = 0; n < 3; n++) await sys.tk.append(id, { type: 'USER_INPUT', content: { n } });
  const after = await scrape();
  expect(counter(after, 'timekeeper_events_appended_total') - before).toBe(3);
  expect(after).toMatch(/^process_resident_memory_bytes \d+/m);

  // The API's registry (this process) did not write them.
  const api = await (await fetch(`${sys.baseUrl}/metrics`)).text();
  expect(counter(api, 'timekeeper_events_appended_total')).toBe(0);

  // Only the one path is served.
  const other = await fetch(`http://127.0.0.1:${port}/`);
  expect(other.status).toBe(404);
  expect(await other.json()).toMatchObject({ error: 'not_found' });
}, 120_000);
