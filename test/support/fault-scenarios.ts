/**
 * The fault scenarios shared by bench/faults.ts (full scale) and the CI fault suite
 * (test/integration/faults.test.ts): continuous appends with retries through the typed
 * client, one fault, the heal, then exactly-once storage, gapless seqs, verify and the time
 * until every session is writable again; and N concurrent creates retried after Retry-After.
 */
import { randomUUID } from 'node:crypto';
import diagnostics from 'node:diagnostics_channel';
import { temporal } from '@temporalio/proto';
import { TimekeeperApiError, TimekeeperClient } from '../../sdk/client';
import type { FaultRig } from './fault-rig';
import { checkStored, longestStall, percentile, recoveryTimes, startFloorLoad, startLoad } from './fault-load';
import { eventually, sleep } from './wait';

export interface ScenarioOptions {
  sessions: number;
  /** Appends stored per session before the load starts (longer histories to replay). */
  preload: number;
  /** How long the faulty part stays down. */
  downMs: number;
  /** Load kept running after every session recovered. */
  settleMs: number;
  log?: (m: string) => void;
  /** The API the sessions are created and loaded through; default the rig's in-process one. */
  tk?: TimekeeperClient;
  /**
   * The engine's floor on the same Temporal server (bench/floor's no-op Update workflow): as many
   * floor workflows as sessions get the same load through the same fault, and their recovery is
   * reported beside the sessions' (`floorRecoveryP50`/`Max`): what Temporal itself needs.
   */
  floor?: FloorLoadTarget;
}

/** What a scenario needs of the floor: bench/floor/floor.ts's `Floor.target` fits. */
export interface FloorLoadTarget {
  init(id: string): Promise<void>;
  append(id: string, n: number): Promise<void>;
}


/** What a scenario needs of a rig: the fault rig (dev server) or the cluster rig (test/support/cluster-rig.ts). */
export type ScenarioRig = Pick<FaultRig, 'tk' | 'pool' | 'client'>;

/** A set-up call retried while the API refuses it for capacity (nothing was sent, so it is safe). */
async function admitted<T>(fn: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof TimekeeperApiError) || err.problem?.may_be_stored !== false) throw err;
      await sleep(1000 * (0.5 + Math.random()));
    }
  }
}

/**
 * An append with an idempotency key, retried on any refusal or unknown outcome (429, 5xx, a
 * cut-off connection): the key stores it once however often it is sent. Set-up only: on a
 * loaded machine a preload append may outlast the write deadline (503, may be stored).
 */
async function keyedRetry<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      const status = err instanceof TimekeeperApiError ? err.status : 0;
      if ((status !== 0 && status !== 429 && status < 500) || attempt >= 20) throw err;
      await sleep(1000 * (0.5 + Math.random()));
    }
  }
}

export interface Row {
  scenario: string;
  sessions: number;
  acked: number;
  errors: number;
  recoveryP50: number;
  recoveryMax: number;
  unwritable: number;
  stallMax: number;
  /** The floor's recovery after the same fault (ScenarioOptions.floor); absent without one. */
  floorRecoveryP50?: number;
  floorRecoveryMax?: number;
  problems: number;
  /** WORKFLOW_TASK_TIMED_OUT events in the sessions' histories, start-to-close / schedule-to-start (sticky). */
  taskTimeouts: TaskTimeouts;
}

export interface TaskTimeouts {
  startToClose: number;
  scheduleToStart: number;
}

/**
 * Workflow task timeouts in the histories of these sessions' workflows (every run): after a
 * worker dies, its tasks in flight time out start-to-close and its sticky ones
 * schedule-to-start; without a fault, a start-to-close one is a task the worker took and did
 * not finish in time (the workflow task timeout too short for the load).
 */
export async function taskTimeouts(rig: ScenarioRig, ids: string[]): Promise<TaskTimeouts> {
  const out: TaskTimeouts = { startToClose: 0, scheduleToStart: 0 };
  const { EventType, TimeoutType } = temporal.api.enums.v1;
  for (const id of ids) {
    // The latest run, then each run it continued from (the started event names it).
    for (let runId: string | undefined = undefined, n = 0; n < 50; n++) {
      const h: temporal.api.history.v1.IHistory | undefined = await rig.client.workflow.getHandle(`session/${id}`, runId).fetchHistory().catch(() => undefined);
      const evs: temporal.api.history.v1.IHistoryEvent[] = h?.events ?? [];
      for (const e of evs) {
        if (e.eventType !== EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT) continue;
        if (e.workflowTaskTimedOutEventAttributes?.timeoutType === TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START) out.scheduleToStart++;
        else out.startToClose++;
      }
      runId = evs[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
      if (!runId) break;
    }
  }
  return out;
}

export async function preload(tk: TimekeeperClient, ids: string[], n: number): Promise<void> {
  // Bursts of concurrent appends grow the histories fast (many updates per workflow task).
  const burst = 10;
  await Promise.all(
    ids.map(async (id) => {
      for (let i = 0; i < n; i += burst) {
        await Promise.all(
          Array.from({ length: Math.min(burst, n - i) }, (_, j) =>
            keyedRetry(() => tk.append(id, { type: 'USER_INPUT', content: { pre: i + j }, idempotency_key: `p${i + j}` })),
          ),
        );
      }
    }),
  );
}

export async function faultScenario(rig: ScenarioRig, name: string, fault: () => Promise<void>, heal: () => Promise<void>, o: ScenarioOptions): Promise<Row> {
  const { sessions: SESSIONS, preload: PRELOAD, downMs: DOWN_MS, settleMs: SETTLE_MS } = o;
  const log = o.log ?? (() => undefined);
  const ids = Array.from({ length: SESSIONS }, () => `f_${name.split(" ")[0]}_${randomUUID().slice(0, 8)}`);
  const tk = o.tk ?? rig.tk;
  for (const id of ids) await admitted(() => tk.createSession({ session_id: id }));
  if (PRELOAD > 0) {
    const t = Date.now();
    await preload(tk, ids, PRELOAD);
    log(`${name}: preloaded ${SESSIONS} × ${PRELOAD} in ${Date.now() - t} ms`);
  }
  const floor = o.floor;
  const floorIds = floor ? ids.map((id) => `${id}_floor`) : [];
  if (floor) for (const id of floorIds) await floor.init(id);
  const load = startLoad(tk, ids);
  const floorLoad = floor ? startFloorLoad((id, n) => floor.append(id, n), floorIds) : undefined;
  const loads = floorLoad ? [load, floorLoad] : [load];
  await sleep(5000);
  log(`${name}: fault`);
  await fault();
  const downAt = Date.now();
  await sleep(DOWN_MS);
  await heal();
  const readyAt = Date.now();
  log(`${name}: healed after ${readyAt - downAt} ms down`);
  // Wait until every session has an acknowledgement after the heal (or give up: the row then shows who never recovered).
  const recovered = () => loads.every((l) => recoveryTimes(l, readyAt).every((t) => t !== Infinity));
  await eventually('every session acknowledged after the heal', recovered, { timeoutMs: 180_000 }).catch(() => undefined);
  await sleep(SETTLE_MS);
  const end = Date.now();
  await Promise.all(loads.map((l) => l.stop()));
  const rec = recoveryTimes(load, readyAt);
  const floorRec = floorLoad ? recoveryTimes(floorLoad, readyAt) : undefined;
  if (process.env.FAULTS_DEBUG) await dumpHistory(rig, ids[rec.indexOf(Math.max(...rec))], downAt, readyAt, log);
  const problems = await checkStored(rig.pool, load);
  const timeouts = await taskTimeouts(rig, ids);
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
    ...(floorRec ? { floorRecoveryP50: percentile(floorRec, 50), floorRecoveryMax: Math.max(...floorRec) } : {}),
    problems: problems.length,
    taskTimeouts: timeouts,
  };
}

/** The history events of one session around the fault, with times relative to the fault. */
async function dumpHistory(rig: ScenarioRig, id: string, downAt: number, readyAt: number, log: (m: string) => void): Promise<void> {
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

export interface OverloadRow {
  creates: number;
  created: number;
  refused: number;
  refusedMaxMs: number;
  refusedP99Ms: number;
  acceptedP50Ms: number;
  acceptedMaxMs: number;
  unknown: number;
  phantom: number;
  seconds: number;
  /** Creates stored per second, first request to last answer. */
  perSecond: number;
  /** p99 of the time an attempt spent in this (the load generator's) process before its request was written to the socket. */
  clientWaitP99Ms: number;
  taskTimeouts: TaskTimeouts;
  /** Each phantom's answers in order ("status may_be_stored detail"), so a failure names its cause. */
  phantomTrails: string[];
}

/**
 * When each request was written to its socket, by `x-request-id`: undici (Node's fetch)
 * reports it on a diagnostics channel. Latencies are measured from there, not from the
 * fetch call, so the load generator's own connection set-up (1,000 sockets opened in one
 * tick of its event loop) is not counted as the server's time.
 */
function sendTimes(): { sentAt: Map<string, number>; stop: () => void } {
  const sentAt = new Map<string, number>();
  const onSend = (m: unknown) => {
    const headers = (m as { headers?: unknown }).headers;
    const id = typeof headers === 'string' ? /\r?\nx-request-id: (ov\.[^\r\n]+)/i.exec('\n' + headers)?.[1] : undefined;
    if (id) sentAt.set(id, Date.now());
  };
  diagnostics.subscribe('undici:client:sendHeaders', onSend);
  return { sentAt, stop: () => diagnostics.unsubscribe('undici:client:sendHeaders', onSend) };
}

/**
 * N creates at once, each retried as the refusal advises (after Retry-After) until it is
 * stored: refusals come at once and are never stored (a retry never finds "exists" after
 * refusals only), accepted attempts answer in time, and all N are created.
 */
export async function overload(rig: ScenarioRig, n: number, log: (m: string) => void = () => undefined, tk: TimekeeperClient = rig.tk): Promise<OverloadRow> {
  const ids = Array.from({ length: n }, (_, i) => `ov_${randomUUID().slice(0, 8)}_${i}`);
  const refusedMs: number[] = [];
  const acceptedMs: number[] = [];
  const kinds = new Map<string, number>();
  let unknown = 0;
  let phantom = 0;
  let created = 0;
  const clientWaitMs: number[] = [];
  const phantomTrails: string[] = [];
  /** [sent at (ms after the first), took (ms)] of each accepted attempt. */
  const acceptedAt: [number, number][] = [];
  const sends = sendTimes();
  /** Milliseconds from the request being written (the call, when the channel said nothing) to its answer. */
  const took = (rid: string, t: number) => {
    const sent = sends.sentAt.get(rid);
    sends.sentAt.delete(rid);
    if (sent !== undefined) clientWaitMs.push(sent - t);
    return Date.now() - (sent ?? t);
  };
  const t0 = Date.now();
  await Promise.all(
    ids.map(async (id) => {
      let mayExist = false;
      const trail: string[] = [];
      for (let attempt = 0; attempt < 200; attempt++) {
        const t = Date.now();
        const rid = `ov.${id}.${attempt}`;
        try {
          await tk.createSession({ session_id: id }, { headers: { 'x-request-id': rid } });
          acceptedMs.push(took(rid, t));
          acceptedAt.push([t - t0, acceptedMs[acceptedMs.length - 1]]);
          created++;
          return;
        } catch (err) {
          const e = err as TimekeeperApiError;
          const ms = took(rid, t);
          trail.push(`${rid} +${Date.now() - t0} ms: ${e.status ?? 'network'} ${e.problem?.may_be_stored ?? '-'} ${String(e.problem?.detail ?? e.message).slice(0, 160)}`);
          if (e.status === 409 && e.problem?.type?.endsWith('session_exists')) {
            if (!mayExist) {
              phantom++; // told "nothing stored", yet it exists
              phantomTrails.push(`${id}: ${trail.join(' | ')}`);
            }
            created++;
            return;
          }
          const k = `${e.status} ${String(e.problem?.detail ?? e.message).replace(/ov_\S+/g, '…').replace(/\d+ (session creates|writes)/, 'N $1').slice(0, 110)}`;
          kinds.set(k, (kinds.get(k) ?? 0) + 1);
          if (e.problem?.may_be_stored === false) refusedMs.push(ms);
          else {
            unknown++;
            mayExist = true;
          }
          const ra = Number(e.headers?.get('retry-after') ?? 1);
          await sleep((Number.isFinite(ra) ? ra : 1) * 1000 * (0.5 + Math.random()));
        }
      }
    }),
  );
  const seconds = (Date.now() - t0) / 1000;
  sends.stop();
  log(`  slowest accepted (sent at +s: took ms): ${[...acceptedAt].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([at, ms]) => `+${(at / 1000).toFixed(1)}: ${ms}`).join(', ')}`);
  for (const [k, v] of kinds) log(`  create refused ×${v}: ${k}`);
  const timeouts = await taskTimeouts(rig, ids);
  const stored = (await rig.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM timeline_sessions WHERE session_id = ANY($1)', [ids])).rows[0].n;
  if (stored !== created) log(`  stored ${stored}, created ${created}`);
  for (const tr of phantomTrails) log(`  phantom ${tr}`);
  return {
    creates: n,
    created,
    refused: refusedMs.length,
    refusedMaxMs: Math.max(0, ...refusedMs),
    refusedP99Ms: percentile(refusedMs, 99),
    acceptedP50Ms: percentile(acceptedMs, 50),
    acceptedMaxMs: Math.max(0, ...acceptedMs),
    unknown,
    phantom: phantom + Math.abs(stored - created),
    seconds,
    perSecond: created / seconds,
    clientWaitP99Ms: percentile(clientWaitMs, 99),
    phantomTrails,
    taskTimeouts: timeouts,
  };
}


/** The figures as a Markdown table. */
export function faultTable(rows: Row[], overloads: OverloadRow[]): string {
  const out: string[] = [];
  if (rows.length) {
    out.push('| scenario | sessions | acked | errors seen | recovery p50 ms | recovery max ms | floor (bare Update) recovery p50 / max ms | sessions > 10 s | longest stall after heal ms | storage problems | task timeouts start-to-close / sticky |');
    out.push('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
    for (const r of rows) {
      const floor = r.floorRecoveryP50 === undefined ? '–' : `${r.floorRecoveryP50} / ${r.floorRecoveryMax}`;
      out.push(`| ${r.scenario} | ${r.sessions} | ${r.acked} | ${r.errors} | ${r.recoveryP50} | ${r.recoveryMax} | ${floor} | ${r.unwritable} | ${r.stallMax} | ${r.problems} | ${r.taskTimeouts.startToClose} / ${r.taskTimeouts.scheduleToStart} |`);
    }
  }
  if (overloads.length) {
    out.push('', '| creates at once (retried after Retry-After) | created | refusals (nothing stored) | refusal p99 / max ms | accepted p50 ms | accepted max ms | outcome unknown (503) | phantom | seconds for all | created/s | client wait before send p99 ms | task timeouts start-to-close / sticky |');
    out.push('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
    for (const o of overloads) out.push(`| ${o.creates} | ${o.created} | ${o.refused} | ${o.refusedP99Ms} / ${o.refusedMaxMs} | ${o.acceptedP50Ms} | ${o.acceptedMaxMs} | ${o.unknown} | ${o.phantom} | ${o.seconds.toFixed(1)} | ${o.perSecond.toFixed(1)} | ${o.clientWaitP99Ms} | ${o.taskTimeouts.startToClose} / ${o.taskTimeouts.scheduleToStart} |`);
  }
  return out.join('\n');
}
