/**
 * The fault suite on the production topology (issue 18): the Temporal server 1.29.1 on a
 * private PostgreSQL (initdb on a free port) that also holds the events, two worker processes,
 * two API processes behind HAProxy (test/support/cluster-rig.ts). Sessions append continuously
 * through the balancer with retries while one of two workers is killed with SIGKILL, one of two
 * APIs is killed with SIGKILL, the Temporal server is killed with SIGKILL and restarted, and
 * PostgreSQL is crashed and restarted (taking Temporal's persistence down with the events);
 * then 300 concurrent creates retried after Retry-After. The checks are the dev-server fault
 * suite's (test/integration/faults.test.ts): every acknowledged append stored exactly once,
 * gapless seqs, every chain verifies, every session writable again, no phantom create.
 *
 * When one of two processes dies there is nothing to heal: the survivor carries the load, so
 * recovery is measured from the kill itself (downMs 0), and the killed one is started again
 * only after the checks, for the next scenario.
 *
 * Runs with TIMEKEEPER_TEST_TEMPORAL=server (CI's cluster step, .ci/run), skipped otherwise:
 * it builds and starts the Temporal server, which `npm test` on the dev server does not need.
 */
import { startFloor } from '../../bench/floor/floor';
import { ClusterRig, startClusterRig } from '../support/cluster-rig';
import { faultScenario, faultTable, OverloadRow, overload, Row } from '../support/fault-scenarios';
import { testTemporal } from '../support/test-temporal';
import { TEST_ENV } from '../support/env';

jest.setTimeout(900_000);

const opts = { sessions: 12, preload: 40, downMs: 3000, settleMs: 3000 };
/** As the dev-server suite: the target is 10 s; a shared CI machine gets three times that. */
const RECOVERY_BOUND_MS = 30_000;
/**
 * One of two workers killed: the sessions whose task was in flight on it wait out their 5 s
 * workflow task timeout (LIMITS.workflowTaskTimeoutMs), those sticky to it the 3 s sticky
 * schedule-to-start timeout, then the survivor replays them (measured max 8.3 s at load 22-25
 * on 2 cores, 11.7 s before with Temporal's 10 s default; docs/operations.md#faults-and-recovery).
 * The target is 10 s; asserted is the suite's 30 s, 3.6 times the measured max: a 10 s
 * assertion would have 1.7 s of margin, and the survivor's replays are CPU-bound on a loaded
 * CI machine. It was 75 s, what the 10 s task timeout plus a write deadline needed.
 */
const WORKER_KILL_BOUND_MS = RECOVERY_BOUND_MS;
/**
 * The Temporal server restart: every update's workflow task in flight dies with the server (they
 * are speculative, held in memory), so every active session leaves its worker's cache and
 * replays at once while the server re-acquires its 512 history shards. With 50 appends per run
 * (SESSION_UPDATES_PER_RUN) the slowest session came back in 2.6-3.3 s on a quiet machine, below
 * the floor's 5.1-5.4 s in the same runs (6.4-10.5 s with 100 per run; 100 s once, before the
 * 5 s task timeout). Asserted is the suite's 30 s, as for every other fault.
 */
const TEMPORAL_RESTART_BOUND_MS = RECOVERY_BOUND_MS;

const onCluster = testTemporal() === 'server' ? describe : describe.skip;

onCluster('faults on the production topology (Temporal server on PostgreSQL, 2 workers, 2 APIs behind HAProxy)', () => {
  let rig: ClusterRig;
  const rows: Row[] = [];
  const overloads: OverloadRow[] = [];
  const log = process.env.FAULTS_DEBUG ? (m: string) => console.log(m) : undefined;

  beforeAll(async () => {
    rig = await startClusterRig({ workflowBundle: process.env[TEST_ENV.workflowBundle], log });
  });

  afterAll(async () => {
    console.log(`cluster fault suite figures\n${faultTable(rows, overloads)}`);
    await rig?.stop();
  });

  function expectHealthy(r: Row, bound = RECOVERY_BOUND_MS): void {
    expect(r.problems).toBe(0);
    expect(r.acked).toBeGreaterThan(r.sessions);
    expect(r.recoveryMax).toBeLessThan(bound);
  }

  /**
   * A fault that takes Temporal down with it, with the engine's floor through the same fault
   * (printed beside, not asserted): as many no-op Update workflows on the same server, so the
   * figures show what Temporal itself needs to come back. The floor's workflows must come back too.
   */
  async function faultWithFloor(name: string, fault: () => Promise<void>, heal: () => Promise<void>, bound = RECOVERY_BOUND_MS): Promise<void> {
    const floor = await startFloor(rig.cluster.temporalAddress, 'default');
    try {
      const r = await faultScenario(rig, name, fault, heal, { ...opts, log, floor: floor.target });
      rows.push(r);
      expectHealthy(r, bound);
      expect(r.floorRecoveryMax).toBeLessThan(Infinity);
    } finally {
      await floor.close();
    }
  }

  test('kill -9 of one of two workers: the other carries every session, nothing acknowledged lost or doubled', async () => {
    const killed = rig.cluster.pid('worker', 0);
    try {
      const r = await faultScenario(rig, 'worker 1 of 2 kill -9', () => rig.cluster.kill('worker', 0), async () => undefined, { ...opts, downMs: 0, log });
      rows.push(r);
      expect(rig.cluster.pid('worker', 0)).toBe(killed); // not restarted behind our back: the survivor did the work
      expectHealthy(r, WORKER_KILL_BOUND_MS);
      // The dead worker's tasks in flight timed out and moved on: at least one session had one.
      expect(r.taskTimeouts.startToClose + r.taskTimeouts.scheduleToStart).toBeGreaterThan(0);
    } finally {
      await rig.cluster.start('worker', 0);
    }
  });

  test('kill -9 of one of two APIs behind HAProxy: the other answers, cut-off requests retried and deduplicated', async () => {
    try {
      const r = await faultScenario(rig, 'api 1 of 2 kill -9', () => rig.cluster.kill('api', 0), async () => undefined, { ...opts, preload: 0, downMs: 0, log });
      rows.push(r);
      expectHealthy(r);
      // The balancer took the dead API out: the load kept being acknowledged while it was down.
      expect(r.stallMax).toBeLessThan(RECOVERY_BOUND_MS);
    } finally {
      await rig.cluster.start('api', 0);
    }
  });

  test('kill -9 of the Temporal server, restarted on its PostgreSQL: the same', async () => {
    await faultWithFloor('temporal kill -9', () => rig.cluster.killTemporal(), () => rig.cluster.startTemporal(), TEMPORAL_RESTART_BOUND_MS);
  });

  test('PostgreSQL crash and restart, taking Temporal persistence and the events down together: the same', async () => {
    // Temporal's persistence is on this PostgreSQL too, so the floor shows the engine's own way back.
    await faultWithFloor('postgres crash', () => rig.crashPostgres(), () => rig.restartPostgres());
  });

  test('300 concurrent creates through HAProxy, retried after Retry-After: all created, no refused create stored', async () => {
    const o = await overload(rig, 300, log);
    overloads.push(o);
    expect(o.created).toBe(300);
    expect(o.phantomTrails).toEqual([]); // each one's answers, in order, when it fails
    expect(o.phantom).toBe(0);
  });
});
