/**
 * The OpenAPI 3.1 document, generated from the route contracts with zod's own JSON Schema
 * output (OpenAPI 3.1 schemas are JSON Schema 2020-12). Nothing here is written by hand
 * but the document's frame; a route appears here because it is in api/routes.ts.
 */
import { z, ZodType } from 'zod';
import type { RouteContract } from './contract';
import { ProblemSchema } from './contract';
import { routes } from './routes';

type JsonSchema = Record<string, unknown>;

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  400: 'Invalid request',
  401: 'No or unknown API key',
  403: 'The key lacks the scope, or the API is read-only',
  404: 'Not found',
  409: 'Conflict',
  412: 'Precondition failed (expected_seq)',
  413: 'Payload too large',
  429: 'Too many requests',
  503: 'A dependency is unavailable; retry',
};

/** Named schemas (`.meta({id})`) become components; everything else is inlined. */
class Components {
  readonly schemas: Record<string, JsonSchema> = {};
  schema(t: ZodType, io: 'input' | 'output'): JsonSchema {
    const generated = z.toJSONSchema(t, { io, target: 'draft-2020-12', unrepresentable: 'any' });
    // Named sub-schemas land in $defs; in the document they are components.
    const out = JSON.parse(JSON.stringify(generated).replaceAll('"#/$defs/', '"#/components/schemas/')) as JsonSchema & { $defs?: Record<string, JsonSchema> };
    const { $defs, $schema: _s, ...rest } = out;
    for (const [id, def] of Object.entries($defs ?? {})) this.schemas[id] ??= def;
    const id = (z.globalRegistry.get(t) as { id?: string } | undefined)?.id;
    if (id) {
      this.schemas[id] ??= rest;
      return { $ref: `#/components/schemas/${id}` };
    }
    return rest;
  }
}

const openApiPath = (p: string) => p.replace(/:([A-Za-z_]+)/g, '{$1}');

function parameters(c: RouteContract, comp: Components) {
  const list: unknown[] = [];
  const add = (where: 'path' | 'query', obj: z.ZodObject | undefined) => {
    if (!obj) return;
    for (const [name, field] of Object.entries(obj.shape)) {
      const schema = comp.schema(field as ZodType, 'input');
      const example = c.parameterExamples?.[name];
      list.push({ name, in: where, required: where === 'path' || !(field as ZodType).safeParse(undefined).success, schema, ...(example !== undefined ? { example } : {}) });
    }
  };
  add('path', c.params);
  add('query', c.query);
  return list;
}

function operation(name: string, c: RouteContract, comp: Components) {
  const responses: Record<string, unknown> = {};
  for (const [status, schema] of Object.entries(c.responses)) {
    responses[status] = { description: STATUS_TEXT[Number(status)] ?? 'Response', content: { [c.contentType ?? 'application/json']: { schema: comp.schema(schema, 'output') } } };
  }
  for (const status of c.errors) {
    responses[String(status)] = { description: STATUS_TEXT[status] ?? 'Error', content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } };
  }
  return {
    operationId: name,
    summary: c.summary,
    ...(c.description ? { description: c.description } : {}),
    tags: [c.tag],
    ...(c.scopes.length ? { security: [{ bearer: [...c.scopes] }] } : { security: [] }),
    parameters: parameters(c, comp),
    ...(c.body
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: comp.schema(c.body, 'input'), ...(c.example !== undefined ? { example: c.example } : {}) } },
          },
        }
      : {}),
    responses,
  };
}

let cached: Record<string, unknown> | undefined;

export function openApiDocument(): Record<string, unknown> {
  if (cached) return cached;
  const comp = new Components();
  comp.schema(ProblemSchema, 'output');
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [name, c] of Object.entries(routes) as [string, RouteContract][]) {
    (paths[openApiPath(c.path)] ??= {})[c.method] = operation(name, c, comp);
  }
  cached = {
    openapi: '3.1.0',
    info: {
      title: 'Timekeeper',
      version: '0.1.0',
      description: 'The time module for LLM agent runtimes: hash-chained session timelines on Temporal and PostgreSQL. Errors are RFC 9457 problem details.',
    },
    servers: [{ url: '/' }],
    tags: [
      { name: 'seed', description: "The seed design's timeline endpoints, unchanged" },
      { name: 'sessions', description: 'Session timelines (/v1)' },
      { name: 'intents', description: 'Durable agent intents, compatible with the OML Event Log API (/api/*)' },
      { name: 'tasks', description: 'Scheduled agent tasks, their runs and the cron preview (/v1)' },
      { name: 'system', description: 'Health and this document (interactive at /docs)' },
    ],
    paths,
    components: {
      schemas: comp.schemas,
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'API key; scopes: gateway, agent, auditor, admin' } },
    },
  };
  return cached;
}
