/** The Express application: seed-compatible routes, /v1, health, the OpenAPI document, one error shape. */
import express, { Express } from 'express';
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { SessionClient } from '../clients/sessions';
import { TaskClient } from '../clients/tasks';
import { taskRunQueues, type Config } from '../lib/config';
import { DomainError } from '../lib/domain/errors';
import { bodyLimitBytes } from '../lib/domain/limits';
import { SessionStore } from '../lib/store/sessions';
import { TaskStore } from '../lib/store/tasks';
import type { KeyStore } from './auth';
import { openApiDocument } from './openapi';
import { errorHandler } from './problem';
import { route } from './router';
import { seedRouter } from './sessions/seed-routes';
import { v1Router } from './sessions/v1-routes';
import { taskRouter } from './tasks/routes';
import { health, openapi, readiness } from './system/contract';

export interface AppDeps {
  client: Client;
  pool: Pool;
  config: Config;
  keys: KeyStore;
}

export function createApp({ client, pool, config, keys }: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  const limit = bodyLimitBytes(config.maxContentBytes);
  app.use(express.json({ limit, type: ['application/json', 'application/*+json'] }));
  app.use(express.urlencoded({ limit, extended: false }));

  route(app, keys, health, (_req, res) => {
    res.json({ status: 'ok' });
  });
  route(app, keys, readiness, async (_req, res) => {
    const checks: Record<string, string> = {};
    await Promise.all([
      pool.query('SELECT 1').then(
        () => (checks.postgres = 'ok'),
        (e: Error) => (checks.postgres = e.message),
      ),
      client.connection.workflowService.getSystemInfo({}).then(
        () => (checks.temporal = 'ok'),
        (e: Error) => (checks.temporal = e.message),
      ),
    ]);
    const ready = Object.values(checks).every((v) => v === 'ok');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready', checks });
  });
  route(app, keys, openapi, (_req, res) => {
    res.json(openApiDocument());
  });

  const deps = {
    sessions: new SessionClient({
      client,
      pool,
      taskQueue: config.taskQueue,
      maxContentBytes: config.maxContentBytes,
      updatesPerRun: config.updatesPerRun,
      writeTimeoutMs: config.writeTimeoutMs,
    }),
    store: new SessionStore(pool),
    keys,
    temporalUiUrl: config.temporalUiUrl,
    temporalNamespace: config.temporalNamespace,
  };
  app.use(seedRouter(deps));
  app.use(v1Router(deps));
  app.use(
    taskRouter({
      tasks: new TaskClient({ client, pool, taskQueue: config.taskQueue, runQueues: taskRunQueues(config) }),
      store: new TaskStore(pool),
      keys,
    }),
  );
  app.use((req, _res, next) => next(DomainError.field('not_found', 'path', 'unknown route').withMessage(`no route for ${req.method} ${req.path}`)));
  app.use(errorHandler);
  return app;
}
