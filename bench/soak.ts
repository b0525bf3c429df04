/**
 * `npm run soak`: the stability check (the timeline article's 24-hour soak, scaled by a
 * parameter): N sessions loop append + read for --minutes, and every --interval-s it prints the
 * success rate, latency p50/p99 and the resident memory (RSS) of every process involved, so a
 * leak shows as growth; it ends with the verdict (success >= 99.9 %) and RSS first vs last.
 *
 *   npm run soak -- --minutes 30 --pause-ms 200 > soak.log      # starts a private instance
 *   npm run soak -- --url http://127.0.0.1:8000 --watch api=1234 --watch temporal=5678
 *
 * Without --url it starts bench/rig-serve.ts --in-process as a child (own Temporal dev server on
 * SQLite, own embedded PostgreSQL, API and worker in one process, the `npm start` layout) and
 * watches that process tree: the node process (API + worker), the Temporal dev server, and
 * PostgreSQL (postmaster and every backend, summed: shared buffers count in each backend's RSS
 * once touched, so the sum over-counts them; its growth is what matters). A session is ended
 * (SESSION_END) and replaced after --session-appends appends, so creates, ends and
 * continue-as-new all run under the soak.
 */
import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { Pool } from 'pg';
import { TimekeeperClient } from '../sdk/client';
import { keepAliveFetch } from './http';
import { f1, Series, sleep, timed } from './measure';
import { descendants, rssMiB } from './procs';

interface Options {
  url?: string;
  minutes: number;
  intervalS: number;
  sessions: number;
  pauseMs: number;
  sessionAppends: number;
  watch: Map<string, number>;
}

const USAGE = `usage: npm run soak -- [options]
  --minutes M            duration (default 30)
  --interval-s S         report every S seconds (default 60)
  --sessions N           concurrent sessions, each one request at a time (default 10)
  --pause-ms P           pause after each append + read, per session (default 200; 0: flat out)
  --session-appends A    end a session and start a new one after A appends (default 1000)
  --url URL              drive a running Timekeeper instead of starting a private one
  --watch NAME=PID       with --url: a process whose RSS to report (repeatable)`;

function parseArgs(argv: string[]): Options {
  const o: Options = { minutes: 30, intervalS: 60, sessions: 10, pauseMs: 200, sessionAppends: 1000, watch: new Map() };
  const num = (k: string, v: string | undefined, min: number) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < min) throw new Error(`--${k} must be a number >= ${min}, got "${v}"\n${USAGE}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i].replace(/^--/, '');
    if (k === 'help' || k === 'h') {
      console.log(USAGE);
      process.exit(0);
    }
    const v = argv[++i];
    if (k === 'minutes') o.minutes = num(k, v, 0.1);
    else if (k === 'interval-s') o.intervalS = num(k, v, 1);
    else if (k === 'sessions') o.sessions = num(k, v, 1);
    else if (k === 'pause-ms') o.pauseMs = num(k, v, 0);
    else if (k === 'session-appends') o.sessionAppends = num(k, v, 1);
    else if (k === 'url') o.url = v;
    else if (k === 'watch') {
      const m = /^([\w-]+)=(\d+)$/.exec(v ?? '');
      if (!m) throw new Error(`--watch takes NAME=PID, got "${v}"`);
      o.watch.set(m[1], Number(m[2]));
    } else throw new Error(`unknown option ${argv[i - 1]}\n${USAGE}`);
  }
  return o;
}

/** RSS per group: the watched pids, or the private instance's tree grouped by what each process is. */
function memory(opts: Options, rootPid: number | undefined): Map<string, number> {
  const out = new Map<string, number>();
  if (rootPid === undefined) {
    for (const [name, pid] of opts.watch) out.set(name, rssMiB(pid));
    return out;
  }
  out.set('api+worker', rssMiB(rootPid));
  for (const p of descendants(rootPid)) {
    const group = p.comm.startsWith('temporal') ? 'temporal' : p.comm.startsWith('postgres') ? 'postgres' : p.comm === 'node' ? 'node-child' : undefined;
    if (group) out.set(group, (out.get(group) ?? 0) + rssMiB(p.pid));
    // Shared buffers count in every backend's RSS once touched; the private part shows a leak.
    if (group === 'postgres') out.set('postgres-private', (out.get('postgres-private') ?? 0) + rssMiB(p.pid, true));
  }
  return out;
}

// ---- the private instance ------------------------------------------------------------------

async function startInstance(): Promise<{ child: ChildProcess; url: string; databaseUrl: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'rig-serve.ts'), '--in-process'], {
    cwd: path.join(__dirname, '..'),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`rig-serve exited with ${code}: ${out.slice(-2000)}`)));
    child.stdout!.on('data', (b: Buffer) => {
      // After start-up its stdout is the API's request log: read and dropped (kept short).
      out = (out + b.toString()).slice(-20_000);
      const url = /^url (\S+)$/m.exec(out)?.[1];
      const databaseUrl = /^database (\S+)$/m.exec(out)?.[1];
      if (url && databaseUrl && /^pid /m.test(out)) resolve({ child, url, databaseUrl });
    });
  });
}

// ---- the loop ------------------------------------------------------------------------------

interface Interval {
  append: Series;
  read: Series;
  created: number;
  ended: number;
}

const fresh = (): Interval => ({ append: new Series(), read: new Series(), created: 0, ended: 0 });

async function sessionLoop(tk: TimekeeperClient, slot: number, runId: string, until: number, opts: Options, cur: () => Interval): Promise<void> {
  let gen = 0;
  while (Date.now() < until) {
    const id = `${runId}_${slot}_${gen++}`;
    // A failed create is counted as a failed append (the session gets no appends) and retried.
    if (!(await timed(cur().append, `${id} create`, () => tk.createSession({ session_id: id })))) {
      await sleep(1000);
      continue;
    }
    cur().created++;
    for (let k = 1; k <= opts.sessionAppends; k++) {
      if (Date.now() >= until) return;
      const key = `${id}-${k}`;
      // A failed append is retried with the same idempotency key, as clients are told to.
      for (let attempt = 0; attempt < 5; attempt++) {
        const ok = await timed(cur().append, `${id} append ${k}`, () => tk.append(id, { type: k % 2 ? 'USER_INPUT' : 'LLM_RESPONSE', content: { k }, idempotency_key: key }));
        if (ok) break;
        await sleep(1000);
      }
      await timed(cur().read, `${id} read`, () => tk.events(id, { after_seq: Math.max(0, k - 5), limit: 10 }));
      if (opts.pauseMs > 0) await sleep(opts.pauseMs);
    }
    if (await timed(cur().append, `${id} end`, () => tk.end(id, { reason: 'soak rotation' }))) cur().ended++;
  }
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const instance = opts.url ? undefined : await startInstance();
  const url = opts.url ?? instance!.url;
  const pool = instance ? new Pool({ connectionString: instance.databaseUrl, max: 1, application_name: 'timekeeper-soak' }) : undefined;
  const { fetch, close } = keepAliveFetch(opts.sessions, 60_000);
  const tk = new TimekeeperClient({ baseUrl: url, apiKey: process.env.BENCH_API_KEY || undefined, fetch, timeoutMs: 60_000 });
  const runId = `soak_${Date.now()}`;
  const start = Date.now();
  const until = start + opts.minutes * 60_000;
  console.log(`soak ${new Date(start).toISOString()}  url=${url}  ${opts.sessions} sessions, pause ${opts.pauseMs} ms, ${opts.minutes} min, report every ${opts.intervalS} s`);
  console.log('  min    appends  failed  success%  append p50/p99 ms  read p50/p99 ms  created/ended  pg conns  RSS MiB');

  let cur = fresh();
  const totals = { ok: 0, failed: 0 };
  const rssRows: Map<string, number>[] = [];
  const rootPid = instance?.child.pid;
  const report = async () => {
    const iv = cur;
    cur = fresh();
    const ok = iv.append.ms.length + iv.read.ms.length;
    const failed = iv.append.errors + iv.read.errors;
    totals.ok += ok;
    totals.failed += failed;
    const rss = memory(opts, rootPid);
    rssRows.push(rss);
    const conns = pool ? await pool.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend'").then((r) => String(r.rows[0].n), () => 'n/a') : 'n/a';
    const min = ((Date.now() - start) / 60_000).toFixed(1);
    const success = ok + failed ? (100 * ok) / (ok + failed) : NaN;
    const rssText = [...rss].map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', ');
    console.log(
      `  ${min.padStart(5)}  ${String(iv.append.ms.length).padStart(7)}  ${String(failed).padStart(6)}  ${success.toFixed(3).padStart(8)}  ${`${f1(iv.append.pct(50))}/${f1(iv.append.pct(99))}`.padStart(17)}  ${`${f1(iv.read.pct(50))}/${f1(iv.read.pct(99))}`.padStart(15)}  ${`${iv.created}/${iv.ended}`.padStart(13)}  ${conns.padStart(8)}  ${rssText}`,
    );
    for (const s of [...iv.append.samples, ...iv.read.samples].slice(0, 3)) console.log(`         ${s}`);
  };
  const timer = setInterval(() => void report(), opts.intervalS * 1000);
  try {
    await Promise.all(Array.from({ length: opts.sessions }, (_, i) => sessionLoop(tk, i, runId, until, opts, () => cur)));
  } finally {
    clearInterval(timer);
  }
  // The last, partial interval counts only if anything happened in it.
  if (cur.append.ms.length + cur.append.errors + cur.read.ms.length + cur.read.errors > 0) await report();
  const all = totals.ok + totals.failed;
  const success = all ? (100 * totals.ok) / all : NaN;
  console.log(`\nsummary: ${totals.ok} requests ok, ${totals.failed} failed: success ${success.toFixed(3)} % [${success >= 99.9 ? 'PASS' : 'MISS'}] (target >= 99.9 %)`);
  const first = rssRows[0];
  const last = rssRows[rssRows.length - 1];
  for (const [k, v] of first ?? []) {
    const l = last.get(k) ?? 0;
    console.log(`  RSS ${k}: first interval ${v.toFixed(0)} MiB, last ${l.toFixed(0)} MiB (${v ? (((l - v) / v) * 100).toFixed(1) : '-'} %)`);
  }
  close();
  await pool?.end();
  if (instance) {
    instance.child.kill('SIGTERM');
    await new Promise((r) => instance.child.once('exit', r));
  }
  if (success < 99.9) process.exitCode = 1;
}

main().catch((err) => {
  console.error(`soak failed: ${(err as Error).stack ?? err}`);
  process.exit(2);
});
