/**
 * `npm run bench:signals`: signals to delay triggers against a RUNNING Timekeeper (it starts
 * nothing but a local webhook agent, so the server needs OUTBOUND_ALLOW_HOSTS=127.0.0.1).
 *
 *   OUTBOUND_ALLOW_HOSTS=127.0.0.1 npm start &
 *   npm run bench:signals -- --tasks 20 --signals 50 --concurrency 5
 *
 * Creates --tasks delay tasks (seconds 0, no dedupe) listening to one signal name, sends
 * --signals signals (--concurrency at once) through tk.signals.send, and waits until every
 * task has one run per signal. Prints POST /v1/signals latency (request to 202: stored and
 * delivered to every listener), signal-to-run-start latency (run started_at minus the
 * signal's at), and runs missing or started twice (agent calls per run id). Deletes its
 * tasks at the end.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { TimekeeperClient } from '../sdk/client';

const USAGE = 'usage: npm run bench:signals -- [--url URL] [--tasks N] [--signals M] [--concurrency C]   (env BENCH_URL, BENCH_API_KEY)';

function options() {
  const flags = new Map<string, string>();
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith('--') || argv[i + 1] === undefined) throw new Error(`bad argument ${argv[i]}\n${USAGE}`);
    flags.set(argv[i].slice(2), argv[i + 1]);
  }
  const int = (k: string, d: number) => {
    const n = Number(flags.get(k) ?? d);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${k} must be a positive integer\n${USAGE}`);
    return n;
  };
  return { url: flags.get('url') ?? process.env.BENCH_URL ?? 'http://127.0.0.1:8000', tasks: int('tasks', 20), signals: int('signals', 50), concurrency: int('concurrency', 5) };
}

/** Nearest-rank percentile of a sorted copy. */
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil((p / 100) * xs.length) - 1)];
const fmt = (xs: number[]) => (xs.length ? `p50 ${pct(xs, 50).toFixed(0)} ms, p99 ${pct(xs, 99).toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms (n=${xs.length})` : 'no samples');

async function main(): Promise<void> {
  const o = options();
  const tk = new TimekeeperClient({ baseUrl: o.url, apiKey: process.env.BENCH_API_KEY, timeoutMs: 60_000 });
  const calls = new Map<string, number>();
  const agent = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const b = JSON.parse(body);
      calls.set(b.run_id, (calls.get(b.run_id) ?? 0) + 1);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ task_id: b.task_id, status: 'success', processed: 1, errors: [], summary: 'ok', next_action: null }));
    });
  });
  await new Promise<void>((ok) => agent.listen(0, '127.0.0.1', () => ok()));
  const agentUrl = `http://127.0.0.1:${(agent.address() as AddressInfo).port}`;

  const run = `${process.pid}-${Date.now().toString(36)}`;
  const event = `bench-${run}`;
  const ids = Array.from({ length: o.tasks }, (_, i) => `bench-signals-${run}-${i}`);
  for (const id of ids) {
    await tk.tasks.create({ task_id: id, trigger: { type: 'delay', event, seconds: 0 }, agent: { type: 'webhook', url: agentUrl, prompt_template: 'go' }, overlap: 'allow', max_concurrency: 100 });
  }

  const post: number[] = [];
  const sentAt = new Map<string, number>();
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: o.concurrency }, async () => {
      while (next < o.signals) {
        const i = next++;
        const start = performance.now();
        const r = await tk.signals.send({ name: event, value: i, signal_id: `${event}-${i}` });
        post.push(performance.now() - start);
        if (r.delivered_to.length !== o.tasks) throw new Error(`signal ${i} reached ${r.delivered_to.length} of ${o.tasks} tasks`);
        sentAt.set(r.signal_id, Date.parse(r.at));
      }
    }),
  );
  const sendMs = performance.now() - t0;

  const expected = o.tasks * o.signals;
  const deadline = Date.now() + 120_000 + expected * 50;
  let runs: { run_id: string; started_at: string | null; status: string }[] = [];
  while (Date.now() < deadline) {
    runs = (await Promise.all(ids.map((id) => tk.tasks.runs(id, { limit: 1000 })))).flatMap((x) => x.runs);
    if (runs.filter((r) => r.status === 'success').length >= expected) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  // A delay run without dedupe is run/<task>/delay/id:<signal_id>/<event time>.
  const startLag = runs.filter((r) => r.started_at).map((r) => Date.parse(r.started_at!) - sentAt.get(/\/delay\/id:(.+)\/[^/]+$/.exec(r.run_id)![1])!);
  const twice = [...calls.values()].filter((n) => n > 1).length;

  console.log(`bench:signals  ${o.tasks} delay tasks × ${o.signals} signals (concurrency ${o.concurrency}) against ${o.url}`);
  console.log(`  POST /v1/signals (stored + delivered to ${o.tasks} schedulers): ${fmt(post)}; ${((o.signals / sendMs) * 1000).toFixed(1)} signals/s`);
  console.log(`  signal at → run started:  ${fmt(startLag)}`);
  console.log(`  runs: expected ${expected}, succeeded ${runs.filter((r) => r.status === 'success').length}, missing ${expected - new Set(runs.map((r) => r.run_id)).size}, agent called twice for ${twice}`);

  for (const id of ids) await tk.tasks.delete(id);
  agent.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
