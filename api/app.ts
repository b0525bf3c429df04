/** The Express application: seed-compatible routes, /v1, health, the OpenAPI document, one error shape. */
import express, { Express, RequestHandler } from 'express';
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { IntentClient } from '../clients/intents';
import { SessionClient } from '../clients/sessions';
import { SignalClient } from '../clients/signals';
import { TaskClient } from '../clients/tasks';
import { taskRunQueues, type Config } from '../lib/config';
import { DomainError, ErrorCode } from '../lib/domain/errors';
import { bodyLimitBytes } from '../lib/domain/limits';
import { IntentStore } from '../lib/store/intents';
import { SessionStore } from '../lib/store/sessions';
import { Admission } from './admission';
import { omlRouter } from './intents/routes';
import { SignalStore } from '../lib/store/signals';
import { TaskStore } from '../lib/store/tasks';
import { TaskResultStore } from '../lib/store/tasks/results';
import type { KeyStore } from './auth';
import type { RouteContract } from './contract';
import { dashboardRouter } from './dashboard/router';
import { verifyFormBody } from './http';
import { jsonBodyGate } from './input-gate';
import { openApiDocument } from './openapi';
import { errorHandler, surface, type Surface } from './problem';
import { authenticateFirst, route } from './router';
import { routes } from './routes';
import { createSession, seedInit } from './sessions/contract';
import { seedRouter } from './sessions/seed-routes';
import { v1Router } from './sessions/routes';
import { signalRouter } from './signals/routes';
import { tlogRouter } from './tlog/routes';
import { TlogStore } from '../lib/store/tlog';
import { witnessTrustOf } from '../lib/tlog/chain-check';
import { taskRouter } from './tasks/routes';
import { health, openapi, readiness as readinessRoute } from './system/contract';
import { docsRouter } from './system/docs';
import { httpMetrics, metricsRouter } from './system/metrics';
import { requestContext, requestId } from './request-log';
import { taskSecretsOf } from '../lib/secrets-key';
import { securityHeaders } from './security-headers';
import { readiness } from './system/readiness';

export interface AppDeps {
  client: Client;
  pool: Pool;
  config: Config;
  keys: KeyStore;
  /** npm start: where the supervised worker child serves its metrics, merged into GET /metrics. */
  workerMetricsUrl?: string;
}

export function createApp({ client, pool, config, keys, workerMetricsUrl }: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use(securityHeaders());
  app.use(requestId());
  app.use(httpMetrics());
  app.use('/api', surface('oml'));
  // The key before the body: a request without a valid key for its route is refused unread.
  app.use(authenticateFirst(keys, Object.values(routes)));
  // One bound for every write route of this process (sessions and intents alike).
  const admission = new Admission(config);
  app.use(refuseCreatesEarly(admission, keys));
  const limit = bodyLimitBytes(config.maxContentBytes);
  // The input gate: UTF-8, unique member names, no NUL or lone surrogate (api/input-gate.ts).
  app.use(jsonBodyGate(limit));
  app.use(express.urlencoded({ limit, extended: false, verify: verifyFormBody }));
  app.use(requestContext());

  // DB_READ_ONLY: every write is refused before it reaches a router; reads work.
  if (config.readOnly) {
    app.use((req, _res, next) => {
      if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return next();
      next(DomainError.field(ErrorCode.ReadOnly, 'method', 'writes are disabled').withMessage(`this Timekeeper is read-only (DB_READ_ONLY=true): ${req.method} ${req.path} is refused`));
    });
  }

  // The web dashboard (api/dashboard/): public pages and assets; every API call they make needs a key.
  app.use(dashboardRouter());

  route(app, keys, health, (_req, res) => {
    res.json({ status: 'ok' });
  });
  route(app, keys, readinessRoute, async (_req, res) => {
    const r = await readiness({ client, pool, taskQueue: config.taskQueue, namespace: config.temporalNamespace });
    res.status(r.ready ? 200 : 503).json({ status: r.ready ? 'ready' : 'not ready', checks: r.checks, timed_out: r.timedOut });
  });
  route(app, keys, openapi, (_req, res) => {
    res.json(openApiDocument());
  });
  app.use(docsRouter());
  app.use(metricsRouter({ client, pool, keys, namespace: config.temporalNamespace, taskQueue: config.taskQueue, workerMetricsUrl }));

  // One log store for the process: its tile cache serves every route that proves against the log.
  const tlog = new TlogStore(pool, { tileCacheBytes: config.logTileCacheBytes });
  const deps = {
    admission,
    sessions: new SessionClient({
      client,
      pool,
      taskQueue: config.taskQueue,
      maxContentBytes: config.maxContentBytes,
      updatesPerRun: config.updatesPerRun,
      writeTimeoutMs: config.writeTimeoutMs,
      occurredAt: { maxPastS: config.occurredAtMaxPastS, maxFutureS: config.occurredAtMaxFutureS },
    }),
    store: new SessionStore(pool),
    tlog,
    witnessTrust: witnessTrustOf(config.logWitnessing),
    keys,
    temporalUiUrl: config.temporalUiUrl,
    temporalNamespace: config.temporalNamespace,
  };
  app.use(seedRouter(deps));
  app.use(v1Router(deps));
  app.use(omlRouter(intentDeps({ client, pool, config, keys }, admission, tlog)));
  app.use(
    taskRouter({
      tasks: new TaskClient({ client, pool, taskQueue: config.taskQueue, runQueues: taskRunQueues(config) }),
      store: new TaskStore(pool),
      results: new TaskResultStore(pool),
      sessions: new SessionStore(pool),
      keys,
      policy: { outboundAllowHosts: config.outboundAllowHosts, agentSecrets: config.agentSecrets, agentBounds: config.agentTaskBounds },
      defaults: { agent: config.taskDefaultAgent, staggerTopOfHourS: config.taskStaggerTopOfHourS },
      secrets: taskSecretsOf(config),
      tlog,
      witnessTrust: witnessTrustOf(config.logWitnessing),
    }),
  );
  const signalStore = new SignalStore(pool);
  app.use(
    signalRouter({
      signals: new SignalClient({ client, taskQueue: config.taskQueue, runQueues: taskRunQueues(config), store: signalStore }),
      store: signalStore,
      keys,
    }),
  );
  app.use(tlogRouter({ store: tlog, keys }));
  app.use((req, _res, next) => next(DomainError.field('not_found', 'path', 'unknown route').withMessage(`no route for ${req.method} ${req.path}`)));
  app.use(errorHandler);
  return app;
}

/**
 * A session create that the create bound would refuse is refused here, before the body
 * parsers and the routers: under overload refusals are most of the traffic, and what one
 * costs decides how soon 1,000 clients hear "retry later" (issue 9). The key is checked first,
 * as on the route itself. An admitted create goes on to its route, which admits it for real.
 */
function refuseCreatesEarly(admission: Admission, keys: KeyStore): RequestHandler {
  const creates = new Map<string, { contract: RouteContract; surface: Surface }>([
    [createSession.path, { contract: createSession, surface: 'v1' }],
    [seedInit.path, { contract: seedInit, surface: 'seed' }],
  ]);
  return (req, res, next) => {
    if (req.method !== 'POST') return next();
    // Express routes match case-insensitively and with a trailing slash: so does this.
    const r = creates.get(req.path.replace(/\/+$/, '').toLowerCase());
    if (!r) return next();
    const refusal = admission.refusal('create', '');
    if (!refusal) return next();
    res.locals.route = r.contract.path;
    res.locals.surface = r.surface;
    keys.authorise(req.headers.authorization, r.contract.scopes);
    next(refusal);
  };
}

function intentDeps({ client, pool, config, keys }: AppDeps, admission: Admission, tlog: TlogStore) {
  return {
    admission,
    intents: IntentClient.fromConfig(client, pool, config),
    store: new IntentStore(pool),
    sessions: new SessionStore(pool),
    tlog,
    keys,
    pool,
    client,
    databaseUrl: config.appDatabaseUrl,
    readOnly: config.readOnly,
    stateMdPath: config.stateMdPath,
    artifactsDir: config.artifactsDir,
  };
}
