/**
 * `npx tsx bench/cost.ts [appends] [concurrent sessions]`: where an append's cost goes, on a
 * private instance (the fault rig: own Temporal dev server, own embedded PostgreSQL) with the
 * worker in this process, as `npm start` runs it. Prints, per append:
 *
 *  - worker activations and workflow tasks (the worker's in-flight activation count, and the
 *    session's history: WorkflowTaskCompleted events),
 *  - history events, by type (the session's history after the run),
 *  - PostgreSQL statements the worker sent (every pooled client's query() counted),
 *  - single-writer latency, layer by layer, each p50 over the same number of appends: the
 *    writer transaction alone (the activity called directly), the bare-Update floor, the
 *    SessionClient (Temporal + workflow + activity, no HTTP) and the HTTP seed and /v1 appends,
 *    so the difference between neighbours is the cost of one layer,
 *  - the same counts for `concurrent` sessions appending at once (batches form only there).
 */
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { createSessionActivities, type AppendOutcome } from '../activities/sessions';
import { TUNABLE } from '../lib/domain/limits';
import { EventType, headOf, type ChainHead } from '../lib/domain/sessions';
import { startFaultRig } from '../test/support/fault-rig';
import { startFloor } from './floor/floor';
import { f1, runPool, Series, timed } from './measure';
import { cpuByGroup } from './procs';
import { eventsByType, startInProcessWorker } from './worker-counts';

/** Counts the statements sent on every client the pool hands out. */
function countQueries(pool: Pool): { readonly n: number } {
  const c = { n: 0 };
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...a: unknown[]) => unknown;
    (client as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
      c.n++;
      return query(...a);
    };
  });
  return c;
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 200);
  const concurrent = Number(process.argv[3] ?? 50);
  const rig = await startFaultRig({});
  let queries: { readonly n: number } = { n: 0 };
  const worker = await startInProcessWorker(rig, (pool) => (queries = countQueries(pool)));
  const { activations, sessions } = worker;
  const floor = await startFloor(rig.temporalAddress, rig.config.temporalNamespace);
  const writer = createSessionActivities(rig.pool);
  const run = `cost_${Date.now()}`;
  const content = (k: number): { [k: string]: string } => (k % 2 ? { input: `question ${k}` } : { response: `answer ${k}` });
  const type = (k: number) => (k % 2 ? EventType.UserInput : EventType.LlmResponse);

  // Warm-up: JIT, caches, connections.
  for (let w = 0; w < 3; w++) {
    await sessions.create({ sessionId: `${run}_warm${w}` });
    for (let k = 1; k <= 20; k++) await sessions.append({ sessionId: `${run}_warm${w}`, type: type(k), content: content(k) });
    await floor.target.init(`${run}_warm${w}`);
    for (let k = 1; k <= 20; k++) await floor.target.append(`${run}_warm${w}`, k);
  }

  const layers: [string, Series][] = [];
  const layer = async (name: string, init: (id: string) => Promise<unknown>, append: (id: string, k: number) => Promise<unknown>) => {
    const id = `${run}_${name.replace(/\W+/g, '_')}`;
    await init(id);
    const s = new Series();
    for (let k = 1; k <= n; k++) await timed(s, name, () => append(id, k));
    layers.push([name, s]);
    return id;
  };

  // The writer's transaction alone: a session the workflow does not know (only this bench writes
  // it), each append on the head the previous one returned, as the session workflow hands it over.
  const heads = new Map<string, ChainHead>();
  const keepHead = (id: string, [o]: AppendOutcome[]) => {
    if (o?.ok) heads.set(id, headOf(o.result.event));
  };
  await layer(
    'writer transaction (activity called directly)',
    async (id) => keepHead(id, await writer.appendEvents({ sessionId: id, workflowId: 'cost', runId: 'cost', create: { timelineId: randomUUID() }, items: [{ eventId: randomUUID(), type: EventType.SessionCreate, content: {} }] })),
    async (id, k) => keepHead(id, await writer.appendEvents({ sessionId: id, workflowId: 'cost', runId: 'cost', head: heads.get(id), items: [{ eventId: randomUUID(), type: type(k), content: content(k) }] })),
  );
  await layer('bare Update (floor)', (id) => floor.target.init(id), (id, k) => floor.target.append(id, k));

  const a0 = activations.n;
  const q0 = queries.n;
  const single = await layer('SessionClient.append (no HTTP)', (id) => sessions.create({ sessionId: id }), (id, k) => sessions.append({ sessionId: id, type: type(k), content: content(k) }));
  const singleActivations = activations.n - a0;
  const singleQueries = queries.n - q0;
  await layer('HTTP seed append', (id) => rig.tk.seed.init(id), (id, k) => rig.tk.seed.append({ session_id: id, event_type: type(k), content: JSON.stringify(content(k)) }));
  await layer('HTTP /v1 append', (id) => rig.tk.createSession({ session_id: id }), (id, k) => rig.tk.append(id, { type: type(k), content: content(k) }));

  console.log(`\n== single writer: ${n} appends back to back, p50 / p99 ms per layer ==`);
  for (const [name, s] of layers) console.log(`  ${name.padEnd(48)} ${f1(s.pct(50)).padStart(7)} ${f1(s.pct(99)).padStart(8)}${s.errors ? `  (${s.errors} errors: ${s.samples[0]})` : ''}`);

  const history = async (id: string) => {
    const h = await rig.client.workflow.getHandle(`session/${id}`).fetchHistory();
    return { total: h.events?.length ?? 0, byType: eventsByType(h.events ?? []) };
  };
  // The single writer's current run holds the appends since the last continue-as-new.
  const perRun = Math.min(n, TUNABLE.updatesPerRun.default);
  const hs = await history(single);
  console.log(`\n  per append (single writer, ${n} appends): ${(singleActivations / n).toFixed(2)} worker activations, ${(singleQueries / n).toFixed(2)} PostgreSQL statements`);
  console.log(`  current run's history: ${hs.total} events for ${n % perRun || perRun} appends (plus the run's start): ${[...hs.byType].map(([t, c]) => `${t} ${c}`).join(', ')}`);

  // Concurrent sessions, one writer each (so no batches form), Timekeeper and then the floor.
  const per = 10;
  const concurrentPhase = async (name: string, init: (id: string) => Promise<unknown>, append: (id: string, k: number) => Promise<unknown>) => {
    const ids = Array.from({ length: concurrent }, (_, i) => `${run}_${name.replace(/\W+/g, '_')}_${i}`);
    await runPool(ids.length, ids.length, async (i) => void (await init(ids[i])));
    const a1 = activations.n;
    const q1 = queries.n;
    const cpu0 = cpuByGroup(process.pid);
    const t0 = performance.now();
    const cs = new Series();
    await runPool(ids.length, ids.length, async (i) => {
      for (let k = 1; k <= per; k++) await timed(cs, ids[i], () => append(ids[i], k));
    });
    const wall = performance.now() - t0;
    const total = concurrent * per;
    const cpu1 = cpuByGroup(process.pid);
    console.log(`\n== ${concurrent} sessions x ${per} appends at once: ${name} ==`);
    console.log(`  ${(total / (wall / 1000)).toFixed(1)} appends/s, p50 ${f1(cs.pct(50))} ms, p99 ${f1(cs.pct(99))} ms, ${cs.errors} errors`);
    console.log(`  per append: ${((activations.n - a1) / total).toFixed(2)} Timekeeper worker activations, ${((queries.n - q1) / total).toFixed(2)} PostgreSQL statements`);
    console.log(`  CPU per append: ${[...cpu1].map(([g, ms]) => `${g} ${((ms - (cpu0.get(g) ?? 0)) / total).toFixed(2)} ms`).join(', ')}`);
    return ids;
  };
  const ids = await concurrentPhase('SessionClient.append (no HTTP)', (id) => sessions.create({ sessionId: id }), (id, k) => sessions.append({ sessionId: id, type: type(k), content: content(k) }));
  await concurrentPhase('HTTP seed append', (id) => rig.tk.seed.init(id), (id, k) => rig.tk.seed.append({ session_id: id, event_type: type(k), content: JSON.stringify(content(k)) }));
  await concurrentPhase('bare Update (floor)', (id) => floor.target.init(id), (id, k) => floor.target.append(id, k));
  const hc = await history(ids[0]);
  console.log(`  one Timekeeper session's history: ${hc.total} events for ${per} appends: ${[...hc.byType].map(([t, c]) => `${t} ${c}`).join(', ')}`);

  // One session, many writers at once: the batching case.
  const burst = `${run}_burst`;
  await sessions.create({ sessionId: burst });
  const a2 = activations.n;
  const q2 = queries.n;
  await Promise.all(Array.from({ length: 100 }, (_, k) => sessions.append({ sessionId: burst, type: type(k + 1), content: content(k + 1) })));
  const hb = await history(burst);
  console.log(`\n== one session, 100 concurrent appends ==`);
  console.log(`  per append: ${((activations.n - a2) / 100).toFixed(2)} activations, ${((queries.n - q2) / 100).toFixed(2)} PostgreSQL statements; history ${hb.total} events: ${[...hb.byType].map(([t, c]) => `${t} ${c}`).join(', ')}`);

  await worker.stop();
  await floor.close();
  await rig.stop();
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
