/**
 * A private Timekeeper for benchmarks that must not touch the machine's services: the fault
 * rig (own Temporal dev server, own embedded PostgreSQL, worker child, API in this process)
 * kept up until SIGINT/SIGTERM. Prints `url <base url>` when ready.
 *
 *   npx tsx bench/rig-serve.ts &  then  npm run bench:timeline -- --url <base url> --no-raw
 */
import { startFaultRig } from '../test/support/fault-rig';

async function main() {
  const rig = await startFaultRig({});
  await rig.startWorker();
  console.log(`url ${rig.baseUrl}`);
  const stop = async () => {
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
