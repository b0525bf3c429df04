/**
 * The embedded PostgreSQL fallback: init, start, query, stop, restart on the same data, stop.
 * Uses its own temp directory and a free port, so it never touches a system server on 5432.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { EmbeddedPostgres, startEmbeddedPostgres } from '../../lib/embedded-postgres';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

async function query<T extends object>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

describe('embedded PostgreSQL', () => {
  let root: string;
  let server: EmbeddedPostgres | undefined;
  const logs: string[] = [];

  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-embedded-pg-'));
    // mkdtemp makes the directory 0700; when we run as root, postgres runs as another user and must reach dataDir below it.
    fs.chmodSync(root, 0o755);
  });

  afterAll(async () => {
    await server?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('initialises, serves queries, keeps data across a restart and stops', async () => {
    const dataDir = path.join(root, 'postgres');
    const port = await freePort();
    const log = (line: string) => logs.push(line);

    let t0 = Date.now();
    server = await startEmbeddedPostgres({ dataDir, port, log });
    const firstStartMs = Date.now() - t0;
    expect(server.port).toBe(port);
    expect(new URL(server.url).hostname).toBe('127.0.0.1');
    expect(new URL(server.url).pathname).toBe('/postgres');
    expect(fs.existsSync(path.join(dataDir, 'pgdata', 'PG_VERSION'))).toBe(true);

    const [{ version }] = await query<{ version: string }>(server.url, 'SELECT version()');
    expect(version).toMatch(/^PostgreSQL \d+/);
    const [settings] = await query<{ listen: string; superuser: string }>(
      server.url,
      "SELECT current_setting('listen_addresses') AS listen, current_setting('is_superuser') AS superuser",
    );
    expect(settings).toEqual({ listen: '127.0.0.1', superuser: 'on' });

    await query(server.url, 'CREATE TABLE kept (id int PRIMARY KEY, note text NOT NULL)');
    await query(server.url, 'INSERT INTO kept VALUES ($1, $2)', [1, 'survives a restart']);
    expect(await query(server.url, 'SELECT id, note FROM kept')).toEqual([{ id: 1, note: 'survives a restart' }]);

    // Password auth: a wrong password is refused.
    const wrong = new URL(server.url);
    wrong.password = 'not-the-password';
    await expect(query(wrong.toString(), 'SELECT 1')).rejects.toThrow(/password authentication failed/);

    const firstUrl = server.url;
    await server.stop();
    await server.stop(); // idempotent
    await expect(query(firstUrl, 'SELECT 1')).rejects.toThrow();

    t0 = Date.now();
    server = await startEmbeddedPostgres({ dataDir, port, log });
    const restartMs = Date.now() - t0;
    expect(server.url).toBe(firstUrl); // same stored password
    expect(await query(server.url, 'SELECT id, note FROM kept')).toEqual([{ id: 1, note: 'survives a restart' }]);
    expect(logs.filter((l) => l.startsWith('initdb:')).length).toBeGreaterThan(0);
    expect(logs.some((l) => /database system is ready to accept connections/.test(l))).toBe(true);

    await server.stop();
    await expect(query(server.url, 'SELECT 1')).rejects.toThrow();
    expect(fs.existsSync(path.join(dataDir, 'pgdata', 'postmaster.pid'))).toBe(false);
    server = undefined;

    console.log(`embedded PostgreSQL: ${version.split(' on ')[0]}; init+start ${firstStartMs} ms, restart ${restartMs} ms`);
  });

  it('reports a port that is already taken', async () => {
    const port = await freePort();
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
    try {
      await expect(startEmbeddedPostgres({ dataDir: path.join(root, 'busy'), port })).rejects.toThrow(/already in use/);
      expect(fs.existsSync(path.join(root, 'busy'))).toBe(false); // failed before initdb
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});
