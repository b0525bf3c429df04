/**
 * `npm run bench:log`: the transparency log's figures (issue 19), on a scratch database of the
 * machine's PostgreSQL (dropped afterwards) and, for the load part, a private Temporal dev
 * server with the API and worker in this process.
 *
 *   npm run bench:log                       # 10,000,000 leaves, proofs, then the seed load
 *   npm run bench:log -- --leaves 1000000 --proofs 500 --no-load
 *
 * 1. Seed: --leaves leaf hashes generated straight into the tile store (the builder's own
 *    extend + tileStrips, whole tiles per INSERT), and a checkpoint at that size.
 * 2. Proofs: --proofs inclusion proofs (random leaf, tree = the seed) and consistency proofs
 *    (random older size to the seed), each as the API's route computes it (TlogStore tiles +
 *    lib/tlog/tree.ts): p50/p99. Target p99 <= 20 ms.
 * 3. Load (unless --no-load): the seed scenario (100 sessions x 5 appends, all sessions at once,
 *    through the typed client) twice, first without the log builder, then with it: append
 *    p50/p99 and appends/s each time (target: no slower with the log), and with the log the
 *    latency from each event's commit (its recorded_at) to the first checkpoint covering it
 *    (the checkpoint's recorded_at, same database clock). Target p99 <= 5 s.
 * Prints the load average before and after each part.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Client as TemporalClient } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { Client, Pool } from 'pg';
import { createApp } from '../api/app';
import { loadKeyStore } from '../api/auth';
import { TimekeeperApiError, TimekeeperClient } from '../api/client';
import { loadConfig } from '../lib/config';
import { createPool, quoteIdent, withDatabase } from '../lib/db';
import { configureLogger } from '../lib/log';
import { migrate } from '../lib/migrate';
import { checkpointBody, TlogStore } from '../lib/store/tlog';
import { ensureSearchAttributes } from '../lib/temporal';
import { freePort, startDevServer } from '../lib/temporal-server';
import { generateNoteKey, noteSigner, signNote } from '../lib/tlog/note';
import { cachedReader, consistencyProof, extend, inclusionProof, leafAt, leafHash, tileStrips } from '../lib/tlog/tree';
import { bundleWorkflows, createTimekeeperWorker } from '../worker/worker';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const LEAVES = arg('leaves', 10_000_000);
const PROOFS = arg('proofs', 1000);
const LOAD = !process.argv.includes('--no-load');

const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const ms = (x: number) => `${x.toFixed(1)} ms`;

async function seedTree(pool: Pool, n: number): Promise<{ root: Buffer }> {
  const chunk = 256 * 256; // whole level-0 tiles, a level-1 tile per chunk
  let size = 0;
  let frontier: Buffer[] = [];
  let root: Buffer = Buffer.alloc(32);
  const started = performance.now();
  while (size < n) {
    const take = Math.min(chunk, n - size);
    const leaves = Array.from({ length: take }, (_, i) => {
      const data = Buffer.alloc(32);
      data.writeUInt32BE(size + i, 28);
      return leafHash(data);
    });
    const r = extend(size, frontier, leaves);
    const strips = tileStrips(r.stored);
    await pool.query(
      'INSERT INTO tlog_tiles (level, tile_index, start, hashes) SELECT * FROM unnest($1::smallint[], $2::bigint[], $3::smallint[], $4::bytea[])',
      [strips.map((s) => s.level), strips.map((s) => s.tile), strips.map((s) => s.offset), strips.map((s) => s.hashes)],
    );
    ({ size, frontier, root } = r);
    if ((size / chunk) % 16 === 0 || size === n) process.stdout.write(`\r  seeded ${size.toLocaleString('en')} leaves (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
  process.stdout.write('\n');
  return { root };
}

/** Wall time of each call, and this process's CPU time over all of them (ms per call): on a loaded host the difference is the wait for a core. */
const cpuPerCall: number[] = [];
async function timeMany(count: number, one: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  const cpu = process.cpuUsage();
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await one();
    out.push(performance.now() - t);
  }
  const used = process.cpuUsage(cpu);
  cpuPerCall.push((used.user + used.system) / 1000 / count);
  return out;
}

async function main(): Promise<void> {
  const server = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const dbName = `timekeeper_bench_log_${process.pid}`;
  const ownerUrl = withDatabase(server, dbName);
  const admin = new Client({ connectionString: withDatabase(server, 'postgres') });
  await admin.connect();
  console.log(`bench:log  leaves ${LEAVES.toLocaleString('en')}, proofs ${PROOFS}, load ${LOAD}; database ${dbName}; load average ${load()}`);
  const cleanups: (() => Promise<unknown>)[] = [async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(dbName)} WITH (FORCE)`);
    await admin.end();
  }];
  try {
    await migrate(ownerUrl);
    const owner = createPool(ownerUrl, { max: 4 });
    cleanups.unshift(() => owner.end());

    // ---- 1. seed the tree -------------------------------------------------------------
    const t0 = performance.now();
    const { root } = await seedTree(owner, LEAVES);
    const key = generateNoteKey('bench/log');
    const note = signNote(checkpointBody('bench/log', LEAVES, root), noteSigner(key.signerKey));
    await owner.query(
      "INSERT INTO tlog_checkpoints (tree_size, root_hash, note, verifier_key, cursor_xid, cursor_source, cursor_chain, cursor_seq) VALUES ($1, $2, $3, $4, '0', 0, '', 1)",
      [LEAVES, root, note, key.verifierKey],
    );
    await owner.query('ANALYZE tlog_tiles');
    const tiles = await owner.query("SELECT count(*)::int AS n, pg_size_pretty(pg_total_relation_size('tlog_tiles')) AS size FROM tlog_tiles");
    console.log(`seed: ${LEAVES.toLocaleString('en')} leaves in ${((performance.now() - t0) / 1000).toFixed(1)} s, ${tiles.rows[0].n} tile strips, ${tiles.rows[0].size}; load average ${load()}`);

    // ---- 2. proofs --------------------------------------------------------------------
    const store = new TlogStore(owner);
    const rnd = (n: number) => Math.floor(Math.random() * n);
    await timeMany(20, () => inclusionProof(rnd(LEAVES), LEAVES, store.readTiles)); // warm the connections
    const inc = await timeMany(PROOFS, async () => {
      const i = rnd(LEAVES);
      const read = cachedReader(store.readTiles);
      await inclusionProof(i, LEAVES, read);
      await leafAt(i, read);
    });
    const con = await timeMany(PROOFS, () => consistencyProof(1 + rnd(LEAVES - 1), LEAVES, store.readTiles));
    // The floor: one indexed primary-key read of one tile, the least a proof can cost.
    const floor = await timeMany(PROOFS, () => owner.query('SELECT hashes FROM tlog_tiles WHERE level = 0 AND tile_index = $1 AND start = 0', [rnd(Math.floor(LEAVES / 256))]));
    const [, incCpu, conCpu] = cpuPerCall;
    console.log(`inclusion proofs   (${PROOFS}, tree ${LEAVES.toLocaleString('en')}): p50 ${ms(pct(inc, 50))}  p99 ${ms(pct(inc, 99))}  (target p99 <= 20 ms); this process's CPU ${ms(incCpu)} per proof`);
    console.log(`consistency proofs (${PROOFS}, to ${LEAVES.toLocaleString('en')}): p50 ${ms(pct(con, 50))}  p99 ${ms(pct(con, 99))}  (target p99 <= 20 ms); this process's CPU ${ms(conCpu)} per proof`);
    console.log(`floor: one tile read by primary key: p50 ${ms(pct(floor, 50))}  p99 ${ms(pct(floor, 99))}; load average ${load()}`);

    if (LOAD) await loadPart(ownerUrl, cleanups);
  } finally {
    for (const c of cleanups) await c().catch((e: Error) => console.error(`cleanup: ${e.message}`));
  }
}

/** The seed load without and with the log builder, and the commit → checkpoint latency. */
async function loadPart(ownerUrl: string, cleanups: (() => Promise<unknown>)[]): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  configureLogger({ level: 'warn' });
  const dev = await startDevServer({ port: await freePort(), uiPort: 0, log: () => undefined });
  cleanups.unshift(() => dev.stop());
  const connection = await NativeConnection.connect({ address: dev.address });
  cleanups.unshift(() => connection.close());
  await ensureSearchAttributes(connection, 'default');
  const client = new TemporalClient({ connection });
  const pool = createPool(ownerUrl);
  cleanups.unshift(() => pool.end());
  // One task queue: the API's session client sends there, each scenario's worker polls it.
  const config = { ...loadConfig({}), databaseUrl: ownerUrl, appDatabaseUrl: ownerUrl, secretsKey: randomBytes(32).toString('base64'), taskQueue: `bench-log-${process.pid}` };
  const app = createApp({ client, pool, config, keys: loadKeyStore(undefined) });
  const srv = http.createServer(app);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  cleanups.unshift(() => new Promise((r) => srv.close(r)));
  const tk = new TimekeeperClient({ baseUrl: `http://127.0.0.1:${(srv.address() as AddressInfo).port}` });
  const code = await bundleWorkflows();
  const keyFile = path.join(os.tmpdir(), `timekeeper-bench-log-${process.pid}.key`);
  fs.writeFileSync(keyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
  cleanups.unshift(async () => fs.rmSync(keyFile, { force: true }));

  const scenario = async (label: string, withLog: boolean) => {
    const worker = await createTimekeeperWorker({
      connection,
      namespace: 'default',
      taskQueue: config.taskQueue,
      pool,
      sessions: config,
      workflowBundle: { code },
      tlog: withLog ? { ...config, logSigningKeyFile: keyFile } : undefined,
    });
    const running = worker.run();
    let retries = 0;
    /** A write retried on 503 (overload on a loaded host) with the same idempotency key; a create that did land answers 409. */
    const retrying = async (call: () => Promise<unknown>): Promise<void> => {
      for (;;) {
        try {
          await call();
          return;
        } catch (e) {
          if (e instanceof TimekeeperApiError && e.status === 409) return;
          if (!(e instanceof TimekeeperApiError) || e.status !== 503 || retries++ > 1000) throw e;
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    };
    try {
      // Warm-up: this worker polls and answers before the clock starts.
      const prefix = `bench-${label}-${Date.now()}`;
      await retrying(() => tk.createSession({ session_id: `${prefix}-warm` }));
      const lat: number[] = [];
      const t = performance.now();
      await Promise.all(
        Array.from({ length: 100 }, async (_, s) => {
          const sid = `${prefix}-${s}`;
          await retrying(() => tk.createSession({ session_id: sid }));
          for (let i = 0; i < 5; i++) {
            const a = performance.now();
            await retrying(() => tk.append(sid, { type: 'USER_INPUT', content: { i }, idempotency_key: `k${i}` }));
            lat.push(performance.now() - a);
          }
        }),
      );
      const secs = (performance.now() - t) / 1000;
      console.log(`seed load, log ${withLog ? 'on ' : 'off'}: 500 appends, p50 ${ms(pct(lat, 50))}  p99 ${ms(pct(lat, 99))}  ${(500 / secs).toFixed(0)} appends/s (creates and appends included), ${retries} writes retried after 503; load average ${load()}`);
      return prefix;
    } finally {
      worker.shutdown();
      await running;
    }
  };
  await scenario('off', false);
  const prefix = await scenario('on', true);
  // Commit → first checkpoint covering the record, on the database clock.
  const probe = createPool(ownerUrl, { max: 1 });
  cleanups.unshift(() => probe.end());
  const deadline = Date.now() + 60_000;
  let rows: { ms: number | null }[] = [];
  for (;;) {
    ({ rows } = await probe.query(
      `SELECT extract(epoch FROM (SELECT min(c.recorded_at) FROM tlog_checkpoints c WHERE c.tree_size > l.log_index) - e.recorded_at) * 1000 AS ms
         FROM timeline_events e LEFT JOIN tlog_leaves l ON l.source = 0 AND l.chain_id = e.session_id AND l.seq = e.seq
        WHERE e.session_id LIKE $1`,
      [`${prefix}-%`],
    ));
    if (rows.every((r) => r.ms !== null) || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const cl = rows.filter((r) => r.ms !== null).map((r) => Number(r.ms));
  console.log(`commit -> checkpoint (${cl.length}/${rows.length} events covered): p50 ${ms(pct(cl, 50))}  p99 ${ms(pct(cl, 99))}  max ${ms(Math.max(...cl))}  (target p99 <= 5000 ms); load average ${load()}`);
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
