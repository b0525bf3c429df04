/**
 * GET /openapi.json, as served: a valid OpenAPI 3.1 document (checked with the OpenAPI
 * Initiative's schemas through @seriousme/openapi-schema-validator) that describes every
 * route of api/routes.ts, and nothing else, with its request and response schemas.
 */
import { z } from 'zod';
import type { RouteContract } from '../../api/contract';
import { routes } from '../../api/routes';
import { validateOpenApi } from '../support/openapi';
import { startTestSystem, TestSystem } from '../support';

type Json = any;

let sys: TestSystem;
let doc: Json;
beforeAll(async () => {
  sys = await startTestSystem({ worker: false });
  const r = await sys.tk.call('openapi');
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  doc = r.body;
});
afterAll(async () => {
  await sys?.stop();
});

const ROUTES = Object.entries(routes) as [string, RouteContract][];
const openApiPath = (p: string) => p.replace(/:([A-Za-z_]+)/g, '{$1}');
const operation = (c: RouteContract): Json => doc.paths?.[openApiPath(c.path)]?.[c.method];

/** Follows a local `$ref` (JSON pointer into the document). */
function resolve(schema: Json): Json {
  if (typeof schema?.$ref !== 'string') return schema;
  const ref: string = schema.$ref;
  if (!ref.startsWith('#/')) throw new Error(`non-local $ref ${ref}`);
  let at: Json = doc;
  for (const part of ref.slice(2).split('/')) at = at?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  if (at === undefined) throw new Error(`$ref ${ref} does not resolve`);
  return at;
}

/** The property names a zod object schema declares (its shape). */
const keysOf = (t: z.ZodType): string[] => (t instanceof z.ZodObject ? Object.keys(t.shape).sort() : []);

describe('GET /openapi.json', () => {
  test('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    const v = await validateOpenApi(doc);
    expect(v.supported).toContain('3.1');
    expect(v.errors).toBeNull();
    expect(v.valid).toBe(true);
    expect(v.version).toBe('3.1');
  });

  test('the validator does refuse a broken document (so the check above means something)', async () => {
    const broken = JSON.parse(JSON.stringify(doc));
    delete broken.info;
    broken.paths['/healthz'].get.responses = 'none';
    const v = await validateOpenApi(broken);
    expect(v.valid).toBe(false);
    expect(v.errors).not.toBeNull();
  });

  test('lists exactly the routes of api/routes.ts, by method and path, each with its name as operationId', () => {
    const listed: string[] = [];
    for (const [p, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
      for (const [method, op] of Object.entries(item)) listed.push(`${method.toUpperCase()} ${p} ${op.operationId}`);
    }
    const expected = ROUTES.map(([name, c]) => `${c.method.toUpperCase()} ${openApiPath(c.path)} ${name}`);
    expect(listed.sort()).toEqual(expected.sort());
    expect(expected.some((e) => e.includes('/v1/sessions/{id}/events'))).toBe(true);
  });

  test.each(ROUTES)('%s: parameters and request body as in its contract', (_name, c) => {
    const op = operation(c);
    const params: Json[] = op.parameters ?? [];
    // Every path template variable is a required path parameter, and nothing else is.
    const templated = [...openApiPath(c.path).matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    expect(templated.sort()).toEqual(keysOf(c.params ?? z.object({})));
    const queryRequired = new Set<string>(c.query ? ((z.toJSONSchema(c.query, { io: 'input' }) as { required?: string[] }).required ?? []) : []);
    const expected = [
      ...keysOf(c.params ?? z.object({})).map((name) => ({ name, in: 'path', required: true })),
      ...keysOf(c.query ?? z.object({})).map((name) => ({ name, in: 'query', required: queryRequired.has(name) })),
    ];
    expect(params.map((p) => ({ name: p.name, in: p.in, required: p.required })).sort((a, b) => `${a.in}${a.name}`.localeCompare(`${b.in}${b.name}`))).toEqual(
      expected.sort((a, b) => `${a.in}${a.name}`.localeCompare(`${b.in}${b.name}`)),
    );
    for (const p of params) {
      const schema = resolve(p.schema);
      expect(typeof schema).toBe('object');
      expect(Object.keys(schema).length).toBeGreaterThan(0);
    }

    if (c.body) {
      expect(op.requestBody?.required).toBe(true);
      const schema = resolve(op.requestBody.content?.['application/json']?.schema);
      expect(schema).toMatchObject({ type: 'object' });
      expect(Object.keys(schema.properties ?? {}).sort()).toEqual(keysOf(c.body));
      // Strict bodies refuse unknown fields, and the document says so; the OML-compatible ones ignore them, and it says that too.
      const generated = z.toJSONSchema(c.body, { io: 'input' }) as { $ref?: string; $defs?: Record<string, { additionalProperties?: unknown }>; additionalProperties?: unknown };
      // A named body comes back as a $ref into $defs.
      const top = generated.$ref ? generated.$defs?.[generated.$ref.replace('#/$defs/', '')] : generated;
      const strict = top?.additionalProperties === false;
      expect(schema.additionalProperties === false).toBe(strict);
    } else {
      expect(op.requestBody).toBeUndefined();
    }
  });

  test.each(ROUTES)('%s: a JSON schema (or text/plain string) for every success status, the Problem schema for every error status', (_name, c) => {
    const op = operation(c);
    const success = Object.keys(c.responses);
    expect(Object.keys(op.responses).sort()).toEqual([...success, ...c.errors.map(String)].sort());
    for (const status of success) {
      const content = op.responses[status].content;
      // A text answer (the log's key and checkpoint) is a string under its own media type.
      if (c.contentType === 'text/plain') {
        expect(content).toEqual({ 'text/plain': { schema: { type: 'string' } } });
        continue;
      }
      expect(Object.keys(content)).toEqual(['application/json']);
      let schema = resolve(content['application/json'].schema);
      let contract = c.responses[Number(status)];
      // A list answer (OML's pending intents) is an array of objects: check its element.
      if (contract instanceof z.ZodArray) {
        expect(schema).toMatchObject({ type: 'array' });
        schema = resolve(schema.items);
        contract = contract.element as z.ZodType;
      }
      expect(schema).toMatchObject({ type: 'object' });
      const declared = keysOf(contract);
      expect(declared.length).toBeGreaterThan(0);
      expect(Object.keys(schema.properties ?? {}).sort()).toEqual(declared);
    }
    for (const status of c.errors) {
      const content = op.responses[String(status)].content;
      expect(content).toEqual({ 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } });
      expect(typeof op.responses[String(status)].description).toBe('string');
    }
  });

  test('the Problem component describes RFC 9457 problem details plus the seed envelope fields', () => {
    const problem = doc.components.schemas.Problem;
    expect(problem).toMatchObject({ type: 'object' });
    expect([...problem.required].sort()).toEqual(['code', 'detail', 'msg', 'status', 'title', 'type']);
    expect(Object.keys(problem.properties)).toEqual(expect.arrayContaining(['type', 'title', 'status', 'detail', 'instance', 'errors', 'code', 'msg']));
  });

  test('every $ref in the document resolves', () => {
    const refs: string[] = [];
    const walk = (v: Json) => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) k === '$ref' && typeof x === 'string' ? refs.push(x) : walk(x);
    };
    walk(doc);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) expect(() => resolve({ $ref: ref })).not.toThrow();
  });

  test('security: scoped routes take the bearer scheme with their scopes, public ones none', () => {
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const [, c] of ROUTES) {
      expect(operation(c).security).toEqual(c.scopes.length ? [{ bearer: [...c.scopes] }] : []);
    }
  });
});
