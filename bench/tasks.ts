/**
 * `npm run bench:tasks`: firing lateness of scheduled tasks (actual run start minus nominal
 * fire time), and missed and duplicated fire times, from the execution log.
 *
 *   npm run bench:tasks                               # both scenarios, 5 minutes each, private rig
 *   npm run bench:tasks -- --minutes 1 --scenario spread
 *   npm run bench:tasks -- --url http://127.0.0.1:8000   # against a running Timekeeper
 *
 * Scenarios (run one after the other, each for --minutes whole minutes):
 *   spread  --tasks tasks (default 1,000), task i fires every minute at second i mod 60
 *           (6-field cron `S M1,M2,... * * * *`): ~17 fire times a second. The minutes are
 *           those of the window and a few spare ones, from after the creates should be done:
 *           the window measures the steady state of firing, not firing beside thousands of
 *           creates. Targets (issue 7): lateness p99 <= 1 s, zero missed, zero duplicated.
 *   burst   --burst tasks (default 1,000: issue 15's burst) all firing every minute at second 30.
 *
 * The agent is a local webhook stand-in that answers at once, so a run is its start, one agent
 * call and its log rows. It records when each run's call arrived: lateness is given twice,
 * from the run log (started_at - scheduled_at) and where the agent receives the call.
 *
 * Floor (default on; --no-floor skips it): before each scenario, on the same Temporal server,
 * the same fire pattern is played by a client that starts a do-nothing workflow
 * (bench/floor/workflow.ts, one no-op local activity whose arrival is timed like the agent
 * call) at each fire time, from a bench-side worker: what Temporal and the SDK alone cost on
 * this machine at that moment. With --url, --temporal names the server (no floor without it).
 *
 * --schedules: after the floor, the next-best design on the same server: Temporal Schedules
 * (one per task, an interval of a minute at the task's second) starting the floor's workflow,
 * measured over one window minute as the floor is (arrival of its local activity minus the fire
 * time). Their creation comes first and is not timed into the window. Schedules start at most
 * worker.schedulerNamespaceStartWorkflowRPS workflows a second per namespace (the server's
 * default 30); --schedules-rps N sets it on the private rig's dev server (our path does not use it).
 *
 * --kill-worker (private rig only): 25 s into the spread window the worker child gets SIGKILL
 * and a new one is started at once; nothing may be missed or doubled. A call the agent gets
 * again with the same Idempotency-Key (a first attempt re-executed after the kill) is counted
 * as re-sent, not duplicated: the receiver deduplicates it by that key. Without --url the benchmark starts a private rig
 * (test/support/fault-rig.ts: its own Temporal dev server, embedded PostgreSQL, a worker child
 * process, the API in this process); with --url, the worker must allow 127.0.0.1 in
 * OUTBOUND_ALLOW_HOSTS. A fire time counts as expected when it falls inside the window. After
 * the window the bench waits for late runs (until all ran, or no agent call came for 20 s).
 * A fire time is missed when the log has no started run for it (skipped included), duplicated when the agent
 * was called under more than one Idempotency-Key for one run id (two attempts of a run it answered) or a
 * fire time has more than one run id. The tasks
 * are deleted at the end.
 *
 * On the private rig the window waits, after the creates, until no workflow task is queued on
 * the rig's task queues (at most 180 s; said in the output): thousands of creates leave their
 * schedulers' first workflow tasks behind them, and a scheduler that first runs after its first
 * fire time starts at the next one, which would count as missed though firing was never tried.
 * Also printed: a few tasks that were never called in the window, with their scheduler's
 * state and last history events (why a fire time is missing).
 */
import { readFlags } from './cli';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { Client } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { floorWorkflow, type FloorActivities } from './floor/workflow';
import { floorThreadsLikeTimekeeper } from './floor/threads';
import { TimekeeperApiError, TimekeeperClient } from '../sdk/client';
import { configureLogger } from '../lib/log';
import { startFaultRig, type FaultRig } from '../test/support/fault-rig';
import { freePort } from '../lib/temporal-server';
import { taskRunQueues } from '../lib/config';
import { schedulerWorkflowId } from '../lib/domain/tasks';
import { stepDelta, scrapeSteps, type StepFigures, type Steps } from './task-steps';
import { rigProcessReaders } from './procs';

interface Options {
  url?: string;
  minutes: number;
  tasks: number;
  burst: number;
  scenarios: ('spread' | 'burst')[];
  floor: boolean;
  schedules: boolean;
  schedulesRps?: number;
  temporal?: string;
  killWorker: boolean;
}

const USAGE = `usage: npm run bench:tasks -- [options]
  --minutes N        whole minutes each scenario is measured (default 5)
  --tasks N          tasks of the spread scenario (default 1000)
  --burst N          tasks of the burst scenario (default 1000, issue 15's burst)
  --scenario LIST    spread, burst or both, comma-separated (default spread,burst)
  --url URL          a running Timekeeper (default: start a private rig)
  --temporal ADDR    with --url: its Temporal server, for the floor
  --no-floor         skip the engine's floor
  --schedules        also measure Temporal Schedules firing the floor's workflow (one window minute)
  --schedules-rps N  private rig: the Schedules' start rate per namespace (server default 30 a second)
  --kill-worker      SIGKILL the worker 25 s into the spread window, restart it at once (private rig)
env: BENCH_API_KEY (with --url)`;

function parseArgs(argv: string[]): Options {
  const flags = readFlags(argv, USAGE, { values: ['minutes', 'tasks', 'burst', 'scenario', 'url', 'temporal', 'schedules-rps'], switches: ['no-floor', 'kill-worker', 'schedules'] });
  if (flags.has('kill-worker') && flags.value('url') !== undefined) throw new Error('--kill-worker needs the private rig (no --url)');
  const int = (k: string, d: number) => flags.int(k, 1) ?? d;
  const scenarios = (flags.value('scenario') ?? 'spread,burst').split(',');
  if (scenarios.some((s) => s !== 'spread' && s !== 'burst')) throw new Error(`--scenario takes spread and/or burst\n${USAGE}`);
  const minutes = int('minutes', 5);
  // A spread task's fire minutes are a list of minutes of the hour: the window and its spares fit in one hour.
  if (minutes + SPREAD_SPARE_MINUTES > 60) throw new Error(`--minutes is at most ${60 - SPREAD_SPARE_MINUTES}\n${USAGE}`);
  return {
    url: flags.value('url'),
    minutes,
    tasks: int('tasks', 1000),
    burst: int('burst', 1000),
    scenarios: scenarios as Options['scenarios'],
    floor: !flags.has('no-floor'),
    schedules: flags.has('schedules') || flags.value('schedules-rps') !== undefined,
    schedulesRps: flags.int('schedules-rps', 1),
    temporal: flags.value('temporal'),
    killWorker: flags.has('kill-worker'),
  };
}

/** After the window, stop waiting for late runs once the agent had no new call for this long. */
const SETTLE_MS = 20_000;
const log = (m: string) => console.log(`${new Date().toISOString().slice(11, 19)} ${m}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** When a run's nominal fire time was, from its id `run/<task>/<nominal UTC>`. */
const nominalOf = (runId: string) => Date.parse(runId.slice(runId.lastIndexOf('/') + 1));

/** The stand-in agent: answers the protocol at once, counts calls per run id and Idempotency-Key, and times each run's first call. */
async function fastAgent() {
  const calls = new Map<string, number>();
  const keys = new Map<string, Set<string>>();
  const firstCallMs = new Map<string, number>();
  let resent = 0;
  const server = http.createServer((req, res) => {
    const arrivedMs = Date.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: { run_id?: string; task_id?: string };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400).end();
        return;
      }
      if (body.run_id) {
        calls.set(body.run_id, (calls.get(body.run_id) ?? 0) + 1);
        if (!firstCallMs.has(body.run_id)) firstCallMs.set(body.run_id, arrivedMs);
        const key = String(req.headers['idempotency-key'] ?? '');
        const seen = keys.get(body.run_id) ?? new Set<string>();
        if (seen.has(key)) resent++;
        seen.add(key);
        keys.set(body.run_id, seen);
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ task_id: body.task_id, status: 'success', processed: 1, errors: [], summary: 'ok', next_action: null }));
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent`,
    calls,
    /** Runs the agent was called for under more than one Idempotency-Key (two attempts although it answered): duplicates. */
    keys,
    firstCallMs,
    resent: () => resent,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
type Agent = Awaited<ReturnType<typeof fastAgent>>;

/**
 * The engine's floor: a bench-side worker on its own task queue of the same Temporal server,
 * with the production main worker's slot settings, running bench/floor/workflow.ts; its one
 * local activity records when it ran.
 */
async function startFloor(address: string, namespace: string) {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    /* the private rig in this process installed it already */
  }
  const connection = await NativeConnection.connect({ address });
  const taskQueue = `bench-tasks-floor-${process.pid}-${Date.now()}`;
  const quiet = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: console.error };
  const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('./floor/workflow'), logger: quiet });
  const arrived = new Map<number, number>();
  /** Arrivals of the schedules phase (keys from SCHEDULE_KEY on): a schedule repeats its key every fire. */
  const scheduled: [number, number][] = [];
  const activities: FloorActivities = {
    echo: async (x) => {
      if (x >= SCHEDULE_KEY) scheduled.push([x - SCHEDULE_KEY, Date.now()]);
      else if (!arrived.has(x)) arrived.set(x, Date.now());
      return x;
    },
  };
  floorThreadsLikeTimekeeper();
  const worker = await Worker.create({ connection, namespace, taskQueue, workflowBundle: { code }, activities });
  const running = worker.run();
  return {
    client: new Client({ connection, namespace }),
    taskQueue,
    arrived,
    scheduled,
    close: async () => {
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}
type Floor = Awaited<ReturnType<typeof startFloor>>;

/** Fire seconds of a scenario's tasks: task i at second i mod 60 (spread) or all at 30 (burst). */
const secondsOf = (name: 'spread' | 'burst', n: number) => Array.from({ length: n }, (_, i) => (name === 'spread' ? i % 60 : 30));

/** The window: the first whole minute at least 5 s from now, for `minutes` minutes. */
const windowFrom = () => Math.ceil((Date.now() + 5000) / 60_000) * 60_000;

/** Minutes a spread task may also fire in after the planned ones, should its creates take longer than planned. */
const SPREAD_SPARE_MINUTES = 3;

/**
 * The minutes (whole minutes since the epoch) a spread scenario's tasks fire in: `minutes` of
 * them and SPREAD_SPARE_MINUTES more, from the first whole minute after the creates should be
 * done (20 ms a create, about four times what an uncontended create takes, and 10 s). Tasks that
 * fire every minute would fire while the others are still being created: at 3,000 tasks on a
 * slow machine the creates then took 190 s and left a backlog that was still queued in the
 * window (stop 36). The window measures the steady state of the firing alone.
 */
function spreadMinutes(n: number, minutes: number, now: number): number[] {
  const first = Math.ceil((now + 10_000 + n * 20) / 60_000);
  return Array.from({ length: minutes + SPREAD_SPARE_MINUTES }, (_, k) => first + k);
}

/** A spread task's cron: at its second, in the given minutes of the hour (UTC). */
const spreadCron = (second: number, fireMinutes: number[]) => `${second} ${fireMinutes.map((m) => m % 60).join(',')} * * * *`;

/**
 * The floor phase: each fire time of the pattern, a client starts one floor workflow at that
 * instant; lateness is when its local activity ran, minus the fire time.
 */
async function floorPhase(f: Floor, name: 'spread' | 'burst', n: number, minutes: number, readers: ReturnType<typeof rigProcessReaders>): Promise<NonNullable<Figures['floor']>> {
  const seconds = secondsOf(name, n);
  const from = windowFrom();
  log(`${name} floor: do-nothing workflows at the same fire times, ${new Date(from).toISOString()} for ${minutes} min`);
  const nominal: number[] = [];
  const starts: Promise<unknown>[] = [];
  const ids = new Map<number, string>();
  const refused = new Map<string, number>();
  const bySecond = new Map<number, number[]>();
  for (const [i, sec] of seconds.entries()) bySecond.set(sec, [...(bySecond.get(sec) ?? []), i]);
  const timers: NodeJS.Timeout[] = [];
  for (let m = 0; m < minutes; m++) {
    for (const [sec, tasks] of bySecond) {
      const at = from + m * 60_000 + sec * 1000;
      timers.push(
        setTimeout(() => {
          for (const i of tasks) {
            const key = nominal.push(at) - 1;
            const workflowId = `bench-floor/${f.taskQueue}/${i}/${at}`;
            // A start the server refused is told apart from one that started and never ran (a lost workflow task): the latter's id is printed.
            starts.push(
              f.client.workflow.start(floorWorkflow, { workflowId, taskQueue: f.taskQueue, args: [{ steps: 0, echo: key }] }).then(
                () => ids.set(key, workflowId),
                (err: Error) => refused.set(err.message.slice(0, 80), (refused.get(err.message.slice(0, 80)) ?? 0) + 1),
              ),
            );
          }
        }, at - Date.now()),
      );
    }
  }
  const expected = n * minutes;
  await sleep(from - Date.now());
  const meter = cpuMeter(readers);
  await sleep(from + minutes * 60_000 - Date.now());
  await waitUntilQuiet(() => f.arrived.size, expected, SETTLE_MS);
  const cpu = meter.stop(f.arrived.values());
  timers.forEach(clearTimeout);
  await Promise.all(starts);
  const lateness = [...f.arrived].map(([k, t]) => t - nominal[k]);
  const notRun = [...ids].filter(([k]) => !f.arrived.has(k)).map(([, id]) => id);
  f.arrived.clear();
  return { expected, started: lateness.length, ...latenessOf(lateness), refused, notRun, cpu };
}

/** The floor workflow's echo keys of the schedules phase start here (schedule i echoes SCHEDULE_KEY + i). */
const SCHEDULE_KEY = 1_000_000_000;
/** The schedules phase stops waiting for late fires once none came for this long. */
const SCHEDULES_SETTLE_MS = 60_000;

/**
 * The next-best design, Temporal Schedules: one schedule per task (an interval of a minute
 * with the task's second as its offset), each starting the floor's workflow on the floor's
 * task queue. Created first (not timed), then the first whole window minute after the creates
 * is measured: lateness is when the workflow's local activity ran, minus the fire time, as for
 * the floor. The schedules are deleted afterwards.
 */
async function schedulesPhase(f: Floor, name: 'spread' | 'burst', n: number): Promise<NonNullable<Figures['schedules']>> {
  const seconds = secondsOf(name, n);
  const prefix = `bench-sched-${name}-${Date.now().toString(36)}`;
  log(`${name} schedules: creating ${n} Temporal Schedules`);
  const t0 = Date.now();
  const handles: { delete(): Promise<void> }[] = [];
  await pool(
    seconds.map((sec, i) => ({ sec, i })),
    20,
    async ({ sec, i }) => {
      handles.push(
        await f.client.schedule.create({
          scheduleId: `${prefix}-${i}`,
          spec: { intervals: [{ every: '1m', offset: `${sec}s` }] },
          action: { type: 'startWorkflow', workflowType: floorWorkflow, workflowId: `${prefix}-${i}`, taskQueue: f.taskQueue, args: [{ steps: 0, echo: SCHEDULE_KEY + i }] },
        }),
      );
    },
  );
  const from = windowFrom();
  log(`${name} schedules: created in ${((Date.now() - t0) / 1000).toFixed(1)} s; measuring ${new Date(from).toISOString()} for 1 min`);
  /** Schedule i's fire time in the window; an arrival belongs to it when it came before the next one, a minute later. */
  const firedAt = (i: number) => from + seconds[i] * 1000;
  const inWindow = () => f.scheduled.filter(([i, at]) => at >= firedAt(i) && at < firedAt(i) + 60_000);
  await sleep(from + 60_000 - Date.now());
  // Longer than the scenario's settle time: a rate-limited schedule backs off before it starts again.
  await waitUntilQuiet(() => inWindow().length, n, SCHEDULES_SETTLE_MS);
  const firsts = new Map<number, number>();
  for (const [i, at] of inWindow()) if (!firsts.has(i)) firsts.set(i, at - firedAt(i));
  log(`${name} schedules: deleting them`);
  await pool(handles, 20, (h) => h.delete());
  f.scheduled.length = 0;
  return { expected: n, started: firsts.size, ...latenessOf([...firsts.values()]) };
}

/** Runs `fn` over `items`, `width` at a time, retrying refusals that say "later" (429, 503). */
async function pool<T>(items: T[], width: number, fn: (x: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const one = async (): Promise<void> => {
    while (next < items.length) {
      const x = items[next++];
      for (let attempt = 1; ; attempt++) {
        try {
          await fn(x);
          break;
        } catch (err) {
          if (!(err instanceof TimekeeperApiError) || ![429, 503].includes(err.status) || attempt >= 10) throw err;
          await sleep(200 * attempt);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: width }, one));
}

const pct = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN);

/** p50, p99 and max of lateness figures (sorted here, in place). */
function latenessOf(xs: number[]): { p50: number; p99: number; max: number } {
  xs.sort((a, b) => a - b);
  return { p50: pct(xs, 50), p99: pct(xs, 99), max: xs[xs.length - 1] ?? NaN };
}

/** Polls `count` every second until it reaches `expected`, or has not changed for `quietMs`. */
async function waitUntilQuiet(count: () => number, expected: number, quietMs: number): Promise<void> {
  for (let last = -1, quietSince = Date.now(); ; await sleep(1000)) {
    const got = count();
    if (got !== last) [last, quietSince] = [got, Date.now()];
    if (got >= expected || Date.now() - quietSince > quietMs) return;
  }
}

interface Figures {
  scenario: string;
  tasks: number;
  minutes: number;
  expected: number;
  started: number;
  missed: number;
  skipped: number;
  duplicated: number;
  resent: number;
  p50: number;
  p99: number;
  max: number;
  /** Lateness where the agent received the call. */
  agent: { p50: number; p99: number; max: number };
  /** refused: starts the server refused, by message; notRun: ids of floor workflows started whose activity never arrived. */
  floor?: { expected: number; started: number; p50: number; p99: number; max: number; refused: Map<string, number>; notRun: string[]; cpu?: Cpu };
  /** --schedules: Temporal Schedules firing the floor's workflow, one window minute. */
  schedules?: { expected: number; started: number; p50: number; p99: number; max: number };
  killedAtMs?: number;
  /** The worker's first-attempt steps over the scenario (private rig: its WORKER_METRICS_PORT). */
  steps?: StepFigures[];
  /** Private rig: CPU % of one core per process from the window's start until the last call (where the time went). */
  cpu?: Cpu;
}

/** CPU of the rig's processes over a phase, and the runs that reached the agent (or the floor's activity) meanwhile. */
type Cpu = { seconds: number; procs: [string, number][]; runs: number };

/** Starts measuring the rig's processes' CPU; `stop` gets the times (Date.now()) at which runs arrived, and counts those inside the measurement. */
function cpuMeter(readers: ReturnType<typeof rigProcessReaders>): { stop(arrivals: Iterable<number>): Cpu | undefined } {
  const cpu0 = readers.map((p) => p.cpuMs());
  const t0 = Date.now();
  return {
    stop(arrivals) {
      const wall = Date.now() - t0;
      if (!readers.length) return undefined;
      let runs = 0;
      for (const t of arrivals) if (t >= t0) runs++;
      return { seconds: wall / 1000, procs: readers.map((p, k): [string, number] => [p.label, ((p.cpuMs() - cpu0[k]) / wall) * 100]), runs };
    },
  };
}

/** One line: CPU % of one core per process, and all processes' CPU per run. */
const cpuLine = (c: Cpu) =>
  `${c.procs.map(([l, x]) => `${l} ${x.toFixed(0)}`).join(', ')}; ${c.runs} runs arrived meanwhile, ${((c.procs.reduce((a, [, x]) => a + x, 0) * c.seconds * 10) / Math.max(1, c.runs)).toFixed(1)} ms of CPU a run in all`;

/** After the creates, how long the window waits at most for the rig's task queues to drain. */
const SETTLE_QUEUE_MAX_MS = 180_000;

/** Until the rig's task queues (main and runs) have had no workflow task waiting twice, a second apart (the count is approximate); false after `ms`. */
async function queuesDrained(rig: FaultRig, ms: number): Promise<boolean> {
  const queues = [rig.config.taskQueue, ...Object.values(taskRunQueues(rig.config))];
  for (let end = Date.now() + ms, empty = 0; Date.now() < end; await sleep(1000)) {
    empty = (await rig.workflowBacklog(queues)) === 0 ? empty + 1 : 0;
    if (empty >= 2) return true;
  }
  return false;
}

/** The last events of a workflow's history in one line: id, time, type, and why a workflow task failed or timed out. */
async function lastEventsOf(rig: FaultRig, workflowId: string): Promise<string> {
  const events = (await rig.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  return events
    .slice(-12)
    .map((e) => `${e.eventId} ${new Date(Number(e.eventTime?.seconds ?? 0) * 1000).toISOString().slice(11, 19)} ${proto.api.enums.v1.EventType[e.eventType ?? 0]}${e.workflowTaskFailedEventAttributes ? ` (${e.workflowTaskFailedEventAttributes.failure?.message})` : ''}${e.workflowTaskTimedOutEventAttributes ? ' (timed out)' : ''}`)
    .join('; ');
}

/** `rig`: the bench's own rig (drain wait, histories of tasks never called); none with --url. */
async function scenario(tk: TimekeeperClient, agent: Agent, name: 'spread' | 'burst', n: number, minutes: number, rig: FaultRig | undefined, killWorker?: () => Promise<void>): Promise<Figures> {
  const { url: agentUrl, calls } = agent;
  const resentBefore = agent.resent();
  const prefix = `bench-${name}-${Date.now().toString(36)}`;
  const ids = Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
  // Task i fires at second i mod 60 (spread) or all at second 30 (burst).
  const seconds = secondsOf(name, n);
  const tasks = ids.map((id, i) => ({ id, second: seconds[i] }));
  // A delete retried after a 503 that was stored anyway answers 409 (already deleted): done.
  const deleteTasks = () =>
    pool(ids, 25, (id) =>
      tk.tasks.delete(id).catch((err) => {
        if (!(err instanceof TimekeeperApiError) || err.status !== 409) throw err;
      }),
    );
  const t0 = Date.now();
  const fireMinutes = name === 'spread' ? spreadMinutes(n, minutes, t0) : undefined;
  log(`${name}: creating ${n} tasks${fireMinutes ? `, firing from ${new Date(fireMinutes[0] * 60_000).toISOString()} in ${fireMinutes.length} minutes` : ''}`);
  let created = 0;
  await pool(tasks, 25, async ({ id, second }) => {
    const body = {
      task_id: id,
      trigger: { type: 'cron' as const, expression: fireMinutes ? spreadCron(second, fireMinutes) : `${second} * * * * *`, timezone: 'UTC' },
      agent: { type: 'webhook' as const, url: agentUrl, prompt_template: 'tick {{scheduled_at}}' },
      memory_runs: 0,
      tags: ['bench'],
    };
    try {
      await tk.tasks.create(body);
    } catch (err) {
      // A 503 after the task was stored (its scheduler not reached in time) answers a retried
      // create with 409: send a change instead, as the 503 says, so the scheduler is started.
      if (!(err instanceof TimekeeperApiError) || err.status !== 409) throw err;
      await tk.tasks.update(id, { tags: body.tags });
    }
    if (++created % 100 === 0) log(`${name}: ${created} created`);
  });
  // Creating thousands of tasks leaves their schedulers' first workflow tasks queued behind the
  // creates: the window measures firing, so it waits for that queue to drain (bounded), then
  // starts at the first whole minute at least 5 s later.
  if (rig) {
    const s0 = Date.now();
    const drained = await queuesDrained(rig, SETTLE_QUEUE_MAX_MS);
    log(`${name}: ${drained ? 'the workflow task queues drained' : 'the workflow task queues did NOT drain'} ${((Date.now() - s0) / 1000).toFixed(1)} s after the last create`);
  }
  // A spread window is the first of the tasks' minutes after the drain with `minutes` of them left.
  const earliest = windowFrom();
  const from = fireMinutes ? (fireMinutes.find((m) => m * 60_000 >= earliest) ?? Infinity) * 60_000 : earliest;
  if (fireMinutes && from + minutes * 60_000 > (fireMinutes[fireMinutes.length - 1] + 1) * 60_000) {
    await deleteTasks();
    throw new Error(`${name}: the creates and the drain ended ${new Date().toISOString()}, too late for a window of ${minutes} min in the tasks' fire minutes (${fireMinutes.length} from ${new Date(fireMinutes[0] * 60_000).toISOString()}); try fewer tasks`);
  }
  const to = from + minutes * 60_000;
  log(`${name}: created in ${((Date.now() - t0) / 1000).toFixed(1)} s; measuring ${new Date(from).toISOString()} .. ${new Date(to).toISOString()}; load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  let killedAtMs: number | undefined;
  if (killWorker) {
    await sleep(from + 25_000 - Date.now());
    killedAtMs = Date.now();
    log(`${name}: SIGKILL of the worker, a new one starting`);
    await killWorker();
    log(`${name}: the new worker polls (${((Date.now() - killedAtMs) / 1000).toFixed(1)} s after the kill)`);
  }
  await sleep(from - Date.now());
  // The worker's CPU only while the same one runs: none with --kill-worker.
  const readers = rig && !killWorker ? rigProcessReaders(rig.pids(), 'bench (API, agent, floor client)') : [];
  const meter = cpuMeter(readers);
  await sleep(to - Date.now());
  // A late run still counts (with its lateness): wait until the agent has been called for
  // every fire time of the window, or until no new call came for SETTLE_MS, before deleting
  // the tasks (a fire time not yet started when its task is deleted never runs).
  const ours = new Set(ids);
  /** The task of a run id of this scenario's tasks whose fire time is in the window; undefined for any other. */
  const windowTaskOf = (runId: string): string | undefined => {
    const m = /^run\/(.+)\/([^/]+)$/.exec(runId);
    return m && ours.has(m[1]) && Date.parse(m[2]) >= from && Date.parse(m[2]) < to ? m[1] : undefined;
  };
  const calledInWindow = () => [...calls.keys()].filter(windowTaskOf).length;
  await waitUntilQuiet(calledInWindow, ids.length * minutes, SETTLE_MS);
  log(`${name}: ${calledInWindow()} of ${ids.length * minutes} fire times called the agent, ${((Date.now() - to) / 1000).toFixed(0)} s after the window`);
  const cpu = meter.stop(agent.firstCallMs.values());
  // Why a fire time is missing: a few of the tasks never called in the window, as their scheduler and log see them.
  const calledTasks = new Set([...calls.keys()].map(windowTaskOf));
  for (const id of ids.filter((x) => !calledTasks.has(x)).slice(0, 3)) {
    const t = await tk.tasks.get(id).catch((e: Error) => e.message);
    const runs = await tk.tasks.runs(id, { limit: 5 }).then((r) => r.runs.map((x) => `${x.scheduled_at} ${x.status}${x.reason ? ` (${x.reason})` : ''}`), (e: Error) => e.message);
    log(`${name}: not called in the window: ${id}: scheduler ${typeof t === 'string' ? t : JSON.stringify(t.scheduler)}; runs ${JSON.stringify(runs)}`);
    // A plain task that never changed has no scheduler (it fires from the shared fire schedule): said so, not an error.
    if (rig) log(`${name}:   its scheduler's last events: ${await lastEventsOf(rig, schedulerWorkflowId(id)).catch((e: Error) => (/not found/i.test(e.message) ? 'none runs (a plain task fires from the shared fire schedule)' : e.message))}`);
  }
  // Their last log rows are written right after the agent answered.
  await sleep(3000);
  await deleteTasks();

  const lateness: number[] = [];
  let expected = 0;
  let started = 0;
  let skipped = 0;
  let duplicated = 0;
  await pool(ids, 10, async (id) => {
    const runs = (await tk.tasks.runs(id, { limit: 1000 })).runs.filter((r) => Date.parse(r.scheduled_at) >= from && Date.parse(r.scheduled_at) < to);
    expected += minutes;
    const byNominal = new Map<string, number>();
    for (const r of runs) {
      byNominal.set(r.scheduled_at, (byNominal.get(r.scheduled_at) ?? 0) + 1);
      if (r.status === 'skipped') skipped++;
      else if (r.started_at) {
        started++;
        lateness.push(r.lateness_ms ?? Date.parse(r.started_at) - Date.parse(r.scheduled_at));
      }
    }
    for (const k of byNominal.values()) if (k > 1) duplicated += k - 1;
  });
  // Where the agent got the call: its first call per run of the window (a run called under two keys is a duplicate).
  const atAgent: number[] = [];
  for (const [runId, t] of agent.firstCallMs) {
    if (!windowTaskOf(runId)) continue;
    atAgent.push(t - nominalOf(runId));
    if ((agent.keys.get(runId)?.size ?? 0) > 1) duplicated++;
  }
  return {
    scenario: name,
    tasks: n,
    minutes,
    expected,
    started,
    missed: expected - started,
    skipped,
    duplicated,
    resent: agent.resent() - resentBefore,
    ...latenessOf(lateness),
    agent: latenessOf(atAgent),
    killedAtMs,
    cpu,
  };
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  let rig: FaultRig | undefined;
  let tk: TimekeeperClient;
  let metricsPort: number | undefined;
  if (o.url) tk = new TimekeeperClient({ baseUrl: o.url.replace(/\/+$/, ''), apiKey: process.env.BENCH_API_KEY || undefined });
  else {
    log('starting a private rig (Temporal dev server, embedded PostgreSQL, worker child)');
    // The rig's API runs in this process: keep its request log out of the figures.
    configureLogger({ level: 'warn' });
    metricsPort = await freePort();
    rig = await startFaultRig({
      workerEnv: { OUTBOUND_ALLOW: '127.0.0.1', WORKER_METRICS_PORT: String(metricsPort) },
      ...(o.schedulesRps ? { temporalDynamicConfig: { 'worker.schedulerNamespaceStartWorkflowRPS': o.schedulesRps } } : {}),
    });
    await rig.startWorker();
    tk = rig.tk;
  }
  const agent = await fastAgent();
  const temporal = rig?.temporalAddress ?? o.temporal;
  const floor = o.floor && temporal ? await startFloor(temporal, rig?.config.temporalNamespace ?? 'default') : undefined;
  const rows: Figures[] = [];
  const loadAtStart = os.loadavg();
  try {
    for (const s of o.scenarios) {
      const n = s === 'spread' ? o.tasks : o.burst;
      const fl = floor ? await floorPhase(floor, s, n, o.minutes, rig ? rigProcessReaders(rig.pids(), 'bench (floor worker and client)') : []) : undefined;
      const sc = floor && o.schedules ? await schedulesPhase(floor, s, n) : undefined;
      const kill = s === 'spread' && o.killWorker && rig ? async () => (await rig!.killWorker(), await rig!.startWorker(), undefined) : undefined;
      const before: Steps | undefined = metricsPort ? await scrapeSteps(metricsPort) : undefined;
      const row: Figures = { ...(await scenario(tk, agent, s, n, o.minutes, rig, kill)), floor: fl, ...(sc ? { schedules: sc } : {}) };
      // A killed worker's counts are gone with it: the steps are then those of the new worker.
      if (metricsPort && before) row.steps = stepDelta(row.killedAtMs ? new Map() : before, await scrapeSteps(metricsPort));
      rows.push(row);
    }
  } finally {
    await agent.close();
    await floor?.close();
    await rig?.stop();
  }
  const ms = (x: number) => (Number.isNaN(x) ? '-' : `${x} ms`);
  console.log(`\nload average at the start ${loadAtStart.map((x) => x.toFixed(2)).join(' ')}, at the end ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} (${os.cpus().length} cores)`);
  console.log('\nscenario  tasks  minutes  expected  started  missed (skipped)  duplicated  re-sent   lateness (log) p50      p99      max    at the agent p50      p99      max');
  for (const r of rows) {
    console.log(
      `${r.scenario.padEnd(9)} ${String(r.tasks).padStart(5)}  ${String(r.minutes).padStart(7)}  ${String(r.expected).padStart(8)}  ${String(r.started).padStart(7)}  ${String(r.missed).padStart(6)} (${r.skipped})  ${String(r.duplicated).padStart(10)}  ${String(r.resent).padStart(7)}  ${ms(r.p50).padStart(18)} ${ms(r.p99).padStart(8)} ${ms(r.max).padStart(8)}  ${ms(r.agent.p50).padStart(15)} ${ms(r.agent.p99).padStart(8)} ${ms(r.agent.max).padStart(8)}`,
    );
    if (r.floor)
      console.log(
        `  floor (do-nothing workflow started by a client at the same fire times): ${r.floor.started} of ${r.floor.expected} ran, lateness p50 ${ms(r.floor.p50)}, p99 ${ms(r.floor.p99)}, max ${ms(r.floor.max)}`,
      );
    if (r.schedules)
      console.log(
        `  next-best design (Temporal Schedules starting the floor's workflow, one window minute, start rate ${o.schedulesRps ?? 'the server default 30'}/s): ${r.schedules.started} of ${r.schedules.expected} ran, lateness p50 ${ms(r.schedules.p50)}, p99 ${ms(r.schedules.p99)}, max ${ms(r.schedules.max)}`,
      );
    if (r.floor?.refused.size) console.log(`  floor starts refused: ${[...r.floor.refused].map(([m, k]) => `${m} x${k}`).join(', ')}`);
    if (r.floor?.notRun.length) console.log(`  floor workflows started that did not run within the window + ${SETTLE_MS / 1000} s quiet: ${r.floor.notRun.join(' ')}`);
    if (r.killedAtMs) console.log(`  the worker was killed (SIGKILL) at ${new Date(r.killedAtMs).toISOString()} and restarted at once`);
    if (r.floor?.cpu) console.log(`  the floor's CPU over its window and tail (${r.floor.cpu.seconds.toFixed(0)} s), % of one core: ${cpuLine(r.floor.cpu)}`);
    if (r.cpu) console.log(`  CPU over the window and its tail (${r.cpu.seconds.toFixed(0)} s), % of one core: ${cpuLine(r.cpu)}`);
    if (r.steps?.length) {
      console.log('  the worker\'s steps (timekeeper_task_first_attempt_step_seconds; p50/p99 are bucket upper bounds):');
      for (const x of r.steps) console.log(`    ${x.step.padEnd(9)} ${String(x.count).padStart(6)} × mean ${x.meanMs.toFixed(1).padStart(8)} ms  p50 ≤ ${x.p50} s  p99 ≤ ${x.p99} s`);
    }
  }
  // Issue 15's targets, at the agent (where a user sees the run): spread p99 <= 1 s up to 1,000 tasks a minute, <= 2 s above; burst <= 10 s.
  // With a killed worker the target is that nothing is missed or doubled: the runs the kill interrupted are late by its restart.
  console.log('');
  for (const r of rows) {
    const counted = r.started === r.expected && r.missed === 0 && r.duplicated === 0;
    if (r.killedAtMs) {
      console.log(`${r.scenario} with the worker killed (all started, 0 missed, 0 duplicated; at the agent p99 ${ms(r.agent.p99)}, not judged): ${counted ? 'met' : 'MISSED'}`);
      continue;
    }
    const limit = r.scenario === 'burst' ? 10_000 : r.tasks <= 1000 ? 1000 : 2000;
    const ok = counted && r.agent.p99 <= limit;
    const floor = r.floor ? `; the floor's p99 ${ms(r.floor.p99)}${r.floor.p99 > limit ? ', itself above the target on this machine now' : ''}` : '';
    console.log(`${r.scenario} targets (all started, 0 missed, 0 duplicated, at the agent p99 <= ${limit} ms${floor}): ${ok ? 'met' : 'MISSED'}`);
  }
  process.exit(0);
}

void main().catch((e) => {
  console.error(e);
  process.exit(1);
});
