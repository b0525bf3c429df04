/**
 * The fault suite at full scale, as issue 9 drove it: sessions appending continuously with
 * retries, then kill -9 of the worker, kill -9 of the Temporal dev server (restarted on its
 * SQLite file), and a PostgreSQL crash, each on private instances. Prints a table of figures.
 *
 *   npx tsx bench/faults.ts [--sessions 50] [--preload 300] [--scenario worker,temporal,postgres] [--down-ms 5000]
 */
import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { TimekeeperApiError } from '../api/client';
import { FaultRig, startFaultRig } from '../test/support/fault-rig';
import { checkStored, longestStall, percentile, recoveryTimes, startLoad } from '../test/support/fault-load';

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const SESSIONS = Number(arg('sessions', '50'));
const PRELOAD = Number(arg('preload', '300'));
const DOWN_MS = Number(arg('down-ms', '5000'));
const SCENARIOS = arg('scenario', 'worker,temporal,postgres').split(',');
const SETTLE_MS = Number(arg('settle-ms', '20000'));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (m: string) => console.log(`${new Date().toISOString().slice(11, 23)} ${m}`);

interface Row {
  scenario: string;
  sessions: number;
  acked: number;
  errors: number;
  recoveryP50: number;
  recoveryMax: number;
  unwritable: number;
  stallMax: number;
  problems: number;
}

async function preload(rig: FaultRig, ids: string[], n: number): Promise<void> {
  // Bursts of concurrent appends grow the histories fast (many updates per workflow task).
  const burst = 25;
  await Promise.all(
    ids.map(async (id) => {
      for (let i = 0; i < n; i += burst) {
        await Promise.all(
          Array.from({ length: Math.min(burst, n - i) }, (_, j) =>
            rig.tk.append(id, { type: 'USER_INPUT', content: { pre: i + j }, idempotency_key: `p${i + j}` }),
          ),
        );
      }
    }),
  );
}

async function scenario(rig: FaultRig, name: string, fault: () => Promise<void>, heal: () => Promise<void>): Promise<Row> {
  const ids = Array.from({ length: SESSIONS }, () => `f_${name.split(" ")[0]}_${randomUUID().slice(0, 8)}`);
  for (const id of ids) await rig.tk.createSession({ session_id: id });
  if (PRELOAD > 0) {
    const t = Date.now();
    await preload(rig, ids, PRELOAD);
    log(`${name}: preloaded ${SESSIONS} × ${PRELOAD} in ${Date.now() - t} ms`);
  }
  const load = startLoad(rig.tk, ids);
  await sleep(5000);
  log(`${name}: fault`);
  await fault();
  const downAt = Date.now();
  await sleep(DOWN_MS);
  await heal();
  const readyAt = Date.now();
  log(`${name}: healed after ${readyAt - downAt} ms down`);
  // Wait until every session has an acknowledgement after the heal (or give up).
  const deadline = readyAt + 180_000;
  while (Date.now() < deadline && recoveryTimes(load, readyAt).some((t) => t === Infinity)) await sleep(200);
  await sleep(SETTLE_MS);
  const end = Date.now();
  await load.stop();
  const rec = recoveryTimes(load, readyAt);
  if (process.env.FAULTS_DEBUG) await dumpHistory(rig, ids[rec.indexOf(Math.max(...rec))], downAt, readyAt);
  const problems = await checkStored(rig.pool, load);
  for (const p of problems.slice(0, 10)) log(`  problem: ${p}`);
  for (const [k, v] of [...load.errors.byKind].sort((a, b) => b[1] - a[1]).slice(0, 8)) log(`  error ×${v}: ${k}`);
  return {
    scenario: name,
    sessions: SESSIONS,
    acked: load.sessions.reduce((a, s) => a + s.acks.length, 0),
    errors: load.errors.total,
    recoveryP50: percentile(rec, 50),
    recoveryMax: Math.max(...rec),
    unwritable: rec.filter((t) => t > 10_000).length,
    stallMax: Math.max(...longestStall(load, readyAt, end)),
    problems: problems.length,
  };
}

/** The history events of one session around the fault, with times relative to the fault. */
async function dumpHistory(rig: FaultRig, id: string, downAt: number, readyAt: number): Promise<void> {
  const h = await rig.client.workflow.getHandle(`session/${id}`).fetchHistory();
  const evs = h.events ?? [];
  log(`history of ${id}: ${evs.length} events; ready at +${readyAt - downAt} ms`);
  for (const e of evs) {
    const t = Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6) - downAt;
    if (t < -1500 || t > readyAt - downAt + 15_000) continue;
    const a = e.workflowTaskTimedOutEventAttributes ?? e.workflowTaskFailedEventAttributes ?? e.workflowTaskScheduledEventAttributes;
    console.log(`  +${t} ms ${e.eventId} ${(temporal.api.enums.v1.EventType[e.eventType as number] ?? String(e.eventType)).replace('EVENT_TYPE_', '')} ${a ? JSON.stringify(a).slice(0, 160) : ''}`);
  }
}

interface OverloadRow {
  creates: number;
  created: number;
  refused: number;
  refusedMaxMs: number;
  acceptedP50Ms: number;
  acceptedMaxMs: number;
  unknown: number;
  phantom: number;
  seconds: number;
}

/** N creates at once: refusals come at once and are not stored; accepted ones answer in time. */
async function overload(rig: FaultRig, n: number): Promise<OverloadRow> {
  const ids = Array.from({ length: n }, (_, i) => `ov_${randomUUID().slice(0, 8)}_${i}`);
  const t0 = Date.now();
  const results = await Promise.all(
    ids.map(async (id) => {
      const t = Date.now();
      try {
        await rig.tk.createSession({ session_id: id });
        return { id, ok: true, ms: Date.now() - t, mayBeStored: true, status: 201 };
      } catch (err) {
        const e = err as TimekeeperApiError;
        return { id, ok: false, ms: Date.now() - t, mayBeStored: e.problem?.may_be_stored !== false, status: e.status ?? 0, detail: e.problem?.detail };
      }
    }),
  );
  const seconds = (Date.now() - t0) / 1000;
  await sleep(5000); // anything still in flight lands
  const stored = new Set((await rig.pool.query<{ session_id: string }>('SELECT session_id FROM timeline_sessions WHERE session_id = ANY($1)', [ids])).rows.map((r) => r.session_id));
  const refused = results.filter((r) => !r.ok && !r.mayBeStored);
  const unknown = results.filter((r) => !r.ok && r.mayBeStored);
  const ok = results.filter((r) => r.ok);
  const statuses = new Map<string, number>();
  for (const r of results.filter((x) => !x.ok)) statuses.set(`${r.status} ${(r as { detail?: string }).detail?.replace(/ov_\S+/g, '…').slice(0, 100)}`, (statuses.get(`${r.status} ${(r as { detail?: string }).detail?.replace(/ov_\S+/g, '…').slice(0, 100)}`) ?? 0) + 1);
  for (const [k, v] of statuses) log(`  create refused ×${v}: ${k}`);
  return {
    creates: n,
    created: ok.length,
    refused: refused.length,
    refusedMaxMs: Math.max(0, ...refused.map((r) => r.ms)),
    acceptedP50Ms: percentile(ok.map((r) => r.ms), 50),
    acceptedMaxMs: Math.max(0, ...ok.map((r) => r.ms)),
    unknown: unknown.length,
    // A create answered as refused (nothing stored) that was stored all the same, or a success not stored.
    phantom: refused.filter((r) => stored.has(r.id)).length + ok.filter((r) => !stored.has(r.id)).length,
    seconds,
  };
}

async function main() {
  const rig = await startFaultRig({ log: (m) => (/TMPRL|timed out|exceeded/.test(m) ? log(m.slice(0, 300)) : undefined) });
  let worker = await rig.startWorker();
  log(`rig up: ${rig.baseUrl}, worker ${worker.pid}`);
  const rows: Row[] = [];
  const overloads: OverloadRow[] = [];
  try {
    for (const s of SCENARIOS) {
      if (s === 'overload') overloads.push(await overload(rig, Number(arg('creates', '1000'))));
      if (s === 'worker')
        rows.push(
          await scenario(rig, 'worker kill -9', () => rig.killWorker(), async () => {
            worker = await rig.startWorker();
          }),
        );
      if (s === 'temporal') rows.push(await scenario(rig, 'temporal kill -9', () => rig.killTemporal(), () => rig.restartTemporal()));
      if (s === 'postgres') rows.push(await scenario(rig, 'postgres crash', () => rig.crashPostgres(), () => rig.restartPostgres()));
    }
  } finally {
    await rig.stop();
  }
  console.log('\n| scenario | sessions | acked | errors seen | recovery p50 ms | recovery max ms | sessions > 10 s | longest stall after heal ms | storage problems |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of rows) console.log(`| ${r.scenario} | ${r.sessions} | ${r.acked} | ${r.errors} | ${r.recoveryP50} | ${r.recoveryMax} | ${r.unwritable} | ${r.stallMax} | ${r.problems} |`);
  if (overloads.length) {
    console.log('\n| creates at once | created | refused (not stored) | refusal max ms | accepted p50 ms | accepted max ms | outcome unknown (503) | phantom | seconds |');
    console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
    for (const o of overloads) console.log(`| ${o.creates} | ${o.created} | ${o.refused} | ${o.refusedMaxMs} | ${o.acceptedP50Ms} | ${o.acceptedMaxMs} | ${o.unknown} | ${o.phantom} | ${o.seconds.toFixed(1)} |`);
  }
  process.exit(overloads.some((o) => o.phantom > 0) || rows.some((r) => r.problems > 0 || r.unwritable > 0) ? 1 : 0);
}

void main().catch((e) => {
  console.error(e);
  process.exit(1);
});
