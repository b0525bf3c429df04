/**
 * What the RunStatus search-attribute upsert at a run's finish costs Temporal: the same run
 * shape with and without it (bench/run-status/workflow.ts), started by a client with the run's
 * TaskId and RunStatus attributes on a private dev server (the production settings of
 * lib/temporal-server.ts), N runs at C at once per measurement, interleaved A B B A after a
 * warm-up pair. Prints per measurement the rate, the dev server's CPU per run (/proc) and this
 * process's (client and worker) CPU per run.
 *
 *   npx tsx bench/run-status/bench.ts [N=1000] [C=50] [rounds=3]
 */
import { Client, Connection } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { freePort, startDevServer } from '../../lib/temporal-server';
import { cpuMs } from '../procs';
import { RunStatusKey, TaskIdKey } from '../../lib/domain/platform/search-attributes';

async function main(): Promise<void> {
  const [n, c, rounds] = [Number(process.argv[2] ?? 1000), Number(process.argv[3] ?? 50), Number(process.argv[4] ?? 3)];
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const server = await startDevServer({ port: await freePort(), uiPort: 0, log: () => undefined });
  const pid = server.process.pid!;
  const client = new Client({ connection: await Connection.connect({ address: server.address }) });
  const taskQueue = `run-status-${process.pid}`;
  const worker = await Worker.create({
    connection: await NativeConnection.connect({ address: server.address }),
    taskQueue,
    workflowsPath: require.resolve('./workflow'),
    activities: { noop: async () => undefined },
  });
  const running = worker.run();
  let id = 0;
  const measure = async (type: 'runShapeWorkflow' | 'runShapeUpsertWorkflow') => {
    const [t0, c0, w0] = [cpuMs(pid), process.cpuUsage(), performance.now()];
    let next = 0;
    await Promise.all(
      Array.from({ length: c }, async () => {
        while (next < n) {
          next++;
          const h = await client.workflow.start(type, {
            taskQueue,
            workflowId: `run-status-${id++}`,
            typedSearchAttributes: new TypedSearchAttributes([
              { key: TaskIdKey, value: 'bench' },
              { key: RunStatusKey, value: 'running' },
            ]),
          });
          await h.result();
        }
      }),
    );
    const wall = performance.now() - w0;
    const own = process.cpuUsage(c0);
    // The visibility writes trail the completions: let them finish before reading Temporal's CPU.
    await new Promise((r) => setTimeout(r, 1500));
    const label = type === 'runShapeWorkflow' ? 'without upsert' : 'with upsert';
    console.log(`${label.padEnd(15)} ${n} runs at ${c}: ${((n / wall) * 1000).toFixed(1)}/s, Temporal ${((cpuMs(pid) - t0) / n).toFixed(2)} ms CPU/run, client+worker ${((own.user + own.system) / 1000 / n).toFixed(2)} ms/run`);
  };
  await measure('runShapeWorkflow');
  await measure('runShapeUpsertWorkflow');
  console.log('(warm-up above)');
  for (let r = 0; r < rounds; r++) {
    await measure('runShapeWorkflow');
    await measure('runShapeUpsertWorkflow');
    await measure('runShapeUpsertWorkflow');
    await measure('runShapeWorkflow');
  }
  worker.shutdown();
  await running;
  await server.stop();
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
