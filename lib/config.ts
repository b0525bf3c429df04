/**
 * Runtime configuration: the one place that reads the environment, through one validated
 * schema. Every value has a default that works on a fresh development machine; production
 * sets the addresses and credentials explicitly (see docs/operations.md). The limits come
 * with their bounds and reasons from lib/domain/limits.ts.
 *
 * (Child processes are still handed PATH and TZ as the OS gives them: that is process
 * plumbing, not configuration.)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { LIMITS, TUNABLE, Tunable } from './domain/limits';
import { AGENT_TYPES, DELIVERY_TYPES, SECRET_NAME_RE } from './domain/tasks';
import type { AgentTaskBounds } from './agent-task-bounds';
import { DEFAULT_TILE_CACHE_BYTES } from './tlog/tile-cache';
import { witnessingSettings, type WitnessingSettings } from './tlog/witnessing';

export const APP_ROLE = 'timekeeper_app';
export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/timekeeper';

const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
const APP_LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** Unset and empty both mean "use the default". */
const optional = z
  .string()
  .optional()
  .transform((v) => (v === '' ? undefined : v));

/** A comma-separated list of some of `allowed` (empty: none given). */
function listOf(name: string, raw: string | undefined, allowed: readonly string[], ctx: z.RefinementCtx): string[] {
  const items = (raw ?? '').split(',').map((x) => x.trim()).filter(Boolean);
  const bad = items.filter((x) => !allowed.includes(x));
  if (bad.length) ctx.addIssue({ code: 'custom', message: `${name}: ${bad.join(', ')} not one of ${allowed.join(', ')}` });
  return items;
}

/** Comma-separated host names or addresses, lowercase (OUTBOUND_ALLOW_HOSTS, AGENT_TASK_HOSTS). */
const hostsOf = (raw: string | undefined): string[] =>
  (raw ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);

const intVar = (name: string, fallback: number, min: number, max: number) =>
  optional.transform((raw, ctx) => {
    if (raw === undefined) return fallback;
    // Digits only: Number() would also take " ", "0x10", "1e3" and "80.0".
    const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isInteger(n) || n < min || n > max) {
      ctx.addIssue({ code: 'custom', message: `${name} must be an integer from ${min} to ${max}, got "${raw}"` });
      return z.NEVER;
    }
    return n;
  });
const tunable = (t: Tunable) => intVar(t.env, t.default, t.min, t.max);

const EnvSchema = z.object({
  PORT: intVar('PORT', 8000, 0, 65535),
  HOST: optional,
  DATABASE_URL: optional,
  APP_DATABASE_URL: optional,
  APP_DB_PASSWORD: optional,
  TEMPORAL_ADDRESS: optional,
  TEMPORAL_NAMESPACE: optional,
  TEMPORAL_TASK_QUEUE: optional,
  TEMPORAL_UI_URL: optional,
  TEMPORAL_LOG_LEVEL: optional.pipe(z.enum(LOG_LEVELS, { error: `TEMPORAL_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}` }).optional()),
  TIMEKEEPER_DATA_DIR: optional,
  TIMEKEEPER_WORKFLOW_BUNDLE: optional,
  LOG_LEVEL: optional.pipe(z.enum(APP_LOG_LEVELS, { error: `LOG_LEVEL must be one of ${APP_LOG_LEVELS.join(', ')}` }).optional()),
  LOG_FORMAT: optional.pipe(z.enum(['json', 'pretty'], { error: 'LOG_FORMAT must be json or pretty' }).optional()),
  TIMEKEEPER_API_KEYS: optional,
  TIMEKEEPER_API_KEYS_FILE: optional,
  [TUNABLE.maxContentBytes.env]: tunable(TUNABLE.maxContentBytes),
  [TUNABLE.updatesPerRun.env]: tunable(TUNABLE.updatesPerRun),
  [TUNABLE.occurredAtMaxPastS.env]: tunable(TUNABLE.occurredAtMaxPastS),
  [TUNABLE.occurredAtMaxFutureS.env]: tunable(TUNABLE.occurredAtMaxFutureS),
  [TUNABLE.writeTimeoutMs.env]: tunable(TUNABLE.writeTimeoutMs),
  [TUNABLE.writesInFlightMax.env]: tunable(TUNABLE.writesInFlightMax),
  [TUNABLE.createsInFlightMax.env]: tunable(TUNABLE.createsInFlightMax),
  [TUNABLE.sessionWritesInFlightMax.env]: tunable(TUNABLE.sessionWritesInFlightMax),
  [TUNABLE.connectionsPerClientMax.env]: tunable(TUNABLE.connectionsPerClientMax),
  [TUNABLE.intentDefaultTtlS.env]: tunable(TUNABLE.intentDefaultTtlS),
  [TUNABLE.intentRetentionS.env]: tunable(TUNABLE.intentRetentionS),
  INTENT_DOMAIN_TTLS: optional.transform((raw, ctx) => {
    const out: Record<string, number> = {};
    if (raw === undefined) return out;
    for (const entry of raw.split(',').map((e) => e.trim()).filter(Boolean)) {
      const m = /^([A-Za-z0-9][A-Za-z0-9._:-]*)=(\d+)$/.exec(entry);
      const n = m ? Number(m[2]) : NaN;
      if (!m || n < 1 || n > TUNABLE.intentDefaultTtlS.max) {
        ctx.addIssue({ code: 'custom', message: `INTENT_DOMAIN_TTLS must look like "ops=3600,reporting=7200" (seconds, 1 to ${TUNABLE.intentDefaultTtlS.max}), got "${entry}"` });
        return z.NEVER;
      }
      out[m[1]] = n;
    }
    return out;
  }),
  INTENT_WAKE_URL: optional.pipe(z.url({ error: 'INTENT_WAKE_URL must be an http(s) URL', protocol: /^https?$/ }).optional()),
  INTENT_WAKE_TOKEN: optional,
  INTENT_STATUS_SEARCH_ATTRIBUTE: optional.pipe(z.enum(['true', 'false', '1', '0'], { error: 'INTENT_STATUS_SEARCH_ATTRIBUTE must be true or false' }).optional()),
  DB_READ_ONLY: optional.pipe(z.enum(['true', 'false', '1', '0'], { error: 'DB_READ_ONLY must be true or false' }).optional()),
  WORKSPACE_PATH: optional,
  STATE_MD_PATH: optional,
  ARTIFACTS_DIR: optional,
  OML_PORT: intVar('OML_PORT', 0, 0, 65535),
  WORKER_METRICS_PORT: intVar('WORKER_METRICS_PORT', 0, 0, 65535),
  OUTBOUND_ALLOW_HOSTS: optional,
  OUTBOUND_ECHO_BODIES: optional.pipe(z.enum(['true', 'false', '1', '0'], { error: 'OUTBOUND_ECHO_BODIES must be true or false' }).optional()),
  WORKFLOW_STACK_TRACES: optional.pipe(z.enum(['true', 'false', '1', '0'], { error: 'WORKFLOW_STACK_TRACES must be true or false' }).optional()),
  AGENT_SECRETS: optional,
  SECRETS_KEY: optional,
  LOG_ORIGIN: optional.pipe(z.string().regex(/^[\x21-\x2a\x2c-\x7e]{1,200}$/, { error: 'LOG_ORIGIN must be 1-200 printable ASCII characters without spaces or "+" (it is also the signing key\'s name)' }).optional()),
  LOG_SIGNING_KEY_FILE: optional,
  LOG_BATCH_INTERVAL_MS: intVar('LOG_BATCH_INTERVAL_MS', 1000, 100, 4000),
  LOG_TILE_CACHE_BYTES: intVar('LOG_TILE_CACHE_BYTES', DEFAULT_TILE_CACHE_BYTES, 0, 16 * 1024 ** 3),
  LOG_WITNESSES: optional,
  LOG_WITNESS_QUORUM: optional,
  PUBLIC_URL: optional.pipe(z.url({ error: 'PUBLIC_URL must be an http(s) URL', protocol: /^https?$/ }).optional()),
  TASKS_TASK_QUEUE: optional,
  TASKS_CORE_TASK_QUEUE: optional,
  [TUNABLE.taskSlotsDefault.env]: tunable(TUNABLE.taskSlotsDefault),
  [TUNABLE.taskSlotsCore.env]: tunable(TUNABLE.taskSlotsCore),
  OTEL_EXPORTER_OTLP_ENDPOINT: optional.pipe(z.url({ error: 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL, the collector\'s OTLP/HTTP base (e.g. http://127.0.0.1:4318)', protocol: /^https?$/ }).optional()),
  OTEL_SERVICE_NAME: optional,
  [TUNABLE.otelPollMs.env]: tunable(TUNABLE.otelPollMs),
  [TUNABLE.otelSettleMs.env]: tunable(TUNABLE.otelSettleMs),
  TASK_STAGGER_TOP_OF_HOUR_S: intVar('TASK_STAGGER_TOP_OF_HOUR_S', 0, 0, LIMITS.taskStaggerMaxS),
  AGENT_TASK_MIN_INTERVAL_S: intVar('AGENT_TASK_MIN_INTERVAL_S', 0, 0, 31_536_000),
  AGENT_TASKS_MAX: intVar('AGENT_TASKS_MAX', 0, 0, 1_000_000),
  AGENT_TASK_AGENT_TYPES: optional.transform((raw, ctx) => listOf('AGENT_TASK_AGENT_TYPES', raw, AGENT_TYPES, ctx)),
  AGENT_TASK_DELIVERY_TYPES: optional.transform((raw, ctx) => listOf('AGENT_TASK_DELIVERY_TYPES', raw, DELIVERY_TYPES, ctx)),
  AGENT_TASK_HOSTS: optional.transform((raw) => hostsOf(raw)),
  TASK_DEFAULT_AGENT: optional.transform((raw, ctx) => {
    if (raw === undefined) return undefined;
    let v: unknown;
    try {
      v = JSON.parse(raw);
    } catch {
      v = undefined;
    }
    const type = typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>).type : undefined;
    if (typeof type !== 'string' || !(AGENT_TYPES as readonly string[]).includes(type)) {
      ctx.addIssue({ code: 'custom', message: `TASK_DEFAULT_AGENT must be a JSON object with "type" one of ${AGENT_TYPES.join(', ')}, e.g. {"type":"openai","base_url":"http://127.0.0.1:11434/v1","model":"qwen2.5","api_key_env":"LLM_API_KEY"}` });
      return z.NEVER;
    }
    return v as Record<string, unknown>;
  }),
});

export interface Config {
  /** API port. Default 8000, where the seed's agent loop expects the timeline service. */
  port: number;
  /** API bind address. Default 127.0.0.1; any other address requires API keys. */
  host: string;
  /** Owner/admin connection, used for creating the database and running migrations. */
  databaseUrl: string;
  /** True when DATABASE_URL was not set, so start-up may fall back to an embedded PostgreSQL. */
  databaseUrlIsDefault: boolean;
  /** Runtime connection as the role that may only SELECT and INSERT. */
  appDatabaseUrl: string;
  /** Password migrations set on the runtime role (production); undefined in local trust set-ups. */
  appDbPassword: string | undefined;
  /** Temporal frontend address; undefined means "start the CLI dev server ourselves". */
  temporalAddress: string | undefined;
  /** Default "default". */
  temporalNamespace: string;
  /** Default "timekeeper". */
  taskQueue: string;
  /** Base URL of the Temporal Web UI, for links in session descriptions. Default http://127.0.0.1:8233 */
  temporalUiUrl: string;
  /** Log level of the Temporal SDK runtime. Default WARN. */
  temporalLogLevel: (typeof LOG_LEVELS)[number];
  /** Level of Timekeeper's own log (pino). Default info. */
  logLevel: (typeof APP_LOG_LEVELS)[number];
  /** json, or pretty (pino-pretty); undefined: pretty when stdout is a terminal, else JSON lines. */
  logFormat: 'json' | 'pretty' | undefined;
  /** Where the dev server keeps its SQLite file and the embedded PostgreSQL its cluster. Default ./data */
  dataDir: string;
  /** A prebuilt workflow bundle for the worker (npm start hands its worker child the one it built once); undefined: bundle at start-up. */
  workflowBundlePath: string | undefined;
  /** See TUNABLE.maxContentBytes. */
  maxContentBytes: number;
  /** See TUNABLE.updatesPerRun. */
  updatesPerRun: number;
  /** See TUNABLE.writeTimeoutMs. */
  writeTimeoutMs: number;
  /** See TUNABLE.occurredAtMaxPastS (checked by the worker's writer). */
  occurredAtMaxPastS: number;
  /** See TUNABLE.occurredAtMaxFutureS (checked by the worker's writer). */
  occurredAtMaxFutureS: number;
  /** See TUNABLE.writesInFlightMax. */
  writesInFlightMax: number;
  /** See TUNABLE.connectionsPerClientMax. */
  connectionsPerClientMax: number;
  /** See TUNABLE.createsInFlightMax. */
  createsInFlightMax: number;
  /** See TUNABLE.sessionWritesInFlightMax. */
  sessionWritesInFlightMax: number;
  /** See TUNABLE.intentDefaultTtlS. */
  intentDefaultTtlS: number;
  /** Time-to-live by intent domain (INTENT_DOMAIN_TTLS "domain=seconds,..."), before the global default. */
  intentDomainTtls: Record<string, number>;
  /** See TUNABLE.intentRetentionS. */
  intentRetentionS: number;
  /**
   * INTENT_STATUS_SEARCH_ATTRIBUTE=true: intent workflows keep the `IntentStatus` search attribute
   * current on every transition (one more history event and visibility write per transition,
   * docs/operations.md); default false: `IntentId` and `Domain` only. Fixed per intent when its run starts.
   */
  intentStatusSearchAttribute: boolean;
  /** OpenClaw's POST /hooks/wake (or anything taking {"text","mode":"now"}); undefined: no wake calls. */
  intentWakeUrl: string | undefined;
  /** Sent as `Authorization: Bearer <token>` with every wake; never written to workflow histories. */
  intentWakeToken: string | undefined;
  /** DB_READ_ONLY=true: the API refuses every write (POST, PATCH, ...) with 403 read_only; reads work. */
  readOnly: boolean;
  /** OML's workspace: ~/.openclaw/workspace when it exists, else ./data/workspace. */
  workspacePath: string;
  /** GET /api/state serves this Markdown file. Default $WORKSPACE_PATH/STATE.md */
  stateMdPath: string;
  /** GET /api/artifacts serves files under this folder only; task `file` deliveries (worker) write here. Default $WORKSPACE_PATH/ARTIFACTS */
  artifactsDir: string;
  /** A second port for the OML-compatible routes (OML's default is 3847); 0: off. */
  omlPort: number;
  /** `npm run worker` serves its metrics (GET /metrics) on this port at HOST; 0: off. */
  workerMetricsPort: number;
  /** Inline API keys ("key:scope[|scope],..."), or undefined. */
  apiKeys: string | undefined;
  /** Path of a JSON API keys file, or undefined. */
  apiKeysFile: string | undefined;
  /**
   * Hosts (names or addresses, lowercase) that outgoing task requests (agents, deliveries,
   * alerts) may reach even though they resolve to loopback, link-local or private addresses.
   * From OUTBOUND_ALLOW_HOSTS, comma-separated. Default none.
   */
  outboundAllowHosts: string[];
  /**
   * Whether a run's reason may quote what an agent, delivery or alert URL answered (up to 300
   * characters) after the status line. From OUTBOUND_ECHO_BODIES; default false: only
   * `HTTP 500 Internal Server Error`, so an internal answer is never read back through a run.
   */
  outboundEchoBodies: boolean;
  /**
   * Whether the worker's workflow threads keep the Temporal SDK's per-promise stack capture, which
   * the Temporal UI's "Stack Trace" tab (the `__stack_trace` query) shows. From
   * WORKFLOW_STACK_TRACES; default false: off, as it costs every workflow call CPU
   * (worker/workflow-threads.ts). Turn it on while looking into a stuck workflow.
   */
  workflowStackTraces: boolean;
  /**
   * The only variables an agent's `token_env` / `api_key_env` may name (AGENT_SECRETS,
   * comma-separated; default none). Timekeeper's own variables are refused here at start-up.
   */
  agentSecrets: string[];
  /**
   * The key (32 bytes, base64 or hex) that seals the HMAC secrets of agents, deliveries and
   * alerts in the database and in workflow histories (SECRETS_KEY). Unset: generated on first
   * start and kept in <dataDir>/secrets.key (lib/secrets-key.ts).
   */
  secretsKey: string | undefined;
  /** LOG_ORIGIN: the transparency log's origin line (and key name); undefined: timekeeper/<instance id> (lib/tlog/log-key.ts). */
  logOrigin: string | undefined;
  /** LOG_SIGNING_KEY_FILE: the log's Ed25519 signing key; undefined: <dataDir>/log-signing.key, generated on first start. */
  logSigningKeyFile: string | undefined;
  /** LOG_BATCH_INTERVAL_MS: how often the log builder looks for new records (100-4000, default 1000). */
  logBatchIntervalMs: number;
  /** LOG_TILE_CACHE_BYTES: the log's tiles kept in memory per process for proofs (0-16 GiB, default 64 MiB; 0: none; lib/tlog/tile-cache.ts). */
  logTileCacheBytes: number;
  /** LOG_WITNESSES and LOG_WITNESS_QUORUM: the witnesses each checkpoint goes to and how many must cosign (lib/tlog/witnessing.ts). */
  logWitnessing: WitnessingSettings;
  /**
   * The API's base URL as agents reach it (PUBLIC_URL, no trailing slash): a webhook or OpenClaw
   * agent posts its result to <publicUrl>/v1/runs/{run_id}/result. Default the listen address
   * (http://HOST:PORT, 127.0.0.1 for a wildcard HOST).
   */
  publicUrl: string;
  /** Task queue of `default`-priority task runs; undefined: "<taskQueue>-tasks". */
  tasksTaskQueue: string | undefined;
  /** Task queue of `core`-priority task runs; undefined: "<taskQueue>-tasks-core". */
  tasksCoreTaskQueue: string | undefined;
  /** See TUNABLE.taskSlotsDefault. */
  taskSlotsDefault: number;
  /** See TUNABLE.taskSlotsCore. */
  taskSlotsCore: number;
  /** OTEL_EXPORTER_OTLP_ENDPOINT (OTLP/HTTP base URL): sessions exported as traces, Temporal's spans too; undefined: no export at all. */
  otelEndpoint: string | undefined;
  /** OTEL_SERVICE_NAME, the exported resource's service.name. Default `timekeeper`. */
  otelServiceName: string;
  /** See TUNABLE.otelPollMs. */
  otelPollMs: number;
  /** See TUNABLE.otelSettleMs. */
  otelSettleMs: number;
  /**
   * TASK_DEFAULT_AGENT (JSON): the agent a task gets when its `agent` names no `type`, as the
   * scheduler article's example does; the task's own agent fields win. Checked against the
   * agent contract when the API starts. Undefined: every task names its agent type.
   */
  taskDefaultAgent: Record<string, unknown> | undefined;
  /**
   * TASK_STAGGER_TOP_OF_HOUR_S: the stagger window (seconds, 0-3600) a cron task that fires on
   * the hour gets when it names no `stagger_s` (lib/domain/tasks/stagger.ts). Default 0: none.
   */
  taskStaggerTopOfHourS: number;
  /** The bounds of tasks an agent creates (AGENT_TASK_MIN_INTERVAL_S, AGENT_TASKS_MAX, AGENT_TASK_AGENT_TYPES, AGENT_TASK_DELIVERY_TYPES, AGENT_TASK_HOSTS; lib/agent-task-bounds.ts). */
  agentTaskBounds: AgentTaskBounds;
}

/** The task queues scheduled task runs go to, by priority class (separate queues and worker slots). */
export function taskRunQueues(c: Pick<Config, 'taskQueue' | 'tasksTaskQueue' | 'tasksCoreTaskQueue'>): { default: string; core: string } {
  return { default: c.tasksTaskQueue ?? `${c.taskQueue}-tasks`, core: c.tasksCoreTaskQueue ?? `${c.taskQueue}-tasks-core` };
}

/** Timekeeper's own variables (every setting above) and the shell's: never a task's secret, even if listed. */
const OWN_VARIABLES = /^(TIMEKEEPER_.*|TEMPORAL_.*|PATH|HOME|PWD|SHELL|USER)$/;
const isOwnVariable = (name: string) => OWN_VARIABLES.test(name) || Object.hasOwn(EnvSchema.shape, name);

/**
 * Reads the secret a task names by its environment variable (an LLM API key, a gateway
 * token), at the moment it is needed: the value is never stored, logged or put in workflow
 * history. Only names the operator registered in AGENT_SECRETS are readable, and never
 * Timekeeper's own variables.
 */
export function readSecret(name: string, agentSecrets: readonly string[], env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (!SECRET_NAME_RE.test(name) || isOwnVariable(name) || !agentSecrets.includes(name)) return undefined;
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

/** AGENT_SECRETS as a list; a malformed name or one of Timekeeper's own variables is a start-up error. */
function agentSecretsOf(raw: string | undefined): string[] {
  const names = (raw ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  for (const n of names) {
    if (!SECRET_NAME_RE.test(n)) throw new Error(`AGENT_SECRETS: "${n}" is not an environment variable name (A-Z, 0-9, _)`);
    if (isOwnVariable(n)) throw new Error(`AGENT_SECRETS: ${n} is one of Timekeeper's own variables and can never be given to an agent`);
  }
  return names;
}

/** The runtime URL defaults to the owner URL with the user swapped for the SELECT/INSERT-only role. */
export function deriveAppUrl(ownerUrl: string, password?: string): string {
  const u = new URL(ownerUrl);
  u.username = APP_ROLE;
  u.password = password ?? '';
  return u.toString();
}

/** Reads and validates the environment; a bad value throws an Error naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const r = EnvSchema.safeParse(env);
  if (!r.success) throw new Error(r.error.issues.map((i) => (i.code === 'custom' ? i.message : `${i.path.join('.')}: ${i.message}`)).join('; '));
  const e = r.data;
  const databaseUrl = e.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  const workspacePath = path.resolve(e.WORKSPACE_PATH ?? defaultWorkspace());
  return {
    port: e.PORT,
    host: e.HOST ?? '127.0.0.1',
    databaseUrl,
    databaseUrlIsDefault: e.DATABASE_URL === undefined,
    appDatabaseUrl: e.APP_DATABASE_URL ?? deriveAppUrl(databaseUrl, e.APP_DB_PASSWORD),
    appDbPassword: e.APP_DB_PASSWORD,
    temporalAddress: e.TEMPORAL_ADDRESS,
    temporalNamespace: e.TEMPORAL_NAMESPACE ?? 'default',
    taskQueue: e.TEMPORAL_TASK_QUEUE ?? 'timekeeper',
    temporalUiUrl: (e.TEMPORAL_UI_URL ?? 'http://127.0.0.1:8233').replace(/\/+$/, ''),
    temporalLogLevel: e.TEMPORAL_LOG_LEVEL ?? 'WARN',
    logLevel: e.LOG_LEVEL ?? 'info',
    logFormat: e.LOG_FORMAT,
    dataDir: path.resolve(e.TIMEKEEPER_DATA_DIR ?? 'data'),
    workflowBundlePath: e.TIMEKEEPER_WORKFLOW_BUNDLE,
    maxContentBytes: e[TUNABLE.maxContentBytes.env],
    updatesPerRun: e[TUNABLE.updatesPerRun.env],
    writeTimeoutMs: e[TUNABLE.writeTimeoutMs.env],
    occurredAtMaxPastS: e[TUNABLE.occurredAtMaxPastS.env],
    occurredAtMaxFutureS: e[TUNABLE.occurredAtMaxFutureS.env],
    writesInFlightMax: e[TUNABLE.writesInFlightMax.env],
    createsInFlightMax: e[TUNABLE.createsInFlightMax.env],
    sessionWritesInFlightMax: e[TUNABLE.sessionWritesInFlightMax.env],
    connectionsPerClientMax: e[TUNABLE.connectionsPerClientMax.env],
    intentDefaultTtlS: e[TUNABLE.intentDefaultTtlS.env],
    intentDomainTtls: e.INTENT_DOMAIN_TTLS,
    intentRetentionS: e[TUNABLE.intentRetentionS.env],
    intentStatusSearchAttribute: e.INTENT_STATUS_SEARCH_ATTRIBUTE === 'true' || e.INTENT_STATUS_SEARCH_ATTRIBUTE === '1',
    intentWakeUrl: e.INTENT_WAKE_URL,
    intentWakeToken: e.INTENT_WAKE_TOKEN,
    readOnly: e.DB_READ_ONLY === 'true' || e.DB_READ_ONLY === '1',
    workspacePath,
    stateMdPath: path.resolve(e.STATE_MD_PATH ?? path.join(workspacePath, 'STATE.md')),
    artifactsDir: path.resolve(e.ARTIFACTS_DIR ?? path.join(workspacePath, 'ARTIFACTS')),
    omlPort: e.OML_PORT,
    workerMetricsPort: e.WORKER_METRICS_PORT,
    apiKeys: e.TIMEKEEPER_API_KEYS,
    apiKeysFile: e.TIMEKEEPER_API_KEYS_FILE,
    outboundAllowHosts: hostsOf(e.OUTBOUND_ALLOW_HOSTS),
    outboundEchoBodies: e.OUTBOUND_ECHO_BODIES === 'true' || e.OUTBOUND_ECHO_BODIES === '1',
    workflowStackTraces: workflowStackTracesOf(env),
    agentSecrets: agentSecretsOf(e.AGENT_SECRETS),
    secretsKey: e.SECRETS_KEY,
    logOrigin: e.LOG_ORIGIN,
    logSigningKeyFile: e.LOG_SIGNING_KEY_FILE,
    logBatchIntervalMs: e.LOG_BATCH_INTERVAL_MS,
    logTileCacheBytes: e.LOG_TILE_CACHE_BYTES,
    logWitnessing: witnessingSettings(e.LOG_WITNESSES, e.LOG_WITNESS_QUORUM),
    publicUrl: (e.PUBLIC_URL ?? `http://${listenHostForUrl(e.HOST ?? '127.0.0.1')}:${e.PORT}`).replace(/\/+$/, ''),
    tasksTaskQueue: e.TASKS_TASK_QUEUE,
    tasksCoreTaskQueue: e.TASKS_CORE_TASK_QUEUE,
    taskSlotsDefault: e[TUNABLE.taskSlotsDefault.env],
    taskSlotsCore: e[TUNABLE.taskSlotsCore.env],
    otelEndpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT,
    otelServiceName: e.OTEL_SERVICE_NAME ?? 'timekeeper',
    otelPollMs: e[TUNABLE.otelPollMs.env],
    otelSettleMs: e[TUNABLE.otelSettleMs.env],
    taskDefaultAgent: e.TASK_DEFAULT_AGENT,
    taskStaggerTopOfHourS: e.TASK_STAGGER_TOP_OF_HOUR_S,
    agentTaskBounds: {
      minIntervalS: e.AGENT_TASK_MIN_INTERVAL_S,
      maxTasksPerAgent: e.AGENT_TASKS_MAX,
      agentTypes: e.AGENT_TASK_AGENT_TYPES,
      deliveryTypes: e.AGENT_TASK_DELIVERY_TYPES,
      hosts: e.AGENT_TASK_HOSTS,
    },
  };
}

/** The host part of a URL to the listen address: a wildcard bind is reached on loopback; IPv6 in brackets. */
function listenHostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

/** As OML: the OpenClaw workspace when there is one, else a local folder. */
function defaultWorkspace(): string {
  const openclaw = path.join(os.homedir(), '.openclaw', 'workspace');
  return fs.existsSync(openclaw) ? openclaw : path.join('data', 'workspace');
}

/** Where the tools are: an explicit Temporal CLI binary, and the cache folder a build goes into. */
export interface ToolSettings {
  /** TEMPORAL_CLI: a `temporal` binary to use instead of searching PATH and the cache. */
  temporalCli: string | undefined;
  /** $XDG_CACHE_HOME/timekeeper/bin (default ~/.cache/timekeeper/bin). */
  cliCacheDir: string;
}

/**
 * WORKFLOW_STACK_TRACES alone, as loadConfig reads it: the benches' floor workers follow it
 * without loading the whole configuration (bench/floor/threads.ts).
 */
export function workflowStackTracesOf(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.WORKFLOW_STACK_TRACES === 'true' || env.WORKFLOW_STACK_TRACES === '1';
}

export function toolSettings(env: NodeJS.ProcessEnv = process.env): ToolSettings {
  const base = env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return { temporalCli: env.TEMPORAL_CLI || undefined, cliCacheDir: path.join(base, 'timekeeper', 'bin') };
}

/** `npm run cluster`'s own setting: the Temporal frontend's port, every other Temporal port derived from it (lib/cluster/temporal-server.ts). */
export function clusterSettings(env: NodeJS.ProcessEnv = process.env): { temporalPort: number } {
  const raw = env.TEMPORAL_PORT || '7233';
  const port = /^\d+$/.test(raw) ? Number(raw) : NaN;
  // The bounds are lib/cluster/temporal-server.ts's (membership ports 300 below, in a smallint column).
  if (!(port >= 1324 && port <= 33000)) throw new Error(`TEMPORAL_PORT must be an integer from 1324 to 33000, got "${raw}"`);
  return { temporalPort: port };
}

/** What the API's own clients (the `timekeeper` CLI, the MCP server) connect to: a running Timekeeper, through its HTTP API. */
export interface ClientSettings {
  /** TIMEKEEPER_URL, default http://127.0.0.1:8000 (where `npm start` and `timekeeper dev` listen), no trailing slash. */
  url: string;
  /** TIMEKEEPER_API_KEY: sent as `Authorization: Bearer <key>`; unset for an open (loopback) API. */
  apiKey: string | undefined;
  /** TIMEKEEPER_AGENT_ID (the MCP server): the agent the tools act for; tasks it schedules carry it as `created_by`. */
  agentId: string | undefined;
}

export function clientSettings(env: NodeJS.ProcessEnv = process.env): ClientSettings {
  const raw = env.TIMEKEEPER_URL || 'http://127.0.0.1:8000';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`TIMEKEEPER_URL must be an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`TIMEKEEPER_URL must be an http(s) URL, got "${raw}"`);
  return { url: raw.replace(/\/+$/, ''), apiKey: env.TIMEKEEPER_API_KEY || undefined, agentId: env.TIMEKEEPER_AGENT_ID || undefined };
}

/** Where `npm run install-skill` links the OpenClaw skill: OPENCLAW_SKILLS_DIR, default ~/.openclaw/skills. */
export function openclawSkillsDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.OPENCLAW_SKILLS_DIR || path.join(os.homedir(), '.openclaw', 'skills'));
}
