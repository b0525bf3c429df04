/**
 * `TEMPORAL_DEBUG=1 npx tsx bench/calls.ts [calls]`: what one session or intent call costs the
 * worker, in figures that do not move with the machine's load (issue 17, "fewer activations and
 * promises per call"). On a private instance (the fault rig: own Temporal dev server, own embedded
 * PostgreSQL) with the worker in this process, `calls` sequential calls of each kind:
 *
 *  - session append, no idle timeout; session append with an idle timeout (1800 s);
 *  - intent create; intent transition requested → in-progress (the expiry timer stays); in-progress → done.
 *
 * Per call it prints worker activations, workflow tasks and history events (the workflows'
 * histories afterwards), payload bytes in those histories, promises created in workflow context
 * (a V8 promise hook counting promises of the sandbox's realm: with TEMPORAL_DEBUG=1 the SDK runs
 * workflows on the main thread, where the hook sees them; without it the count is 0), and the CPU
 * of this process, of the dev server and of the embedded PostgreSQL, and the wall time per call
 * (the calls go one at a time, so that is their mean latency; the CPU and wall figures do move
 * with load, the others do not).
 */
import v8 from 'node:v8';
import type { temporal } from '@temporalio/proto';
import { randomUUID } from 'node:crypto';
import { IntentClient } from '../clients/intents';
import { IntentStatus, intentWorkflowId } from '../lib/domain/intents';
import { EventType, sessionWorkflowId } from '../lib/domain/sessions';
import { LIMITS } from '../lib/domain/limits';
import { startFaultRig } from '../test/support/fault-rig';
import { startFloor } from './floor/floor';
import { cpuByGroup } from './procs';
import { eventsByType, startInProcessWorker } from './worker-counts';

/** Promises created in another realm than this one's: the workflow sandbox's (vm context). */
function countSandboxPromises(): { readonly n: number } {
  const c = { n: 0 };
  v8.promiseHooks.onInit((p: Promise<unknown>) => {
    if (p.constructor !== Promise) c.n++;
  });
  return c;
}

/** Bytes of every payload in a history event (walks the decoded protobuf object). */
function payloadBytes(o: unknown): number {
  if (!o || typeof o !== 'object') return 0;
  if (o instanceof Uint8Array) return 0;
  const rec = o as Record<string, unknown>;
  if (rec.metadata && rec.data instanceof Uint8Array) return rec.data.length + Object.values(rec.metadata as Record<string, Uint8Array>).reduce((s, v) => s + (v?.length ?? 0), 0);
  let s = 0;
  for (const v of Object.values(rec)) s += Array.isArray(v) ? v.reduce((a: number, x) => a + payloadBytes(x), 0) : payloadBytes(v);
  return s;
}

async function main(): Promise<void> {
  const calls = Number(process.argv[2] ?? 100);
  // Rounds of the session appends and the durable floor, interleaved: their CPU figures move with the machine.
  const rounds = Number(process.argv[3] ?? 1);
  const promises = countSandboxPromises();
  const rig = await startFaultRig({});
  const worker = await startInProcessWorker(rig);
  const { activations, sessions } = worker;
  const intents = new IntentClient({ client: rig.client, pool: rig.pool, taskQueue: rig.config.taskQueue, writeTimeoutMs: 30_000, defaultTtlS: 86_400, domainTtls: {}, retentionS: 604_800 });
  const run = `calls_${Date.now()}`;
  const content = (k: number): { [k: string]: string } => (k % 2 ? { input: `question ${k}` } : { response: `answer ${k}` });
  const type = (k: number) => (k % 2 ? EventType.UserInput : EventType.LlmResponse);

  /**
   * The events of each workflow's run: `id` or `id@runId`, and of the runs it continued as (a
   * session rotates every SESSION_UPDATES_PER_RUN appends, so the calls span several runs).
   */
  const histories = async (workflowIds: string[]) =>
    Promise.all(
      workflowIds.map(async (w) => {
        const [id, first] = w.split('@');
        const events: temporal.api.history.v1.IHistoryEvent[] = [];
        for (let runId: string | undefined = first; ; ) {
          const ofRun: temporal.api.history.v1.IHistoryEvent[] = (await rig.client.workflow.getHandle(id, runId).fetchHistory()).events ?? [];
          events.push(...ofRun);
          const next: string | null | undefined = ofRun.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
          if (!runId || !next) return events;
          runId = next;
        }
      }),
    );

  const rows: string[] = [];
  const measure = async (name: string, workflowIds: string[], before: number[] | null, body: () => Promise<void>, ours = true) => {
    const a0 = activations.n;
    const p0 = promises.n;
    const c0 = cpuByGroup(process.pid);
    const t0 = process.cpuUsage();
    const w0 = performance.now();
    await body();
    const wall = performance.now() - w0;
    const cpu = process.cpuUsage(t0);
    const c1 = cpuByGroup(process.pid);
    const hs = await histories(workflowIds);
    const events = hs.map((h, i) => h.slice(before?.[i] ?? 0));
    const all = events.flat();
    const byType = eventsByType(all);
    const per = (x: number) => (x / calls).toFixed(2);
    const tasks = byType.get('WORKFLOW_TASK_COMPLETED') ?? 0;
    const bytes = all.reduce((s, e) => s + payloadBytes(e), 0);
    const server = ((c1.get('temporal') ?? 0) - (c0.get('temporal') ?? 0)) / calls;
    const database = ((c1.get('postgres') ?? 0) - (c0.get('postgres') ?? 0)) / calls;
    rows.push(
      `| ${name} | ${ours ? per(activations.n - a0) : '–'} | ${per(tasks)} | ${per(all.length)} | ${Math.round(bytes / calls)} | ${(wall / calls).toFixed(2)} | ${per(promises.n - p0)} | ${((cpu.user + cpu.system) / 1000 / calls).toFixed(2)} | ${server.toFixed(2)} | ${database.toFixed(2)} |`,
    );
    console.log(`${name}: ${[...byType].map(([t, c]) => `${t} ${per(c)}`).join(', ')}`);
    return hs.map((h) => h.length);
  };

  // Warm-up: JIT, caches, connections, the workflow context.
  for (let w = 0; w < 2; w++) {
    const id = `${run}_warm${w}`;
    await sessions.create({ sessionId: id, idleTimeoutS: w ? 1800 : undefined });
    for (let k = 1; k <= 20; k++) await sessions.append({ sessionId: id, type: type(k), content: content(k) });
    const iid = `${run}-WARM-${w}`;
    await intents.create({ eventId: iid, domain: 'bench', action: 'warm-up' });
    await intents.transition(iid, { status: IntentStatus.InProgress });
    await intents.transition(iid, { status: IntentStatus.Done });
  }

  // The durable floor's worker side (bench/floor/durable.ts without its HTTP front): an Update
  // whose handler awaits one local activity committing one row, called through a client in this
  // process as the session appends above are. Its worker runs beside Timekeeper's in this process.
  const floor = await startFloor(rig.temporalAddress, rig.config.temporalNamespace, { durable: { databaseUrl: rig.config.databaseUrl, clients: LIMITS.dbPoolMax, sockets: 0, front: false } });
  const direct = floor.durableDirectTarget!;
  await direct.init(`${run}_floor_warm`);
  for (let k = 1; k <= 20; k++) await direct.append(`${run}_floor_warm`, k);
  const sessionRound = async (r: number) => {
    for (const [label, idle] of [
      ['session append, no idle timeout', undefined],
      ['session append, idle_timeout_s 1800', 1800],
    ] as const) {
      const id = `${run}_${idle ?? 'none'}_${r}`;
      await sessions.create({ sessionId: id, idleTimeoutS: idle });
      const wf = [`${sessionWorkflowId(id)}@${(await rig.client.workflow.getHandle(sessionWorkflowId(id)).describe()).runId}`];
      const before = (await histories(wf)).map((h) => h.length);
      await measure(label, wf, before, async () => {
        for (let k = 1; k <= calls; k++) await sessions.append({ sessionId: id, type: type(k), content: content(k) });
      });
    }
  };
  const floorRound = async (r: number) => {
    const id = `${run}_floor${r}`;
    await direct.init(id);
    const wf = [`floor/${id}`];
    const before = (await histories(wf)).map((h) => h.length);
    const body = async () => {
      for (let k = 1; k <= calls; k++) await direct.append(id, k);
    };
    await measure('floor: Update + LA commit', wf, before, body, false);
  };
  for (let r = 0; r < rounds; r++) {
    await sessionRound(r);
    await floorRound(r);
  }

  const ids = Array.from({ length: calls }, (_, i) => `${run}-INTENT-${i}`);
  const wfs = ids.map(intentWorkflowId);
  let marks = await measure('intent create', wfs, null, async () => {
    for (const id of ids) await intents.create({ eventId: id, domain: 'bench', action: 'measure-calls', data: { n: id } });
  });
  marks = await measure('intent transition → in-progress', wfs, marks, async () => {
    for (const id of ids) await intents.transition(id, { status: IntentStatus.InProgress, note: 'working' });
  });
  await measure('intent transition → done (closes)', wfs, marks, async () => {
    for (const id of ids) await intents.transition(id, { status: IntentStatus.Done, data: { ok: true, ref: randomUUID() } });
  });

  console.log(`\n${calls} calls of each, one at a time; TEMPORAL_DEBUG=${process.env.TEMPORAL_DEBUG ?? ''}`);
  console.log('| call | activations | workflow tasks | history events | payload bytes | ms per call (wall, one at a time) | workflow promises | node CPU ms | dev server CPU ms | PostgreSQL CPU ms |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of rows) console.log(r);

  await floor.close();
  await worker.stop();
  await rig.stop();
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
