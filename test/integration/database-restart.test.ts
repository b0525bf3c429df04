/**
 * A PostgreSQL restart under a live worker, on a private PostgreSQL (never the machine's):
 * the worker survives connections dying while idle and while checked out mid-transaction,
 * appends sent during the outage stall and then complete once the database is back, and
 * nothing is lost or stored twice.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { SessionClient } from '../../clients/sessions';
import { createPool, withDatabase } from '../../lib/db';
import { EventType } from '../../lib/domain/sessions';
import { EmbeddedPostgres, startEmbeddedPostgres } from '../../lib/embedded-postgres';
import { migrate } from '../../lib/migrate';
import { freePort } from '../../lib/temporal-server';
import { SessionStore } from '../../lib/store/sessions';
import { createTimekeeperWorker, type TimekeeperWorker } from '../../worker/worker';
import { eventually, testEnv, uniqueSessionId } from '../support';

jest.setTimeout(180_000);

describe('PostgreSQL restart under a live worker', () => {
  let root: string;
  let pg: EmbeddedPostgres | undefined;
  let port: number;
  let connection: NativeConnection;
  let worker: TimekeeperWorker;
  let running: Promise<void>;
  let pool: ReturnType<typeof createPool>;
  let sessions: SessionClient;
  const dataDir = () => path.join(root, 'postgres');

  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-pg-restart-'));
    fs.chmodSync(root, 0o755); // as root, the server's own user must reach its folder below ours
    port = await freePort();
    pg = await startEmbeddedPostgres({ dataDir: dataDir(), port, log: () => undefined });
    const url = withDatabase(pg.url, 'timekeeper');
    await migrate(url);
    // The superuser URL: this test is about connections, not roles.
    pool = createPool(url, { connectionTimeoutMillis: 2000 });
    const env = testEnv();
    connection = await NativeConnection.connect({ address: env.temporalAddress });
    const taskQueue = `pg-restart-${process.pid}-${Date.now()}`;
    const settings = { maxContentBytes: 262144, updatesPerRun: 1000, writeTimeoutMs: 90_000 };
    worker = await createTimekeeperWorker({ connection, namespace: 'default', taskQueue, pool, sessions: settings, workflowBundle: { codePath: env.workflowBundle } });
    running = worker.run();
    sessions = new SessionClient({ client: new Client({ connection, namespace: 'default' }), pool, taskQueue, ...settings });
  });

  afterAll(async () => {
    if (worker?.getState() === 'RUNNING') worker.shutdown();
    await running?.catch(() => undefined);
    await connection?.close();
    await pool?.end().catch(() => undefined);
    await pg?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  /** Immediate shutdown (SIGQUIT to the postmaster), as `pg_ctl stop -m immediate`: connections just die. */
  async function crashPostgres(): Promise<void> {
    const pid = Number(fs.readFileSync(path.join(dataDir(), 'pgdata', 'postmaster.pid'), 'utf8').split('\n')[0]);
    process.kill(pid, 'SIGQUIT');
    await pg!.stop(); // resolves once the server has exited
  }

  test('a connection lost while checked out mid-transaction fails that transaction, not the process', async () => {
    const child = spawn(process.execPath, [require.resolve('tsx/cli'), path.join(__dirname, '..', 'support', 'checked-out-client-probe.ts'), withDatabase(pg!.url, 'timekeeper')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    await eventually(
      'the probe inside its transaction',
      () => {
        if (child.exitCode !== null) throw new Error(`probe exited early: ${out} ${err}`);
        return out.includes('in-transaction');
      },
      { timeoutMs: 60_000, stepMs: 50, errors: 'throw' },
    );
    await crashPostgres();
    const code = await exited;
    pg = await startEmbeddedPostgres({ dataDir: dataDir(), port, log: () => undefined });
    expect(err).not.toMatch(/Unhandled 'error' event/);
    expect(code).toBe(0);
    expect(out).toMatch(/rejected: .*(terminated|ECONNREFUSED|not queryable)/i);
  });

  test('appends stall during the outage and complete after it; the worker lives; nothing lost or doubled', async () => {
    const ids = [0, 1, 2, 3].map(() => uniqueSessionId('pgr'));
    for (const id of ids) await sessions.create({ sessionId: id });

    // Continuous load, one writer per session, each append retried with its key as clients are told to.
    let stop = false;
    const acked = new Map<string, number>(ids.map((id) => [id, 0]));
    const writers = ids.map(async (id) => {
      for (let n = 1; !stop; n++) {
        await sessions.append({ sessionId: id, type: EventType.UserInput, content: { n }, idempotencyKey: `k${n}` });
        acked.set(id, n);
      }
    });
    await new Promise((r) => setTimeout(r, 1500));
    await crashPostgres();
    const downAt = Date.now();
    await new Promise((r) => setTimeout(r, 4000));
    expect(worker.getState()).toBe('RUNNING');
    const ackedWhileDown = [...acked.values()];

    pg = await startEmbeddedPostgres({ dataDir: dataDir(), port, log: () => undefined });
    const upAt = Date.now();
    // Wait until every writer has completed an append after the restart.
    await eventually('every writer appending after the restart', () => [...acked.values()].every((n, i) => n > ackedWhileDown[i]), { timeoutMs: 120_000, stepMs: 100 });
    const resumedAt = Date.now();
    stop = true;
    await Promise.all(writers);
    expect(worker.getState()).toBe('RUNNING');
    // Recovery takes about as long as the append backoff cap (10 s), not minutes.
    expect(resumedAt - upAt).toBeLessThan(30_000);
    console.log(`database down ${upAt - downAt} ms; every session appending again ${resumedAt - upAt} ms after it was back`);

    // Each chain holds exactly the acknowledged appends, once each, in order, and verifies.
    const store = new SessionStore(pool);
    for (const id of ids) {
      const n = acked.get(id)!;
      const events = await store.listEvents(id, { limit: 10_000 });
      expect(events.map((e) => e.seq)).toEqual(Array.from({ length: n + 1 }, (_, i) => i + 1));
      expect(events.slice(1).map((e) => e.idempotency_key)).toEqual(Array.from({ length: n }, (_, i) => `k${i + 1}`));
      expect((await store.verify(id)).ok).toBe(true);
    }
  });
});
