/**
 * Every limit in Timekeeper, with its default and the reason for it: one place to read
 * and to change. Sandbox-safe (the session workflow reads its batch bounds here).
 *
 * `TUNABLE` limits are read from the environment by `lib/config.ts` within their bounds;
 * `LIMITS` are fixed by design (the reason says why). The SQL schema repeats a few of the
 * text lengths as CHECK constraints, so the database refuses what the API would.
 */

export interface Tunable {
  /** Environment variable that overrides the default. */
  env: string;
  default: number;
  min: number;
  max: number;
  why: string;
}

export const TUNABLE = {
  maxContentBytes: {
    env: 'MAX_CONTENT_BYTES',
    default: 256 * 1024,
    min: 1,
    max: 1024 * 1024,
    why: 'largest event content (and session metadata) in bytes of canonical JSON; one event must fit a Temporal payload (2 MB) with room to spare',
  },
  updatesPerRun: {
    env: 'SESSION_UPDATES_PER_RUN',
    default: 50,
    min: 1,
    max: 1800,
    why:
      'appends per session workflow run before continue-as-new. A worker that restarts (or loses its cache) replays each active session\'s run in full, at about 0.75 ms per history event and ~6 events per append on a loaded 2-core machine (bench/replay-cost.ts): 100 appends replay in ~0.4 s, 1000 in ~4 s, and 30 such sessions replaying at once kept every session unwritable for the length of several workflow-task timeouts. A Temporal server restart or a PostgreSQL crash loses every in-flight (speculative) update task, so every active session replays at once: on the production topology 50 instead of 100 cut the slowest session\'s recovery from 6.4-12.5 s to 2.6-6.8 s, about the engine\'s own floor (docs/operations.md, issue 18), for one extra workflow task per 50 appends. The server refuses more than 2000 updates per run, and in-flight ones need room',
  },
  writeTimeoutMs: {
    env: 'WRITE_TIMEOUT_MS',
    default: 30_000,
    min: 100,
    max: 10 * 60_000,
    why: 'how long a create, append or end waits for the session workflow before answering 503 (retry with the same idempotency_key)',
  },
  writesInFlightMax: {
    env: 'WRITES_IN_FLIGHT_MAX',
    default: 200,
    min: 1,
    max: 100_000,
    why:
      'creates, appends, ends and intent writes one API process has sent to Temporal and not yet answered. Beyond it a write is refused at once with 503 and Retry-After, before anything is sent. The 2-core reference machine stores ~75-165 appends/s, so 200 in flight answer within a few seconds; without a bound, 1,000 writes at once queued behind each other until the write deadline and answered 503 although they were then stored (issue 9)',
  },
  createsInFlightMax: {
    env: 'CREATES_IN_FLIGHT_MAX',
    default: 128,
    min: 1,
    max: 100_000,
    why:
      'session creates in flight per API process (counted in WRITES_IN_FLIGHT_MAX too). The seed\'s own load is 100 inits at once, which must all be taken (64 refused 36 of them); a create starts a workflow, ~36-76/s on the reference machine, so 128 in flight answer within a few seconds; more only wait and run into the write deadline',
  },
  sessionWritesInFlightMax: {
    env: 'SESSION_WRITES_IN_FLIGHT_MAX',
    default: 64,
    min: 1,
    max: 450,
    why:
      'appends and ends in flight to one session per API process; beyond it 429 with Retry-After. One session writes its queue in batches of up to 200, so 64 waiting writers already fill a batch; the server allows 500 updates in flight per workflow (history.maxInFlightUpdates) across all API processes',
  },
  connectionsPerClientMax: {
    env: 'HTTP_CONNECTIONS_PER_CLIENT_MAX',
    default: 1024,
    min: 1,
    max: 1_000_000,
    why:
      'open TCP connections one remote address may hold on each API port; one more is answered 503 with Retry-After and closed at once (issue 16: one client held 2,000 idle sockets for ~70 s). Above the 1,000 concurrent clients the overload scenario sends from one address (issue 9), so the load the API is sized for is never refused; behind a proxy every client shares its address, so raise it there',
  },
  intentDefaultTtlS: {
    env: 'INTENT_DEFAULT_TTL_S',
    default: 24 * 3600,
    min: 1,
    max: 365 * 24 * 3600,
    why: 'seconds an intent may stay requested or in-progress before its workflow blocks it as expired (no zombies); per domain: INTENT_DOMAIN_TTLS, per intent: ttl_s',
  },
  intentRetentionS: {
    env: 'INTENT_RETENTION_S',
    default: 7 * 24 * 3600,
    min: 1,
    max: 365 * 24 * 3600,
    why: "seconds an intent's workflow stays open while the intent is blocked without an automatic retry; then it closes (a later PATCH starts it again), so open workflows do not grow without bound",
  },
  occurredAtMaxPastS: {
    env: 'EVENT_OCCURRED_AT_MAX_PAST_S',
    default: 7 * 24 * 3600,
    min: 0,
    max: 10 * 365 * 24 * 3600,
    why: "how far an event's occurred_at may lie before the time Timekeeper stores it (ts), in seconds; beyond it the append is refused with 400 naming occurred_at. Generous, because an outbox (the OpenClaw plugin's) holds events through an outage of hours or a laptop closed over a weekend and delivers them late with their real times",
  },
  occurredAtMaxFutureS: {
    env: 'EVENT_OCCURRED_AT_MAX_FUTURE_S',
    default: 60,
    min: 0,
    max: 24 * 3600,
    why: "how far an event's occurred_at may lie after the time Timekeeper stores it (ts), in seconds; beyond it the append is refused with 400 naming occurred_at. Tight: nothing reports an event before it happens, so only clock skew between the writer's host and the database is allowed for",
  },
  taskSlotsDefault: {
    env: 'TASK_SLOTS_DEFAULT',
    // 100 (was 20, issue 15): a run's first workflow task holds a slot for its whole first attempt;
    // 100 calls of a 10 s LLM agent are 10 runs a second, and at 3,000 fast fires a minute 20 kept runs queued.
    default: 100,
    min: 1,
    max: 1000,
    why: 'agent calls of default-priority task runs one worker makes at once; a slow low-priority task waits here, never in the core slots',
  },
  taskSlotsCore: {
    env: 'TASK_SLOTS_CORE',
    default: 50,
    min: 1,
    max: 1000,
    why: 'agent calls of core-priority task runs one worker makes at once, on their own task queue',
  },
  otelPollMs: {
    env: 'TIMEKEEPER_OTEL_POLL_MS',
    default: 5000,
    min: 100,
    max: 3_600_000,
    why: 'how often the OpenTelemetry exporter looks for new events once it has caught up (each look is an activity and a timer)',
  },
  otelSettleMs: {
    env: 'TIMEKEEPER_OTEL_SETTLE_MS',
    default: 2000,
    min: 0,
    max: 600_000,
    why: 'how old (by ts) an event must be before it is exported: longer than any append transaction, so the cursor never passes an event still being committed',
  },
} as const satisfies Record<string, Tunable>;

export const LIMITS = {
  /** Leaves one log batch adds at most (one transaction: leaves, tile strips, checkpoint); a backlog takes several batches back to back. */
  tlogBatchMax: 20_000,
  /** How long one run of the log builder's activity keeps building before it returns to its workflow (few history events while idle). */
  tlogActivityRunMs: 60_000,
  /** Builder runs per workflow run before continue-as-new. */
  tlogRunsPerWorkflow: 200,
  /** Each HTTP request the MCP server makes: longer than the default write deadline (30 s), so the API answers first (503) and the tool reports that. */
  mcpRequestTimeoutMs: 45_000,
  /** Events written in one transaction at most: one round trip for a burst, bounded lock time. */
  appendBatchEvents: 200,
  /** Content bytes per transaction (a single larger event still goes alone): keeps a batch under Temporal's 2 MB payload limit. */
  appendBatchBytes: 1024 * 1024,
  /** One batch write attempt; a database outage retries it (below) instead of failing it. */
  appendAttemptTimeoutMs: 15_000,
  appendRetryInitialMs: 200,
  /** Backoff cap while the database is down: recovery within this long after it returns. */
  appendRetryMaxMs: 10_000,

  /** How long verify waits for the workflow's view of the chain head before reporting no anchor. */
  anchorTimeoutMs: 5_000,
  /** Rows per page when verify recomputes a chain: memory stays flat for long sessions. */
  verifyPageSize: 5_000,

  /** Largest page of a /v1 list or read. */
  pageMax: 1_000,
  pageDefault: 100,
  /** Events in an LLM context view by default. */
  contextDefaultEvents: 200,
  /** The seed returned every event when no limit was given; one seed read is capped here. */
  seedMaxEvents: 10_000,

  sessionIdMaxChars: 128,
  agentIdMaxChars: 128,
  channelMaxChars: 64,
  endReasonMaxChars: 200,
  idempotencyKeyMaxChars: 200,
  /** An idle timeout longer than this is almost surely a unit mistake (ms for s). */
  idleTimeoutMaxS: 30 * 24 * 3600,
  /** Body room beyond the largest content: JSON escaping can double it, plus the other fields. */
  bodyOverheadBytes: 64 * 1024,

  /** OML suggests ids like OPS-20231027-001; 200 leaves room for task names and UUIDs. */
  intentIdMaxChars: 200,
  intentDomainMaxChars: 64,
  intentActionMaxChars: 200,
  /** Tags are filters, not documents. */
  intentTagsMax: 32,
  intentTagMaxChars: 64,
  intentNoteMaxChars: 4_000,
  /** `timekeeper intents repair`: a run whose one workflow task has been open this long is stuck in a write (a healthy one takes ms). */
  intentWedgedAfterS: 60,
  /**
   * An intent's data is what a recovering agent needs to redo the work, not the work itself
   * (the OML article: put large payloads in ARTIFACTS and store the path); 64 KiB of canonical JSON.
   */
  intentDataMaxBytes: 64 * 1024,
  /** A ttl_s longer than a year is almost surely a unit mistake (ms for s). */
  intentTtlMaxS: 365 * 24 * 3600,
  /** Transitions per intent workflow run before continue-as-new (a blocked/requested retry loop could otherwise grow a history without bound). */
  intentTransitionsPerRun: 500,
  /** Largest page of GET /api/events and GET /api/events/pending. */
  intentPageMax: 1_000,
  intentPageDefault: 100,
  /**
   * How often a worker process looks for intents whose workflow is not running (terminated,
   * timed out, lost with Temporal's state) and restarts them from the stored head: open ones, so
   * that their time-to-live acts again, and blocked ones waiting for a retry_after, so that they
   * re-open and wake their agent; also once at start-up. One describe call per such intent, all
   * of them (IntentClient.reconcileOpen).
   */
  intentReconcileIntervalMs: 5 * 60_000,
  /** Rows the reconcile sweep reads (and describes) per page; it pages on until none are left. */
  intentReconcilePageSize: 500,
  /** Timeline events the OpenTelemetry exporter reads, maps and sends per batch (one OTLP request). */
  otelExportBatchEvents: 500,
  /** Events before a batch the exporter reads per session for the spans that open there (back to the turn's USER_INPUT); a turn longer than this loses its invoke_agent span, and its later spans their parent. */
  otelExportContextEvents: 1000,
  /** One wake webhook attempt; then it is retried with backoff. */
  wakeAttemptTimeoutMs: 10_000,
  wakeRetryInitialMs: 1_000,
  wakeRetryMaxMs: 60_000,
  /** After this many failed attempts a wake is given up (the intent is re-opened all the same; the agent finds it in pending). */
  wakeMaxAttempts: 10,
  /** A session-link append (INTENT_TRANSITION) is retried this often before the link is given up. */
  sessionLinkMaxAttempts: 10,
  /** Largest STATE.md or artifact rendered or served. */
  workspaceFileMaxBytes: 5 * 1024 * 1024,
  /** Files listed by GET /api/artifacts at most. */
  artifactsListMax: 1_000,

  /** PostgreSQL connections per process. */
  dbPoolMax: 20,
  /**
   * How long an idle pooled connection is kept. A burst's connections stay for the next burst:
   * a new one costs PostgreSQL a backend fork and cold catalog caches, and with 30 s the seed's
   * 100 concurrent inits reopened them (PostgreSQL's CPU per init 10.1-13.2 -> 5.2-8.2 ms;
   * docs/operations.md, issue 17, stop 45). At most dbPoolMax per process either way.
   */
  dbIdleMs: 600_000,
  /** A connection attempt fails after this, so an outage answers 503 instead of hanging. */
  dbConnectTimeoutMs: 10_000,

  /** Sessions are long-lived and mostly idle: keep many cached so an append rarely replays. */
  workerMaxCachedWorkflows: 5_000,
  /**
   * Workflow tasks a worker takes at once. A task's 10 s start-to-close timeout runs from the
   * moment the worker polls it, and the tasks it holds share the workflow threads: after a
   * restart, 100 slots let 30+ sessions' full replays queue inside the worker until they timed
   * out, were rescheduled and replayed again (issue 9: 48–72 s unwritable). With 40 (and
   * short runs, SESSION_UPDATES_PER_RUN), the tasks a worker holds replay in a few seconds on
   * two threads, and the rest wait in the server, where nothing times out. 16 recovered as
   * well but looked slower at the seed load (100 sessions appending, each task holding its
   * slot through its batch write); 40 measured 50 sessions writable 4.2 s after a worker restart.
   */
  workerMaxConcurrentWorkflowTasks: 40,
  /** One workflow thread per core of the 2-core reference machine: replays after a restart run in parallel, I/O stays on the main thread. */
  workerWorkflowThreads: 2,
  workerMaxConcurrentLocalActivities: 100,
  /**
   * Workflow task start-to-close timeout of session and intent workflows (Temporal's default
   * is 10 s), set on every start and carried over each continue-as-new. It is how long the
   * sessions whose task was in flight on a worker that died (kill -9, OOM, host lost) wait
   * before another worker takes them: with 10 s those sessions were unwritable 11-14 s after
   * losing one of two workers (issue 18). A task itself takes milliseconds; what can make one
   * long is a batch write (a local activity: the SDK then completes the task and asks for a
   * new one at 80 % of this, so a slow write only costs a round trip) or a replay queued
   * behind others on the workflow threads (workerMaxConcurrentWorkflowTasks bounds that).
   * Runs started before this keep 10 s until their next continue-as-new.
   */
  workflowTaskTimeoutMs: 5_000,
  /**
   * How long a workflow task waits on a worker's sticky queue before the server offers it on
   * the normal queue (the SDK's default is 10 s). Sessions cached on a worker that died get
   * their next task there; for up to 10 s after its last poll the server still believes that
   * worker is there (matching's fixed stickyPollerUnavailableWindow). 3 s bounds their wait;
   * a live but busy worker that misses it only costs another worker a replay.
   */
  workerStickyScheduleToStartMs: 3_000,
  /** /readyz counts a worker as present when it polled the task queue this recently (an idle long poll lasts up to about a minute). */
  workerPollerFreshMs: 120_000,
  /** Each worker process writes its heartbeat row (worker_heartbeats, schema/013) this often while its workers run... */
  workerHeartbeatMs: 2_000,
  /** ...and /readyz counts it as alive while its newest beat is this recent: a killed worker is noticed within this, under 10 s (issue 16). */
  workerHeartbeatFreshMs: 6_000,
  /** Heartbeat rows of workers gone this long are deleted by the next worker that starts. */
  workerHeartbeatKeepMs: 86_400_000,
  /** Each /readyz check's own deadline: the answer comes within about this whatever is down, and names the checks that timed out. */
  readinessCheckMs: 800,
  /** `npm start` restarts a worker that stopped with an error after this long, doubling per failure... */
  workerRestartInitialMs: 1_000,
  /** ...up to this: a dependency that stays down is retried twice a minute, not in a tight loop. */
  workerRestartMaxMs: 30_000,
  /** A worker run that lasted this long was healthy: the next failure starts the backoff over. */
  workerHealthyRunMs: 60_000,
  /** SIGTERM lets in-flight tasks finish for this long before the process exits. */
  workerShutdownGraceMs: 20_000,
  /** The API's /metrics waits this long for npm start's worker child to answer its scrape; then shows its own series only. */
  workerMetricsScrapeMs: 2_000,

  /**
   * Retry-After (seconds) on a 503 after the write deadline, and the least one on a write
   * refused for capacity (api/admission.ts scales that one with the queue: writes in flight
   * divided by the rate they completed at recently)...
   */
  retryAfterS: 1,
  /** ...up to this: past it a client's retry is better decided by its own backoff than by a stale estimate. */
  retryAfterMaxS: 30,
  /** The completion rate behind Retry-After is measured over this many seconds: long enough to smooth batches, short enough to follow a change in load. */
  retryAfterWindowS: 10,
  /**
   * A create slower than this shrinks the create bound (api/admission.ts): half the 10 s in
   * which issue 9 wants every accepted create answered, leaving room for the wave admitted
   * while the bound was still wide.
   */
  createLatencyTargetMs: 5_000,
  /**
   * Creates/s behind the throughput cap on the create bound (api/admission.ts, Little's law)
   * are measured over this much busy time: long enough to span a few batches of the worker,
   * short enough that a slowdown lowers the bound within seconds.
   */
  createRateWindowMs: 5_000,
  /**
   * Refused creates are given turns (Retry-After) this much faster than creates can complete
   * (api/admission.ts): a client back a little early is refused again cheaply, one back late
   * leaves the worker idle.
   */
  createTurnRateFactor: 1.25,
  /**
   * The create bound never shrinks below this (api/admission.ts): the seed's own load is 100
   * sessions created at once, the load the product is sized for, and it is never refused, on a
   * slow or loaded machine too (issue 17: at 16, 19 of those 100 were refused). A stuck engine
   * then holds up to this many creates until their write deadline, each answered as unknown.
   */
  createsInFlightFloor: 100,
  /** Weight of the newest write in the mean write latency behind a per-session 429's Retry-After (an EWMA over ~20 writes). */
  retryAfterLatencyWeight: 0.05,
  /** How long a failed write may spend finding out why (database ping, task-queue pollers) before it answers. */
  diagnoseTimeoutMs: 1_500,

  /** Longer than the usual load-balancer idle timeout (60 s), so the balancer closes first. */
  httpKeepAliveMs: 65_000,
  httpHeadersTimeoutMs: 66_000,
  /** A whole request (headers and body, at most ~1 MiB) must arrive within this; Node's default is 300 s, which lets a slow sender hold a socket for five minutes. */
  httpRequestTimeoutMs: 90_000,
  /**
   * Connections the kernel queues for accept() (Node's default is 511, the kernel caps it at
   * net.core.somaxconn). A burst of more new connections than the queue holds has the excess
   * SYNs dropped and resent by the client after 1, 3 and 7 s: 1,000 clients connecting at once
   * saw "refused at once" answers arrive after 7 s (issue 9).
   */
  httpListenBacklog: 4096,

  // ---- scheduled tasks (issue 7) ----
  taskIdMaxChars: 128,
  taskNameMaxChars: 200,
  /** Shortest interval trigger: a durable timer per second is as fine as Temporal timers usefully go. */
  taskMinIntervalS: 1,
  /** Longest run timeout: a day; longer than that is a unit mistake or a job, not an agent run. */
  taskTimeoutMaxS: 24 * 3600,
  /** Attempts per run at most: more is a loop, not a retry policy. */
  taskMaxAttempts: 20,
  /** Longest single backoff wait: a week, so a ladder can span a weekend outage. */
  taskBackoffMaxS: 7 * 24 * 3600,
  /** Exponential retry: the growth factor at most (Temporal's own policies start at 2); 10 already reaches a week in 6 steps. */
  taskBackoffCoefficientMax: 10,
  /** Exponential retry without maximum_interval_s: the cap is this many initial intervals (Temporal's default, 100). */
  taskBackoffDefaultCapFactor: 100,
  /** Longest misfire grace: a day; beyond that a "late" run has lost its meaning. */
  taskMisfireGraceMaxS: 24 * 3600,
  /** A fire this late still counts as on time (a busy worker, not downtime), whatever the misfire grace. */
  taskOnTimeSlackMs: 5_000,
  /**
   * A scheduler holding a buffer_one fire time tries it again at least this often: the run it
   * waits for wakes it on finishing (task_run_wakes), this only covers a wake that was lost.
   */
  taskBufferedRecheckMs: 30_000,
  /** run_all after an outage starts at most this many missed runs: no burst of stale runs. */
  taskMisfireRunAllMax: 100,
  /**
   * Fire times one backfill request may run. Each starts a run workflow inside the request
   * and the 202 lists every one, so the request stays within seconds and its answer small;
   * the runs then queue for the task-run worker slots. A longer range is split into requests.
   */
  taskBackfillMax: 100,
  /** Run workflows a backfill starts at once (each start is one round trip to Temporal). */
  taskBackfillStartsAtOnce: 10,
  /** Concurrent runs of one task under overlap "allow". */
  taskMaxConcurrency: 100,
  /** Past runs the agent reads as its memory, at most: a few dozen tokens each. */
  taskMemoryRunsMax: 20,
  /** Execution-log summaries are cut to this many characters (the article: a few hundred); full output goes to artifacts. */
  taskSummaryChars: 500,
  promptTemplateMaxChars: 20_000,
  personaMaxChars: 2_000,
  taskTagsMax: 20,
  taskDeliveryTargetsMax: 10,
  /** A digest looks back at most 30 days: the needs-attention queue is for recent failures. */
  taskDigestSinceMaxS: 30 * 24 * 3600,
  /** Failed runs one digest lists (its count covers all); keeps the answer well under its 20,000-character summary. */
  taskDigestItemsMax: 200,
  taskDigestTaskIdsMax: 100,
  holidaysMax: 1_000,
  /** Fire times a preview (and a task description) lists at most. */
  schedulePreviewMax: 100,
  schedulePreviewDefault: 10,
  /** Fire times GET /v1/tasks/:id shows. */
  taskNextFireTimesShown: 5,
  /** Compiled cron patterns kept per process (lib/domain/tasks/schedule.ts): distinct expressions are few; about 10 KB each. */
  cronCompiledCacheMax: 2_000,
  /** The widest stagger window a cron task may have: an hour (OpenClaw staggers top-of-hour jobs by up to 5 minutes). */
  taskStaggerMaxS: 3600,
  /** Zone offsets kept by zone and UTC hour (lib/domain/platform/zones.ts zoneOffsetMs): a few MB at most. */
  zoneOffsetHoursCached: 50_000,
  /** Run workflows are short-lived: a small cache per task-run worker. */
  taskRunWorkerCachedWorkflows: 500,
  /** Workflow-task polls a run worker keeps open at once (the SDK's default is 10): runs arrive as new workflows, each its own poll. */
  taskRunWorkerWorkflowPolls: 20,
  /** Fires one scheduler workflow run handles before continue-as-new (keeps its history small). */
  schedulerFiresPerRun: 500,
  /**
   * The shared fire schedule (schema/023): plain cron and interval tasks fire from this many
   * shards, each a long-running activity (workflows/tasks/fire-shard.ts). A task's shard is
   * stored when it registers; a worker started with a smaller count folds the rows of shards
   * beyond it into the ones it runs (clients/task-fires.ts), so a change strands no row.
   */
  taskFireShards: 4,
  /** A shard looks for rows registered since it went to sleep at least this often (a new task's first fire time is at most this late). */
  taskFireShardPollMs: 500,
  /** Due rows one shard claims and fires in one transaction. */
  taskFireShardBatch: 200,
  /** Runs one shard starts at once (each a run-log insert and a Temporal start). */
  taskFireShardStartsAtOnce: 32,
  /**
   * A shard's heartbeat timeout: a shard lost with its worker moves to another worker about this
   * fast (then tried again after taskFireShardRetryInitialMs), inside the 5 s on-time slack, so a
   * kill -9 hands few fire times back to the misfire policy. The loop beats at every pass and every
   * fire (the SDK sends at most one beat per 80 % of this); was 5 s: a kill then cost ~6 s.
   */
  taskFireShardHeartbeatTimeoutMs: 3_000,
  /** A lost or failed shard activity is tried again this soon (then backing off to taskFireRetryMaxMs). */
  taskFireShardRetryInitialMs: 200,
  /** One shard activity returns after this long and its workflow starts the next: bounded attempts, small histories (a workflow task a minute per shard). */
  taskFireShardActivityMs: 60_000,
  /** Shard activities one fire-shard workflow run takes before continue-as-new. */
  taskFireShardActivitiesPerRun: 100,
  /**
   * A task activity that is one statement or one outgoing call (the run's log rows,
   * deliveries, auto-disable; the scheduler's fire times, skips and completion): one lost
   * with a crashed worker is retried soon, from taskActivityRetryInitialMs up to
   * taskActivityRetryMaxMs between tries while PostgreSQL is down.
   */
  taskActivityTimeoutMs: 10_000,
  taskActivityRetryInitialMs: 1_000,
  taskActivityRetryMaxMs: 30_000,
  /**
   * The scheduler's fireRun and watchRuns (local activities: a PostgreSQL insert and a
   * Temporal start or describe per run): retried while either is down, at most this far apart,
   * so the fire time runs soon after they return.
   */
  taskFireTimeoutMs: 30_000,
  taskFireRetryMaxMs: 10_000,
  /**
   * A run whose start is logged but whose workflow Temporal does not know is taken for lost (its
   * start never reached Temporal, or its history is gone) only this long after the start was
   * logged: before, its start may still be on its way (logged first, then started).
   */
  taskRunLostAfterMs: 60_000,
  /** How long a first attempt's answer is kept for a re-execution of its local activity: longer than a workflow task's timeout and retry. */
  taskFirstAttemptKeptMs: 60_000,
  /** A run log reason, a delivery detail and a task history reason are cut to this (schema/005's CHECK). */
  taskReasonMaxChars: 1_000,
  /** GET /v1/tasks/:id asks the scheduler for its state this long; then the task is shown without it (a busy or absent worker). */
  schedulerQueryTimeoutMs: 3_000,
  /** Who created a task (`created_by`, printable text; a bound key fills in its agent id). */
  taskCreatedByMaxChars: 200,
  /** Agent, delivery and alert URLs: longer is not an address a person configured. */
  taskUrlMaxChars: 2_000,
  /** HMAC secrets: at least 8 characters (a guessable key signs nothing), at most 500. */
  taskSecretMinChars: 8,
  taskSecretMaxChars: 500,
  /** An IANA zone name (the longest today is 32 characters). */
  timeZoneMaxChars: 64,
  /** A cron expression: six fields with lists and ranges fit well within it. */
  cronExpressionMaxChars: 200,
  /** An agent's model name, and an OpenClaw agent id: names, not documents. */
  agentNameMaxChars: 200,
  /** An OpenClaw session key: room for a channel, a peer and a thread id. */
  agentSessionKeyMaxChars: 500,
  /** The sampling temperature OpenAI-compatible APIs accept (0 to 2). */
  agentTemperatureMax: 2,
  /** A `file` delivery's name template (a file directly under ARTIFACTS_DIR). */
  deliveryPathMaxChars: 200,
  /** auto_disable_after at most: a task that failed a thousand runs in a row is not waiting for one more. */
  taskAutoDisableAfterMax: 1_000,
  /** One task tag (and the tag filter of GET /v1/tasks). Tags are filters, not documents. */
  taskTagMaxChars: 64,
  /** A next_cursor sent back: the task list's (an order, a time and a task id) and the run lists' (a time and a run id). */
  taskListCursorMaxChars: 1_000,
  runListCursorMaxChars: 200,
  /** A run id in a path (`run/<task_id>/<nominal UTC time>`, with a kind and key for delay runs): room for a 128-character task id with the rest. */
  runIdMaxChars: 300,
  // ---- signals, delay and condition triggers (issue 7) ----
  /** Longest delay after an event, and longest condition delay_s / for_s / cooldown_s: a week, like the longest backoff. */
  signalTriggerMaxS: 7 * 24 * 3600,
  /** Leaves and groups in one condition: enough for "A for 3 min and B and working hours"; the scheduler re-evaluates all of them per signal. */
  conditionNodesMax: 32,
  /** Nesting of all/any groups. */
  conditionDepthMax: 4,
  /** Fields in a signal's `values`: a flat record, not a document store. */
  signalValuesMax: 32,
  /** A string value (or a `values` entry) in a signal. */
  signalStringMaxChars: 500,
  /** Stored signals a scheduler started afresh reads back (the newest): enough to rebuild waits and a condition's readings, bounded so one local activity answer stays small. */
  signalCatchUpMax: 500,
  /** Signals one scheduler run takes in before continue-as-new (each is a history event). */
  schedulerSignalsPerRun: 2_000,
  /** Answers the agent may give: the first, and one re-ask with the validation error. */
  agentAnswerAsks: 2,
  /**
   * POST /v1/runs/{run_id}/result waits this long for the run workflow to take the result: the
   * update is a few milliseconds when a worker runs; longer means none does, and the agent should
   * retry (the same result is deduplicated) rather than hold its connection open.
   */
  runResultUpdateMs: 10_000,
  /** Outgoing HTTP (deliveries, alerts): a receiver that does not answer in this long failed. */
  outboundTimeoutMs: 30_000,
  /** Redirects an outgoing request follows at most; each hop is checked by the SSRF guard again. */
  outboundMaxRedirects: 3,
  /** Largest agent or receiver answer read. */
  outboundMaxResponseBytes: 1024 * 1024,
  /** A caller's X-Request-Id longer than this is replaced: it is copied into every log line and workflow input of the request. */
  requestIdMaxChars: 128,
} as const;

/**
 * Histogram buckets of /metrics (lib/metrics.ts). Fixed: changing them breaks every stored
 * series and dashboard query, so they are chosen once for the ranges that matter.
 */
export const METRIC_BUCKETS = {
  /** HTTP latency: reads take milliseconds, writes wait for the workflow (up to WRITE_TIMEOUT_MS, 10 s by default). */
  httpSeconds: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  /** One append batch is one PostgreSQL transaction: milliseconds when healthy, seconds under lock contention. */
  appendSeconds: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  /** Items per batch, up to LIMITS.appendBatchEvents (200). */
  batchSize: [1, 2, 5, 10, 20, 50, 100, 200],
  /** Firing lateness: under a second when the worker is up; minutes to hours after an outage (misfire policy). */
  latenessSeconds: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600],
  /** Steps of a run's first attempt: from a millisecond statement to a queue of tens of seconds. */
  stepSeconds: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
} as const;

/** Largest accepted JSON or form body for a given content limit. */
export const bodyLimitBytes = (maxContentBytes: number): number => maxContentBytes * 2 + LIMITS.bodyOverheadBytes;
