/**
 * The fault suite at full scale, as issue 9 drove it: sessions appending continuously with
 * retries, then kill -9 of the worker, kill -9 of the API (its own process, `--scenario api`),
 * kill -9 of the Temporal dev server (restarted on its
 * SQLite file), and a PostgreSQL crash, each on private instances. Prints a table of figures.
 *
 *   npx tsx bench/faults.ts [--sessions 50] [--preload 300] [--scenario worker,api,temporal,postgres,overload] [--down-ms 5000]
 *   npx tsx bench/faults.ts --scenario overload [--creates 1000] [--baseline 100] [--api process|in-process]
 *
 * The overload scenario runs `--baseline` creates at once (below the create bound: the rate
 * without overload), then `--creates` at once, against the API in its own process.
 * BENCH_API_NODE_OPTIONS is handed to that API process as NODE_OPTIONS (e.g. a `--require`
 * of a profiler or event-loop-delay preload, to see where its time goes).
 */
import { startFaultRig } from '../test/support/fault-rig';
import { faultScenario, faultTable, OverloadRow, overload, Row } from '../test/support/fault-scenarios';
import { startFloor } from './floor/floor';

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const SESSIONS = Number(arg('sessions', '50'));
const PRELOAD = Number(arg('preload', '300'));
const DOWN_MS = Number(arg('down-ms', '5000'));
const SCENARIOS = arg('scenario', 'worker,api,temporal,postgres').split(',');
const SETTLE_MS = Number(arg('settle-ms', '20000'));
const log = (m: string) => console.log(`${new Date().toISOString().slice(11, 23)} ${m}`);

async function main() {
  const rig = await startFaultRig({ apiEnv: process.env.BENCH_API_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_API_NODE_OPTIONS } : undefined, log: (m) => (/TMPRL|timed out|exceeded/.test(m) ? log(m.slice(0, 300)) : undefined) });
  let worker = await rig.startWorker();
  log(`rig up: ${rig.baseUrl}, worker ${worker.pid}`);
  const opts = { sessions: SESSIONS, preload: PRELOAD, downMs: DOWN_MS, settleMs: SETTLE_MS, log };
  const rows: Row[] = [];
  const overloads: OverloadRow[] = [];
  try {
    for (const s of SCENARIOS) {
      if (s === 'overload') {
        // The load generator (this process) and the API (its own process, as `npm run api`)
        // do not share an event loop, unless --api in-process asks for the old set-up.
        const inProcess = arg('api', 'process') === 'in-process';
        const tk = inProcess ? rig.tk : (await rig.startApiProcess()).tk;
        // The same creates below the bound first: the rate without overload to compare with.
        const baseline = Number(arg('baseline', '100'));
        if (baseline > 0) overloads.push(await overload(rig, baseline, log, tk));
        overloads.push(await overload(rig, Number(arg('creates', '1000')), log, tk));
        if (!inProcess) await rig.killApiProcess();
      }
      if (s === 'worker')
        rows.push(
          await faultScenario(rig, 'worker kill -9', () => rig.killWorker(), async () => {
            worker = await rig.startWorker();
          }, opts),
        );
      if (s === 'api') {
        const api = await rig.startApiProcess();
        rows.push(await faultScenario(rig, 'api kill -9', () => rig.killApiProcess(), async () => void (await rig.startApiProcess()), { ...opts, tk: api.tk }));
        await rig.killApiProcess();
      }
      if (s === 'temporal') {
        // The engine's floor through the same kill: a no-op Update workflow on the same server.
        const floor = await startFloor(rig.temporalAddress, 'default');
        try {
          rows.push(await faultScenario(rig, 'temporal kill -9', () => rig.killTemporal(), () => rig.restartTemporal(), { ...opts, floor: floor.target }));
        } finally {
          await floor.close();
        }
      }
      if (s === 'postgres') rows.push(await faultScenario(rig, 'postgres crash', () => rig.crashPostgres(), () => rig.restartPostgres(), opts));
    }
  } finally {
    await rig.stop();
  }
  console.log('\n' + faultTable(rows, overloads));
  process.exit(overloads.some((o) => o.phantom > 0) || rows.some((r) => r.problems > 0 || r.unwritable > 0) ? 1 : 0);
}

void main().catch((e) => {
  console.error(e);
  process.exit(1);
});
