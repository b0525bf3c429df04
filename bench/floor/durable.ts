/**
 * The durable REST floor (issue 17): what the least design with Timekeeper's promises costs on
 * this machine. An agent's append must go over HTTP (the product's surface) and be committed to
 * PostgreSQL before it is acknowledged (acknowledged data is never lost), through a workflow
 * (the single writer). The one-writer floor (Update + no-op local activity) does neither, so a
 * ratio to it also counts the HTTP hop and the commit, which no design can leave out. This floor
 * does exactly those and nothing else:
 *
 *   bench client --HTTP--> bench/floor/durable-api.ts (own process: node:http + Temporal client)
 *     --Update--> floorWorkflow's `floorDurable` (the floor worker in the bench's process)
 *     --local activity--> one autocommitted INSERT (session id, k, content) into a scratch table
 *
 * No hash chain, dedup lookup, advisory lock, validation or admission: those are Timekeeper's
 * own work, which the ratio to this floor measures. The scratch table lives in the database the
 * bench is given (DATABASE_URL) and is dropped by close().
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Pool } from 'pg';
import { keepAliveFetch } from '../http';
import { agentEvent, type BenchTarget } from '../target';
import { BenchFailure, text } from '../measure';
import type { DurableFloorActivities } from './workflow';

export interface DurableStore {
  activities: DurableFloorActivities;
  close(): Promise<void>;
}

/** The scratch table and the activity that commits one row to it, from a warm pool of `clients` connections. */
export async function durableStore(databaseUrl: string, clients: number): Promise<DurableStore> {
  const table = `bench_floor_${process.pid}_${Date.now()}`;
  const pool = new Pool({ connectionString: databaseUrl, max: clients, application_name: 'timekeeper-bench-floor' });
  await pool.query(`CREATE TABLE ${table} (session_id text NOT NULL, seq bigint NOT NULL, content jsonb NOT NULL, PRIMARY KEY (session_id, seq))`);
  const warm = await Promise.all(Array.from({ length: clients }, () => pool.connect()));
  warm.forEach((c) => c.release());
  return {
    activities: {
      async store(row) {
        // Idempotent, as any durable writer's must be: a retry of a committed row (its workflow task
        // timed out on a saturated host and the local activity ran again) is answered, not refused forever.
        await pool.query(`INSERT INTO ${table} (session_id, seq, content) VALUES ($1, $2, $3) ON CONFLICT (session_id, seq) DO NOTHING`, [row.id, row.k, JSON.stringify(row.content)]);
        return row.k;
      },
    },
    async close() {
      await pool.query(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
      await pool.end();
    },
  };
}

export interface DurableApi {
  target: BenchTarget;
  /** The same front and row with a regular activity committing it (the design not chosen). */
  activityTarget: BenchTarget;
  close(): Promise<void>;
}

/** Starts the floor's HTTP front as its own process (tsx, as the benches run) and a target that calls it as the bench calls Timekeeper: keep-alive HTTP. */
export async function startDurableApi(address: string, namespace: string, taskQueue: string, sockets: number): Promise<DurableApi> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'durable-api.ts')], {
    env: { ...process.env, FLOOR_TEMPORAL: address, FLOOR_NAMESPACE: namespace, FLOOR_TASK_QUEUE: taskQueue },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /port (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`the durable floor's HTTP front exited (${code}) before listening`)));
  });
  const { fetch, close } = keepAliveFetch(sockets, 30_000);
  const base = `http://127.0.0.1:${port}`;
  const post = async (url: string, body: unknown) => {
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const parsed = (await r.json().catch(() => null)) as { code?: number } | null;
    if (r.status !== 200 || parsed?.code !== 200) throw new BenchFailure(`HTTP ${r.status}`, `HTTP ${r.status} ${text(parsed)}`);
  };
  return {
    target: {
      name: 'REST + Update + LA commit',
      init: (id) => post(`${base}/init?id=${encodeURIComponent(id)}`, { started: true }),
      append: (id, k) => post(`${base}/append?id=${encodeURIComponent(id)}&k=${k}`, agentEvent(k).content),
    },
    activityTarget: {
      name: 'REST + Update + activity commit',
      init: (id) => post(`${base}/init?id=${encodeURIComponent(id)}&via=activity`, { started: true }),
      append: (id, k) => post(`${base}/append?id=${encodeURIComponent(id)}&k=${k}&via=activity`, agentEvent(k).content),
    },
    async close() {
      close();
      child.kill('SIGTERM');
    },
  };
}
