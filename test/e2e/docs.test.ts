/**
 * GET /docs: the interactive API docs are served by the API itself. The page references only
 * local assets, each of which loads with the right content type, and it reads /openapi.json,
 * whose operations carry examples for the docs' "try it out".
 */
import { routes } from '../../api/routes';
import { startTestSystem, TestSystem } from '../support';

let sys: TestSystem;
beforeAll(async () => {
  sys = await startTestSystem({ worker: false, apiKeys: 'docs-admin-key:admin' });
});
afterAll(async () => {
  await sys?.stop();
});

const refs = (html: string) => [...html.matchAll(/\b(?:src|href)\s*=\s*"([^"]+)"/g)].map((m) => m[1]);

describe('GET /docs', () => {
  test('is an HTML page that names /openapi.json and references only local assets (no key needed)', async () => {
    const r = await sys.tk.raw('GET', '/docs');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    expect(r.text).toContain('/openapi.json');
    const assets = refs(r.text);
    expect(assets.length).toBeGreaterThanOrEqual(4);
    for (const a of assets) {
      // No scheme, no protocol-relative URL: nothing is fetched from another host.
      expect(a).toMatch(/^\/(?!\/)/);
    }
    expect(r.text).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/);
  });

  test('every asset the page references loads with its content type', async () => {
    const page = await sys.tk.raw('GET', '/docs');
    const expected: Record<string, RegExp> = { '.css': /^text\/css/, '.js': /^text\/javascript/, '.png': /^image\/png/, '.json': /^application\/json/ };
    for (const a of refs(page.text)) {
      const r = await sys.tk.raw('GET', a);
      expect({ a, status: r.status }).toEqual({ a, status: 200 });
      const ext = a.slice(a.lastIndexOf('.'));
      expect(r.headers.get('content-type')).toMatch(expected[ext]);
      expect(r.text.length).toBeGreaterThan(0);
    }
    // The initializer points Swagger UI at the generated document and turns the outside validator off.
    const init = await sys.tk.raw('GET', '/docs/assets/init.js');
    expect(init.text).toContain("url: '/openapi.json'");
    expect(init.text).toContain('validatorUrl: null');
    // The bundle itself is the package's, not a stub.
    const bundle = await sys.tk.raw('GET', '/docs/assets/swagger-ui-bundle.js');
    expect(bundle.text).toContain('SwaggerUIBundle');
    expect(bundle.text.length).toBeGreaterThan(500_000);
  });

  test('only the listed package files are served (no path traversal into node_modules)', async () => {
    for (const p of ['/docs/assets/package.json', '/docs/assets/..%2Fpackage.json', '/docs/assets/index.html', '/docs/assets/swagger-ui-bundle.js.map']) {
      const r = await sys.tk.raw('GET', p);
      expect({ p, status: r.status }).toEqual({ p, status: 404 });
    }
  });

  test('the document covers the seed, /v1, OML and task routes, with examples', async () => {
    const doc = (await sys.tk.call('openapi')).body as any;
    const paths = Object.keys(doc.paths);
    for (const prefix of ['/timeline/', '/v1/sessions', '/api/events', '/v1/tasks', '/v1/schedules/preview']) {
      expect(paths.some((p) => p.startsWith(prefix))).toBe(true);
    }
    expect(doc.tags.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(['seed', 'sessions', 'intents', 'tasks', 'system']));
    for (const [name, c] of Object.entries(routes)) {
      const op = doc.paths[c.path.replace(/:([A-Za-z_]+)/g, '{$1}')][c.method];
      if ('body' in c && c.body) expect({ name, example: op.requestBody.content['application/json'].example !== undefined }).toEqual({ name, example: true });
      for (const p of op.parameters as { name: string; in: string; example?: unknown }[]) {
        if (p.in === 'path') expect({ name, param: p.name, example: p.example !== undefined }).toEqual({ name, param: p.name, example: true });
      }
    }
    const preview = doc.paths['/v1/schedules/preview'].get.parameters.find((p: { name: string }) => p.name === 'cron');
    expect(preview.example).toBe('0 0 8 * * 1-5');
    const seedAppend = doc.paths['/timeline/append'].post.parameters.find((p: { name: string }) => p.name === 'content');
    expect(JSON.parse(seedAppend.example)).toEqual({ input: 'What is the weather in Beijing?' });
  });
});
