/** The Express application: seed-compatible routes, /v1, health, one error shape. */
import express, { Express } from 'express';
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import type { Config } from '../lib/config';
import { KeyStore } from './auth';
import { errorHandler, HttpError, ProblemType } from './errors';
import { seedRouter } from './routes/seed';
import { v1Router } from './routes/v1';
import { TimelineService } from './timeline-service';

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
  // Room for the largest content once JSON-escaped, plus the other fields.
  const limit = config.maxContentBytes * 2 + 64 * 1024;
  app.use(express.json({ limit, type: ['application/json', 'application/*+json'] }));
  app.use(express.urlencoded({ limit, extended: false }));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
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

  const service = new TimelineService({ client, pool, config });
  app.use(seedRouter(service, pool, keys));
  app.use('/v1', v1Router(service, pool, keys, config));
  app.use((req, _res, next) => next(new HttpError(404, ProblemType.NotFound, `no route for ${req.method} ${req.path}`, [{ field: 'path', reason: 'unknown route' }])));
  app.use(errorHandler);
  return app;
}
