/**
 * The bare-Update floor: a bench-only worker in the bench process, polling its own task queue
 * on the SAME Temporal server as the Timekeeper under test, with the production worker's slot
 * and thread settings, running bench/floor/workflow.ts (a no-op Update handler). The bench
 * drives it through a Temporal client on the same native connection, exactly as Timekeeper's
 * API drives its session workflows, so the difference between the two is Timekeeper's cost.
 */
import { Client, WithStartWorkflowOperation, type UpdateDefinition } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { LIMITS } from '../../lib/domain/limits';
import { agentEvent, type BenchTarget } from '../target';
import { FloorActivities, floorDurableUpdate, floorLocalUpdate, floorUpdate, floorWorkflow } from './workflow';
import { floorThreadsLikeTimekeeper } from './threads';
import { durableStore, startDurableApi } from './durable';

export interface Floor {
  target: BenchTarget;
  /** The same workflows, appending through one no-op local activity (floorLocalUpdate). */
  localTarget: BenchTarget;
  /**
   * The alternative to update-with-start for a create: an eager workflow start (the first
   * workflow task handed straight to this process's worker in the start's response, which needs
   * the client on the worker's NativeConnection) and then the first Update. Eager start cannot be
   * combined with update-with-start (the server refuses RequestEagerExecution in a
   * multi-operation). `eagerStarts()` counts the starts the server really ran eagerly.
   */
  eagerTarget: BenchTarget;
  eagerStarts(): number;
  /**
   * With `durable`: the durable REST floor (bench/floor/durable.ts), an HTTP front in its own
   * process whose Update commits one row to PostgreSQL through one local activity.
   */
  durableTarget?: BenchTarget;
  /** The durable floor with a regular activity instead of the local one (absent without the HTTP front). */
  durableActivityTarget?: BenchTarget;
  /**
   * With `durable`: the same Update and commit called straight through this process's Temporal
   * client, without the HTTP hop (bench/calls.ts: the worker-side cost of a durable write, next
   * to Timekeeper's writer called the same way).
   */
  durableDirectTarget?: BenchTarget;
  close(): Promise<void>;
}

export interface FloorOptions {
  /** The database the durable floor commits to, and the connections and HTTP sockets it may use. */
  durable?: { databaseUrl: string; clients: number; sockets: number; /** false: no HTTP front (durableTarget absent) */ front?: boolean };
}

let runtimeInstalled = false;

export async function startFloor(address: string, namespace: string, options: FloorOptions = {}): Promise<Floor> {
  if (!runtimeInstalled) {
    try {
      Runtime.install({ logger: new DefaultLogger('ERROR') });
    } catch {
      /* a rig in this process installed it already */
    }
    runtimeInstalled = true;
  }
  const connection = await NativeConnection.connect({ address });
  const taskQueue = `bench-floor-${process.pid}-${Date.now()}`;
  floorThreadsLikeTimekeeper();
  const store = options.durable && (await durableStore(options.durable.databaseUrl, options.durable.clients));
  const worker = await Worker.create({
    connection,
    namespace,
    taskQueue,
    workflowsPath: require.resolve('./workflow'),
    activities: { echo: async (x: number) => x, ...store?.activities } satisfies FloorActivities,
    maxCachedWorkflows: LIMITS.workerMaxCachedWorkflows,
    maxConcurrentWorkflowTaskExecutions: LIMITS.workerMaxConcurrentWorkflowTasks,
    workflowThreadPoolSize: LIMITS.workerWorkflowThreads,
    nonStickyToStickyPollRatio: 0.5,
  });
  const running = worker.run();
  const api = options.durable && options.durable.front !== false ? await startDurableApi(address, namespace, taskQueue, options.durable.sockets) : undefined;
  const client = new Client({ connection, namespace });
  const wid = (id: string) => `floor/${id}`;
  /** Creates with update-with-start (k = 0) and appends with `update`, whose one argument `argOf` makes from the session and k. */
  const targetFor = <A>(name: string, update: UpdateDefinition<number, [A]>, argOf: (id: string, k: number) => A): BenchTarget => ({
    name,
    async init(id) {
      const start = new WithStartWorkflowOperation(floorWorkflow, { workflowId: wid(id), taskQueue, workflowIdConflictPolicy: 'FAIL' });
      await client.workflow.executeUpdateWithStart(update, { args: [argOf(id, 0)], startWorkflowOperation: start });
    },
    async append(id, k) {
      await client.workflow.getHandle(wid(id)).executeUpdate(update, { args: [argOf(id, k)] });
    },
  });
  const target = targetFor('bare Update', floorUpdate, (_id, k) => k);
  const localTarget = targetFor('Update + no-op local activity', floorLocalUpdate, (_id, k) => k);
  let eager = 0;
  const eagerTarget: BenchTarget = {
    name: 'eager start, then Update',
    async init(id) {
      const handle = await client.workflow.start(floorWorkflow, { workflowId: wid(id), taskQueue, workflowIdConflictPolicy: 'FAIL', requestEagerStart: true });
      if (handle.eagerlyStarted) eager++;
      await handle.executeUpdate(floorUpdate, { args: [0] });
    },
    append: target.append,
  };
  return {
    target,
    localTarget,
    eagerTarget,
    eagerStarts: () => eager,
    durableTarget: api?.target,
    durableActivityTarget: api?.activityTarget,
    // The same row the HTTP front commits for a create ({started: true}) and an append.
    durableDirectTarget: store ? targetFor('Update + LA commit (no HTTP)', floorDurableUpdate, (id, k) => ({ id, k, content: k === 0 ? { started: true } : agentEvent(k).content })) : undefined,
    async close() {
      await api?.close();
      worker.shutdown();
      await running.catch(() => undefined);
      await store?.close();
      await connection.close().catch(() => undefined);
    },
  };
}
