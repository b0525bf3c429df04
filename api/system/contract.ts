/** Health, readiness and the API description itself. */
import { z } from 'zod';
import { Operation } from '../../lib/platform/scopes';
import { defineRoute } from '../contract';

export const health = defineRoute({
  method: 'get',
  path: '/healthz',
  tag: 'system',
  summary: 'Liveness: the process answers',
  scopes: Operation.Public,
  responses: { 200: z.object({ status: z.literal('ok') }) },
  errors: [],
});

const Readiness = z.object({
  status: z.enum(['ready', 'not ready']),
  checks: z.record(z.string(), z.string()).describe('postgres, temporal, worker: "ok" or the reason (a check has 800 ms)'),
  timed_out: z.array(z.string()).describe('the checks whose deadline passed'),
});

export const readiness = defineRoute({
  method: 'get',
  path: '/readyz',
  tag: 'system',
  summary: 'Readiness: PostgreSQL and Temporal answer and a worker is alive (503 when any is not); answers within about a second',
  scopes: Operation.Public,
  responses: { 200: Readiness, 503: Readiness },
  errors: [],
});

export const openapi = defineRoute({
  method: 'get',
  path: '/openapi.json',
  tag: 'system',
  summary: 'This API as an OpenAPI 3.1 document, generated from the route contracts',
  scopes: Operation.Public,
  responses: { 200: z.object({ openapi: z.string() }).loose() },
  errors: [],
});

export const systemRoutes = { health, readiness, openapi } as const;
