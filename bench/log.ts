/**
 * `npm run bench:log`: the transparency log's figures (issue 19), on a scratch database of the
 * machine's PostgreSQL (dropped afterwards) and, for the load part, a private Temporal dev
 * server with the API and worker in this process.
 *
 *   npm run bench:log                       # 10,000,000 leaves, proofs, then the seed load
 *   npm run bench:log -- --leaves 1000000 --proofs 500 --no-load
 *   npm run bench:log -- --no-load --keep-db tk_bench_log_10m   # seed once, keep, reuse next time
 *
 * 1. Seed: --leaves leaf hashes generated straight into the tile store (the builder's own
 *    extend + tileStrips, whole tiles per INSERT), and a checkpoint at that size.
 * 2. Proofs: --proofs rounds of an inclusion proof (random leaf, tree = the seed), a
 *    consistency proof (random older size to the seed), each as the API's route computes it
 *    (TlogStore's published size and tiles + lib/tlog/tree.ts), and the floor (one tile read by
 *    primary key), interleaved; without and with the tile cache: p50/p99/max and CPU per call.
 *    Target p99 <= 20 ms.
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
import { TimekeeperApiError, TimekeeperClient } from '../sdk/client';
import { loadConfig } from '../lib/config';
import { createPool, quoteIdent, withDatabase } from '../lib/db';
import { configureLogger } from '../lib/log';
import { migrate } from '../lib/migrate';
import { checkpointBody, TlogStore } from '../lib/store/tlog';
import { DEFAULT_TILE_CACHE_BYTES } from '../lib/tlog/tile-cache';
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
/** --keep-db NAME: use (and keep) that scratch database; a tree already seeded there at --leaves is reused (seeding 10M leaves takes minutes). */
const KEEP_DB = process.argv.includes('--keep-db') ? process.argv[process.argv.indexOf('--keep-db') + 1] : undefined;

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

/** Wall time and this process's CPU time (user + system) of each call: on a loaded host the difference is mostly the wait for a core. */
class Timing {
  wall: number[] = [];
  cpu = 0;
  async time(one: () => Promise<unknown>): Promise<void> {
    const c = process.cpuUsage();
    const t = performance.now();
    await one();
    this.wall.push(performance.now() - t);
    const used = process.cpuUsage(c);
    this.cpu += (used.user + used.system) / 1000;
  }
  summary(): string {
    return `p50 ${ms(pct(this.wall, 50))}  p99 ${ms(pct(this.wall, 99))}  max ${ms(Math.max(...this.wall))}  CPU ${(this.cpu / this.wall.length).toFixed(2)} ms a call`;
  }
}

async function main(): Promise<void> {
  const server = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const dbName = KEEP_DB ?? `timekeeper_bench_log_${process.pid}`;
  const ownerUrl = withDatabase(server, dbName);
  const admin = new Client({ connectionString: withDatabase(server, 'postgres') });
  await admin.connect();
  console.log(`bench:log  leaves ${LEAVES.toLocaleString('en')}, proofs ${PROOFS}, load ${LOAD}; database ${dbName}; load average ${load()}`);
  const cleanups: (() => Promise<unknown>)[] = [async () => {
    if (!KEEP_DB) await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(dbName)} WITH (FORCE)`);
    await admin.end();
  }];
  try {
    await migrate(ownerUrl);
    const owner = createPool(ownerUrl, { max: 4 });
    cleanups.unshift(() => owner.end());

    // ---- 1. seed the tree -------------------------------------------------------------
    const t0 = performance.now();
    const seeded = await owner.query('SELECT max(tree_size)::bigint AS size FROM tlog_checkpoints');
    if (seeded.rows[0].size !== null && Number(seeded.rows[0].size) !== LEAVES) throw new Error(`${dbName} holds a tree of ${seeded.rows[0].size} leaves, not --leaves ${LEAVES}`);
    if (seeded.rows[0].size === null) {
      const { root } = await seedTree(owner, LEAVES);
      const key = generateNoteKey('bench/log');
      const note = signNote(checkpointBody('bench/log', LEAVES, root), noteSigner(key.signerKey));
      await owner.query(
        "INSERT INTO tlog_checkpoints (tree_size, root_hash, note, verifier_key, cursor_xid, cursor_source, cursor_chain, cursor_seq) VALUES ($1, $2, $3, $4, '0', 0, '', 1)",
        [LEAVES, root, note, key.verifierKey],
      );
      await owner.query('ANALYZE tlog_tiles');
    } else console.log(`seed: reusing the tree of ${LEAVES.toLocaleString('en')} leaves in ${dbName}`);
    const tiles = await owner.query("SELECT count(*)::int AS n, pg_size_pretty(pg_total_relation_size('tlog_tiles')) AS size FROM tlog_tiles");
    console.log(`seed: ${LEAVES.toLocaleString('en')} leaves in ${((performance.now() - t0) / 1000).toFixed(1)} s, ${tiles.rows[0].n} tile strips, ${tiles.rows[0].size}; load average ${load()}`);

    // ---- 2. proofs --------------------------------------------------------------------
    // Interleaved, one inclusion proof, one consistency proof and one floor read per round, so
    // that the three see the same load; twice: without the tile cache (LOG_TILE_CACHE_BYTES=0)
    // and with the default one (a fresh store: its cache fills during the run).
    const rnd = (n: number) => Math.floor(Math.random() * n);
    const floorRead = () => owner.query('SELECT hashes FROM tlog_tiles WHERE level = 0 AND tile_index = $1 AND start = 0', [rnd(Math.floor(LEAVES / 256))]);
    for (let i = 0; i < 20; i++) await floorRead(); // warm the connections
    for (const [label, cacheBytes] of [['tile cache off', 0], [`tile cache ${DEFAULT_TILE_CACHE_BYTES / 2 ** 20} MiB`, DEFAULT_TILE_CACHE_BYTES]] as const) {
      const store = new TlogStore(owner, { tileCacheBytes: cacheBytes });
      // As the routes (api/tlog/routes.ts) compute them: the published size, the tiles, the hashes.
      const inclusion = async () => {
        const i = rnd(LEAVES);
        if ((await store.publishedSize(LEAVES)) < LEAVES) throw new Error('no checkpoint at the seeded size');
        const read = cachedReader(store.readTiles);
        await inclusionProof(i, LEAVES, read);
        await leafAt(i, read);
      };
      const consistency = async () => {
        if ((await store.publishedSize(LEAVES)) < LEAVES) throw new Error('no checkpoint at the seeded size');
        await consistencyProof(1 + rnd(LEAVES - 1), LEAVES, store.readTiles);
      };
      const kinds = { inclusion: new Timing(), consistency: new Timing(), floor: new Timing() };
      for (let i = 0; i < PROOFS; i++) {
        await kinds.inclusion.time(inclusion);
        await kinds.consistency.time(consistency);
        await kinds.floor.time(floorRead);
      }
      console.log(`${label} (${PROOFS} rounds, tree ${LEAVES.toLocaleString('en')}; target p99 <= 20 ms):`);
      for (const [kind, t] of Object.entries(kinds)) console.log(`  ${kind.padEnd(12)} ${t.summary()}`);
      console.log(`  (floor: one tile read by primary key; CPU: this process's user+system time per call); load average ${load()}`);
    }

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
