/**
 * A private Timekeeper for benchmarks that must not touch the machine's services: the fault
 * rig (own Temporal dev server, own embedded PostgreSQL, API in this process) kept up until
 * SIGINT/SIGTERM. The worker runs in a child process (`npm run api` + `npm run worker`), or with
 * --in-process in this process on the API's native connection (the `npm start` layout).
 * --workers N starts N worker children. Prints `url <base url>` and `temporal <address>` when ready.
 *
 *   npx tsx bench/rig-serve.ts --in-process &
 *   npm run bench:timeline -- --url <base url> --temporal <address> --no-raw
 */
import type { NativeConnection } from '@temporalio/worker';
import { startFaultRig } from '../test/support/fault-rig';
import { createTimekeeperWorker } from '../worker/worker';

async function main() {
  const args = process.argv.slice(2);
  const inProcess = args.includes('--in-process');
  const i = args.indexOf('--workers');
  const children = i >= 0 ? Number(args[i + 1]) : inProcess ? 0 : 1;
  const rig = await startFaultRig({});
  let stopWorker = async () => undefined as void;
  if (inProcess) {
    const worker = await createTimekeeperWorker({
      connection: rig.client.connection as NativeConnection,
      namespace: rig.config.temporalNamespace,
      taskQueue: rig.config.taskQueue,
      pool: rig.pool,
    });
    const running = worker.run();
    stopWorker = async () => {
      worker.shutdown();
      await running.catch(() => undefined);
    };
  }
  for (let n = 0; n < children; n++) await rig.startWorker();
  console.log(`url ${rig.baseUrl}`);
  console.log(`temporal ${rig.temporalAddress}`);
  console.log(`database ${rig.config.databaseUrl}`);
  console.log(`pid ${process.pid}`);
  const stop = async () => {
    await stopWorker();
    await rig.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}
void main().catch((e) => {
  console.error(e);
  process.exit(1);
});
