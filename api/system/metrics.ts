/**
 * GET /metrics (Prometheus text format) and the HTTP series every request feeds. The
 * registry and the series are lib/metrics.ts; here the scrape refreshes the gauges that are
 * read from the dependencies (health, intents by state) before the registry is rendered.
 */
import type { Client } from '@temporalio/client';
import type { RequestHandler } from 'express';
import { Router } from 'express';
import type { Pool } from 'pg';
import { INTENT_STATUSES } from '../../lib/domain/intents';
import { metrics, registry } from '../../lib/metrics';
import { IntentStore } from '../../lib/store/intents';
import { requireScope, type KeyStore } from '../auth';
import { Operation } from '../../lib/platform/scopes';
import { readiness } from './readiness';
import { mergeWorkerMetrics } from './worker-metrics';

/** Counts and times every request by method, contract path (res.locals.route) and status. */
export function httpMetrics(): RequestHandler {
  return (req, res, next) => {
    const start = performance.now();
    res.once('finish', () => {
      const route = (res.locals.route as string | undefined) ?? (req.route as { path?: string } | undefined)?.path ?? 'unmatched';
      const labels = { method: req.method, route, status: String(res.statusCode) };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, (performance.now() - start) / 1000);
    });
    next();
  };
}

export interface MetricsDeps {
  client: Client;
  pool: Pool;
  keys: KeyStore;
  namespace: string;
  taskQueue: string;
  /** npm start: the supervised worker child's own /metrics, merged into this one (api/system/worker-metrics.ts). */
  workerMetricsUrl?: string;
}

export function metricsRouter(d: MetricsDeps): Router {
  const r = Router();
  const intents = new IntentStore(d.pool);
  r.get(
    '/metrics',
    (_req, res, next) => {
      res.locals.route = '/metrics';
      next();
    },
    requireScope(d.keys, Operation.Metrics),
    async (req, res) => {
      const { checks } = await readiness(d);
      for (const [dependency, state] of Object.entries(checks)) metrics.up.set({ dependency }, state === 'ok' ? 1 : 0);
      if (checks.postgres === 'ok') {
        const stats = await intents.stats().catch(() => undefined);
        if (stats) for (const status of INTENT_STATUSES) metrics.intents.set({ status }, stats.by_status[status] ?? 0);
      }
      const own = await registry.metrics();
      res.set('content-type', registry.contentType).send(d.workerMetricsUrl ? await mergeWorkerMetrics(d.workerMetricsUrl, own, req.headers.authorization) : own);
    },
  );
  return r;
}
