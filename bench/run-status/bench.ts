/**
 * What a task run's search attributes cost Temporal: the run's Temporal shape (one no-op local
 * activity, then completion; bench/run-status/workflow.ts) started three ways, N runs at C at
 * once per measurement, interleaved A B C C B A after a warm-up of each:
 *   - `none`: no search attributes at all (the run found by its workflow id's `run/<task>/` prefix);
 *   - `task-id`: `TaskId` at the start only;
 *   - `task-id+status`: `TaskId` and `RunStatus` at the start and the `RunStatus` upsert at the
 *     finish (the run's shape up to stop 37).
 * On a private dev server (the production settings of lib/temporal-server.ts) by default, or
 * with `--server pg` on the production server (1.29.1, lib/cluster/temporal-server.ts) on the
 * machine's PostgreSQL in two private databases, dropped at the end. Prints per measurement the
 * rate, Temporal's CPU per run (/proc; with `--server pg` also PostgreSQL's, all its processes)
 * and this process's (client and worker).
 *
 *   npx tsx bench/run-status/bench.ts [N=1000] [C=50] [rounds=3] [--server dev|pg]
 */
import { execFileSync } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { freePort, startDevServer } from '../../lib/temporal-server';
import { ensureServerBinaries, freeTemporalPort, prepareTemporalDatabases, startTemporalServer, temporalDatabases } from '../../lib/cluster/temporal-server';
import { cpuMs, treeCpuMs } from '../procs';
import { RunStatusKey, TaskIdKey } from '../../lib/domain/platform/search-attributes';
import { floorThreadsLikeTimekeeper } from '../floor/threads';
import { dropTestTemporal } from '../../test/support/test-temporal';

type Variant = 'none' | 'task-id' | 'task-id+status';
const VARIANTS: Variant[] = ['none', 'task-id', 'task-id+status'];

const attributesOf = (v: Variant) =>
  v === 'none' ? undefined : new TypedSearchAttributes(v === 'task-id' ? [{ key: TaskIdKey, value: 'bench' }] : [{ key: TaskIdKey, value: 'bench' }, { key: RunStatusKey, value: 'running' }]);

/** The machine's PostgreSQL postmaster (the oldest `postgres` process), whose tree serves the `--server pg` databases. */
const postmasterPid = (): number => Number(execFileSync('pgrep', ['-o', '-x', 'postgres']).toString().trim());

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const serverAt = args.indexOf('--server');
  const kind = serverAt >= 0 ? args.splice(serverAt, 2)[1] : 'dev';
  if (kind !== 'dev' && kind !== 'pg') throw new Error(`--server is dev or pg, got ${kind}`);
  const [n, c, rounds] = [Number(args[0] ?? 1000), Number(args[1] ?? 50), Number(args[2] ?? 3)];
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  // Named as the tests name theirs (`<base>_temporal`), so dropTestTemporal drops them.
  const dbBase = `bench_run_status_${process.pid}`;
  const dbs = temporalDatabases(`${dbBase}_temporal`);
  const server =
    kind === 'dev'
      ? await startDevServer({ port: await freePort(), uiPort: 0, log: () => undefined })
      : await (async () => {
          const bins = await ensureServerBinaries(() => undefined);
          await prepareTemporalDatabases(bins.sqlTool, databaseUrl, dbs, () => undefined);
          return startTemporalServer({ binary: bins.server, databaseUrl, databases: dbs, port: await freeTemporalPort(), namespace: 'default', log: () => undefined });
        })();
  const pid = server.process.pid!;
  const pgPid = kind === 'pg' ? postmasterPid() : undefined;
  const client = new Client({ connection: await Connection.connect({ address: server.address }) });
  const taskQueue = `run-status-${process.pid}`;
  floorThreadsLikeTimekeeper();
  const worker = await Worker.create({
    connection: await NativeConnection.connect({ address: server.address }),
    taskQueue,
    workflowsPath: require.resolve('./workflow'),
    activities: { noop: async () => undefined },
  });
  const running = worker.run();
  let id = 0;
  const measure = async (v: Variant) => {
    const [t0, p0, c0, w0] = [cpuMs(pid), pgPid ? treeCpuMs(pgPid) : 0, process.cpuUsage(), performance.now()];
    let next = 0;
    const typedSearchAttributes = attributesOf(v);
    await Promise.all(
      Array.from({ length: c }, async () => {
        while (next < n) {
          next++;
          const h = await client.workflow.start(v === 'task-id+status' ? 'runShapeUpsertWorkflow' : 'runShapeWorkflow', {
            taskQueue,
            workflowId: `run/bench/${id++}`,
            ...(typedSearchAttributes ? { typedSearchAttributes } : {}),
          });
          await h.result();
        }
      }),
    );
    const wall = performance.now() - w0;
    const own = process.cpuUsage(c0);
    // The visibility writes trail the completions: let them finish before reading Temporal's CPU.
    await new Promise((r) => setTimeout(r, 1500));
    const pg = pgPid ? `, PostgreSQL ${((treeCpuMs(pgPid) - p0) / n).toFixed(2)} ms` : '';
    console.log(`${v.padEnd(15)} ${n} runs at ${c}: ${((n / wall) * 1000).toFixed(1)}/s, Temporal ${((cpuMs(pid) - t0) / n).toFixed(2)} ms CPU/run${pg}, client+worker ${((own.user + own.system) / 1000 / n).toFixed(2)} ms/run`);
  };
  for (const v of VARIANTS) await measure(v);
  console.log('(warm-up above)');
  for (let r = 0; r < rounds; r++) for (const v of r % 2 ? [...VARIANTS].reverse() : [...VARIANTS, ...[...VARIANTS].reverse()]) await measure(v);
  // The prefix search that finds a task's runs without a search attribute (the Temporal UI's query).
  let found = 0;
  for await (const _ of client.workflow.list({ query: `WorkflowId STARTS_WITH "run/bench/"`, pageSize: 1000 })) if (++found >= 10) break;
  console.log(`WorkflowId STARTS_WITH "run/bench/": ${found >= 10 ? 'answers' : `found only ${found}`}`);
  worker.shutdown();
  await running;
  await server.stop();
  if (kind === 'pg') await dropTestTemporal(databaseUrl, dbBase);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
