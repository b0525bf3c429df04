/**
 * The one Temporal config (deploy/temporal/server.yaml) rendered by the real server 1.29.1
 * (`server render-config`, the code path `start` loads it with) from both callers'
 * environments: docker-compose.yml's `temporal` service and `npm run cluster`'s
 * (lib/cluster/temporal-server.ts serverEnvironment). The static checks are in
 * test/unit/compose.test.ts; this one proves the template renders into what each expects.
 * Runs with TIMEKEEPER_TEST_TEMPORAL=server (the server binary is built then), skipped otherwise.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { ensureServerBinaries, SERVER_CONFIG_FILE, serverEnvironment } from '../../lib/cluster/temporal-server';
import { testTemporal } from '../support/test-temporal';

const execFileP = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');

type Dict = Record<string, any>;

async function render(env: Record<string, string>): Promise<Dict> {
  const { server } = await ensureServerBinaries(() => undefined);
  const { stdout } = await execFileP(server, ['--config', path.dirname(SERVER_CONFIG_FILE), '--env', path.basename(SERVER_CONFIG_FILE, '.yaml'), 'render-config'], {
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  return parse(stdout) as Dict; // the loader's own lines go to stderr
}

/** compose's `temporal` environment, each ${VAR:-default} at its default (a fresh checkout). */
function composeTemporalEnv(): Record<string, string> {
  const doc = parse(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as Dict;
  const env = doc.services.temporal.environment as Record<string, string>;
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')]));
}

const onServer = testTemporal() === 'server' ? describe : describe.skip;

onServer('deploy/temporal/server.yaml rendered by the Temporal server 1.29.1', () => {
  test("with compose's environment: its PostgreSQL, 512 shards, all interfaces, the mounted dynamic config", async () => {
    const c = await render(composeTemporalEnv());
    expect(c.persistence.numHistoryShards).toBe(512);
    expect(c.persistence.datastores.default.sql).toMatchObject({ pluginName: 'postgres12', databaseName: 'temporal', connectAddr: 'temporal-db:5432', user: 'temporal' });
    expect(c.persistence.datastores.visibility.sql).toMatchObject({ databaseName: 'temporal_visibility', connectAddr: 'temporal-db:5432' });
    expect(c.services.frontend.rpc).toMatchObject({ grpcPort: 7233, bindOnIP: '0.0.0.0' });
    expect(c.dynamicConfigClient.filepath).toBe('config/dynamicconfig/timekeeper.yaml');
  });

  test("with npm run cluster's environment: the same shards, ports derived from TEMPORAL_PORT", async () => {
    const env = serverEnvironment({ databaseUrl: 'postgres://postgres:pw@127.0.0.1:5433/x', databases: { main: 'tk_temporal', visibility: 'tk_temporal_visibility' }, port: 17233 });
    const c = await render(env);
    expect(c.persistence.numHistoryShards).toBe(512);
    expect(c.persistence.datastores.default.sql).toMatchObject({ databaseName: 'tk_temporal', connectAddr: '127.0.0.1:5433', user: 'postgres' });
    expect(c.persistence.datastores.visibility.sql.databaseName).toBe('tk_temporal_visibility');
    expect(c.services.frontend.rpc).toMatchObject({ grpcPort: 17233, httpPort: 17243, membershipPort: 16933, bindOnIP: '127.0.0.1' });
    expect(c.services.history.rpc.grpcPort).toBe(17234);
    expect(c.services.matching.rpc.grpcPort).toBe(17235);
    expect(c.services.worker.rpc.grpcPort).toBe(17239);
    expect(c.dynamicConfigClient.filepath).toBe(path.join(ROOT, 'deploy', 'temporal', 'dynamicconfig.yaml'));
  });

  test('a DB other than PostgreSQL is refused when the config renders', async () => {
    await expect(render({ ...composeTemporalEnv(), DB: 'mysql8' })).rejects.toThrow(/DB must be postgres12/);
  });
});
