/**
 * The web dashboard, served by the API itself at `/` (index.html) and `/assets/*` (the
 * script and the style sheet): no CDN, no outside fonts. The browser code in
 * api/dashboard/src/ is bundled with esbuild in memory on the first request for an asset
 * (about half a second) and cached for the life of the process, shared by every app it
 * creates; nothing is written to disk, so a read-only image works, and a failed build is
 * reported on that request and tried again on the next.
 * The pages need no key; every API call they make does (the dashboard asks for one on 401).
 */
import fs from 'node:fs';
import path from 'node:path';
import { builtinModules } from 'node:module';
import { Router, type Request, type Response } from 'express';

const SRC = path.join(__dirname, 'src');

export interface DashboardBundle {
  js: string;
  css: string;
}

/**
 * Bundles src/main.ts for the browser. The contracts the typed client reads import a few
 * server modules for constants (lib/config for a regular expression); their Node built-ins
 * are replaced by a stub that throws if the browser ever calls into one.
 */
export async function buildDashboard(): Promise<DashboardBundle> {
  const esbuild = await import('esbuild');
  const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
  const result = await esbuild.build({
    entryPoints: [path.join(SRC, 'main.ts')],
    bundle: true,
    write: false,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
    plugins: [
      {
        name: 'node-builtins-stub',
        setup(b) {
          b.onResolve({ filter: /.*/ }, (args) => (builtins.has(args.path) ? { path: args.path, namespace: 'node-stub' } : undefined));
          b.onLoad({ filter: /.*/, namespace: 'node-stub' }, (args) => ({
            contents: `const fail = () => { throw new Error(${JSON.stringify(`${args.path} is not available in the browser`)}); };
export default new Proxy({}, { get: () => fail });`,
            loader: 'js',
          }));
        },
      },
    ],
  });
  const js = result.outputFiles[0].text;
  const css = await fs.promises.readFile(path.join(SRC, 'style.css'), 'utf8');
  return { js, css };
}

const INDEX = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Timekeeper</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/app.css">
<script src="/assets/app.js" defer></script>
</head>
<body>
<noscript>The Timekeeper dashboard needs JavaScript.</noscript>
<div id="app"></div>
</body>
</html>
`;

/** Same origin only; the Markdown the API renders is sanitised, and no inline script could run anyway. */
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** One build per process, shared by every app (tests create many). */
let bundle: Promise<DashboardBundle> | undefined;
function load(): Promise<DashboardBundle> {
  bundle ??= buildDashboard().catch((e: unknown) => {
    bundle = undefined; // try again on the next request
    throw e;
  });
  return bundle;
}

export function dashboardRouter(): Router {

  const r = Router();
  const page = (_req: Request, res: Response) => {
    res.setHeader('Content-Security-Policy', CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('Cache-Control', 'no-cache');
    res.type('html').send(INDEX);
  };
  r.get('/', page);
  r.get('/index.html', page);
  const asset = (kind: keyof DashboardBundle, type: string) => async (_req: Request, res: Response) => {
    let b: DashboardBundle;
    try {
      b = await load();
    } catch (e) {
      res.status(500).type('text/plain').send(`the dashboard could not be built: ${e instanceof Error ? e.message : String(e)}`);
      return;
    }
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'no-cache');
    res.type(type).send(b[kind]);
  };
  r.get('/assets/app.js', asset('js', 'text/javascript'));
  r.get('/assets/app.css', asset('css', 'text/css'));
  return r;
}
