/**
 * The Temporal worker: every capability's workflows (one bundle) and activities. One Worker
 * polls the main task queue (sessions, task schedulers); scheduled task runs have their
 * own task queues per priority class (`default`, `core`), each with its own Worker and
 * activity slots, so a slow low-priority task never takes a core task's slot.
 */
import { Client } from '@temporalio/client';
import { NativeConnection, Worker, WorkerOptions } from '@temporalio/worker';
import { bundleWorkflows } from './workflow-bundle';
import type { Pool } from 'pg';
import { createActivities } from '../activities';
import { SessionClient } from '../clients/sessions';
import { TaskClient } from '../clients/tasks';
import { TaskStore } from '../lib/store/tasks';
import { followUpCreator } from './follow-ups';
import { TaskSecrets } from '../lib/task-secrets';
import { startHeartbeat } from './heartbeat';
import { runControl } from './run-control';
import { taskRunQueues } from '../lib/config';
import type { AgentTaskBounds } from '../lib/agent-task-bounds';
import { LIMITS, TUNABLE } from '../lib/domain/limits';
import { workerTelemetry, workflowSinksOff, type WorkerOtelOptions } from './otel';
import { ensureLogBuilder } from '../clients/tlog';
import { ensureFireShards } from '../clients/task-fires';
import { defaultLogOrigin, logSignerOf } from '../lib/tlog/log-key';
import type { Config } from '../lib/config';
import { log } from '../lib/log';
import { setWorkflowStackTraces } from './workflow-threads';

export interface TimekeeperWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** Pool connected as the SELECT/INSERT-only role. */
  pool: Pool;
  /**
   * Settings for sessions that activities create or resume through the session client
   * (see lib/config.ts). Default: the TUNABLE defaults.
   */
  sessions?: { maxContentBytes: number; updatesPerRun: number; writeTimeoutMs: number; occurredAtMaxPastS?: number; occurredAtMaxFutureS?: number };
  /** OpenClaw's wake hook for intents re-opened by retry_after (INTENT_WAKE_URL, INTENT_WAKE_TOKEN); none: no wake calls. */
  wake?: { url?: string; token?: string };
  /** Scheduled tasks: run queues, outgoing-request allow list, secrets, slots (see lib/config.ts). */
  tasks?: {
    queues?: { default: string; core: string };
    outboundAllowHosts?: readonly string[];
    /** OUTBOUND_ECHO_BODIES: run reasons may quote a non-2xx answer's body. Default false. */
    outboundEchoBodies?: boolean;
    secret?: (name: string) => string | undefined;
    /** Opens the HMAC secrets stored definitions carry, seals those of follow-ups (the API's key: lib/secrets-key.ts). Default: a key of this process's own. */
    secrets?: TaskSecrets;
    /** AGENT_SECRETS: the secret names follow-up tasks may give (the API's rule). Default none. */
    agentSecrets?: readonly string[];
    /** AGENT_TASK_* / AGENT_TASKS_MAX: the bounds a follow-up of an agent's task keeps (the API's rule). Default none. */
    agentBounds?: AgentTaskBounds;
    /** The API's base URL as agents reach it (PUBLIC_URL), for results reported later. */
    publicUrl?: string;
    slotsDefault?: number;
    slotsCore?: number;
    /** ARTIFACTS_DIR: where `file` deliveries write. None: they fail (recorded). */
    artifactsDir?: string;
  };
  /** OpenTelemetry export (OTEL_EXPORTER_OTLP_ENDPOINT …, worker/otel.ts); none: no export, no interceptors. */
  otel?: WorkerOtelOptions;
  /**
   * The transparency log (LOG_ORIGIN, LOG_SIGNING_KEY_FILE or <dataDir>/log-signing.key,
   * LOG_BATCH_INTERVAL_MS): this worker starts the instance's log builder and signs its
   * checkpoints. Default: no builder from this worker.
   */
  tlog?: Pick<Config, 'logOrigin' | 'logSigningKeyFile' | 'dataDir' | 'logBatchIntervalMs'> & Partial<Pick<Config, 'logWitnessing' | 'outboundAllowHosts' | 'logTileCacheBytes'>>;
  /**
   * WORKFLOW_STACK_TRACES: true keeps the SDK's per-promise stack capture in the workflow threads
   * (the Temporal UI's "Stack Trace" tab). Default false: off (worker/workflow-threads.ts says why).
   */
  workflowStackTraces?: boolean;
  /** A prebuilt workflow bundle (tests build it once); default: bundle ./workflows once at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
}

/** The workers of one process, run and stopped together. */
export interface TimekeeperWorker {
  run(): Promise<void>;
  shutdown(): void;
  getState(): ReturnType<Worker['getState']>;
  readonly workers: Worker[];
}

export async function createTimekeeperWorker(opts: TimekeeperWorkerOptions): Promise<TimekeeperWorker> {
  const s = opts.sessions ?? {
    maxContentBytes: TUNABLE.maxContentBytes.default,
    updatesPerRun: TUNABLE.updatesPerRun.default,
    writeTimeoutMs: TUNABLE.writeTimeoutMs.default,
  };
  // Activities that write to a timeline go through the session workflow, its single writer.
  const telemetry = opts.otel ? workerTelemetry(opts.otel) : undefined;
  const client = new Client({ connection: opts.connection, namespace: opts.namespace, ...(telemetry ? { interceptors: { workflow: [telemetry.clientInterceptor] } } : {}) });
  const sessions = new SessionClient({ client, pool: opts.pool, taskQueue: opts.taskQueue, ...s });
  const queues = opts.tasks?.queues ?? taskRunQueues({ taskQueue: opts.taskQueue, tasksTaskQueue: undefined, tasksCoreTaskQueue: undefined });
  // Follow-up tasks (next_action) are created as the API creates tasks: validated, stored, their scheduler started.
  const secrets = opts.tasks?.secrets ?? TaskSecrets.ephemeral();
  const taskClient = new TaskClient({ client, pool: opts.pool, taskQueue: opts.taskQueue, runQueues: queues });
  const followUps = followUpCreator(taskClient, new TaskStore(opts.pool), {
    outboundAllowHosts: opts.tasks?.outboundAllowHosts ?? [],
    agentSecrets: opts.tasks?.agentSecrets ?? [],
    agentBounds: opts.tasks?.agentBounds,
  }, secrets);
  const activities = createActivities({
    pool: opts.pool,
    sessions,
    occurredAt: {
      maxPastS: s.occurredAtMaxPastS ?? TUNABLE.occurredAtMaxPastS.default,
      maxFutureS: s.occurredAtMaxFutureS ?? TUNABLE.occurredAtMaxFutureS.default,
    },
    wake: opts.wake,
    outboundAllowHosts: opts.tasks?.outboundAllowHosts,
    outboundEchoBodies: opts.tasks?.outboundEchoBodies,
    secrets,
    secret: opts.tasks?.secret,
    publicUrl: opts.tasks?.publicUrl,
    artifactsDir: opts.tasks?.artifactsDir,
    followUps,
    // Schedulers start their runs from a local activity, and finished runs wake waiting schedulers, through the task client.
    runs: runControl(taskClient),
    otel: telemetry?.activityExport,
    tlog: opts.tlog && {
      intervalMs: opts.tlog.logBatchIntervalMs,
      tileCacheBytes: opts.tlog.logTileCacheBytes,
      witnessing: opts.tlog.logWitnessing,
      outboundAllowHosts: opts.tlog.outboundAllowHosts,
      log: (instanceId: string) => {
        const origin = opts.tlog!.logOrigin ?? defaultLogOrigin(instanceId);
        return { origin, signer: logSignerOf(opts.tlog!, origin) };
      },
    },
  });
  const workflowBundle = opts.workflowBundle ?? { code: await bundleWorkflows() };
  setWorkflowStackTraces(opts.workflowStackTraces === true);
  // The SDK says "createHook is not available" once per workflow thread: this says why.
  if (!opts.workflowStackTraces) log().info({ component: 'worker' }, 'workflow stack traces off (the Temporal UI\'s Stack Trace tab); WORKFLOW_STACK_TRACES=true turns them on');
  const common = { connection: opts.connection, namespace: opts.namespace, workflowBundle, activities, shutdownGraceTime: LIMITS.workerShutdownGraceMs,
    // The bundle's workflow interceptors always hand their spans to this sink (a no-op with export off).
    sinks: telemetry?.sinks ?? workflowSinksOff(),
    ...(telemetry ? { interceptors: { activity: telemetry.activityInterceptors } } : {}) };

  const main = await Worker.create({
    ...common,
    taskQueue: opts.taskQueue,
    maxCachedWorkflows: LIMITS.workerMaxCachedWorkflows,
    maxConcurrentWorkflowTaskExecutions: LIMITS.workerMaxConcurrentWorkflowTasks,
    workflowThreadPoolSize: LIMITS.workerWorkflowThreads,
    maxConcurrentLocalActivityExecutions: LIMITS.workerMaxConcurrentLocalActivities,
    // New sessions arrive on the normal queue; the default ratio (0.2) leaves them two pollers.
    nonStickyToStickyPollRatio: 0.5,
    // A session cached on a worker that died waits this long on its sticky queue, not 10 s (issue 18).
    stickyQueueScheduleToStartTimeout: LIMITS.workerStickyScheduleToStartMs,
  });
  const runWorker = (taskQueue: string, slots: number) =>
    // A run's first attempt is a local activity (workflows/tasks/run.ts): the same slots bound those
    // agent calls, and the run workflow tasks taken at once, so no workflow task waits for a local
    // activity slot (its 10 s timeout would run out, and the task with its agent call run again).
    Worker.create({
      ...common,
      taskQueue,
      maxConcurrentActivityTaskExecutions: slots,
      maxConcurrentLocalActivityExecutions: slots,
      maxConcurrentWorkflowTaskExecutions: Math.max(2, slots),
      maxCachedWorkflows: LIMITS.taskRunWorkerCachedWorkflows,
      // A run's first workflow task is on the normal queue (every run is a new workflow), its later
      // ones (retries, 202 results) on the sticky one: most pollers normal (issue 15: at 3,000 fires a
      // minute runs waited 27 s there with the default 10 polls, 2 of them normal, and 20 slots).
      nonStickyToStickyPollRatio: 0.8,
      maxConcurrentWorkflowTaskPolls: Math.max(2, Math.min(LIMITS.taskRunWorkerWorkflowPolls, slots)),
    });
  const workers = [
    main,
    await runWorker(queues.default, opts.tasks?.slotsDefault ?? TUNABLE.taskSlotsDefault.default),
    await runWorker(queues.core, opts.tasks?.slotsCore ?? TUNABLE.taskSlotsCore.default),
  ];
  return {
    workers,
    run: async () => {
      const running = Promise.all(workers.map((w) => w.run()));
      // Beats from the moment run() is called until the main worker stops (STOPPING, DRAINED, FAILED: no more beats).
      const heartbeat = startHeartbeat(opts.pool, opts.taskQueue, () => ['INITIALIZED', 'RUNNING'].includes(main.getState()));
      if (telemetry) void telemetry.startExporter(client, opts.taskQueue);
      // Workflows this worker keeps running on its queue: a failed start (Temporal or PostgreSQL briefly away) is tried again every 5 s.
      const keepStarting = (component: string, what: string, start: () => Promise<unknown>): void => {
        start().catch((e: Error) => {
          log().warn({ component, err: e.message }, `could not start ${what}; trying again in 5 s`);
          if (['INITIALIZED', 'RUNNING'].includes(main.getState())) setTimeout(() => keepStarting(component, what, start), 5_000).unref();
        });
      };
      // The shared fire schedule's shards (issue 15).
      keepStarting('task-fires', 'the fire shard workflows', () => ensureFireShards(client, opts.pool, opts.taskQueue));
      if (opts.tlog) keepStarting('tlog', 'the log builder workflow', () => ensureLogBuilder(client, opts.pool, opts.taskQueue));
      try {
        await running;
      } finally {
        await heartbeat.stop();
        await telemetry?.shutdown();
      }
    },
    shutdown: () => {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
    },
    getState: () => main.getState(),
  };
}

export { bundleWorkflows } from './workflow-bundle';
