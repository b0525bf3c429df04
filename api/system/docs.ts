/**
 * GET /docs: interactive API docs (Swagger UI) over the generated /openapi.json. Every asset
 * comes from the `swagger-ui-dist` package through this router: no CDN, no outside fonts,
 * no validator badge (the machine may have no internet).
 */
import path from 'node:path';
import { Router } from 'express';
import { getAbsoluteFSPath } from 'swagger-ui-dist';

/** The files of swagger-ui-dist the page uses, by the name it asks for them, with their content type. */
export const DOCS_ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

const INIT_JS = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    persistAuthorization: true,
    tryItOutEnabled: false,
    displayRequestDuration: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout',
  });
});
`;

/** This page's own rules (a file, so that the CSP needs no inline style). */
const DOCS_CSS = 'body { margin: 0; } .swagger-ui .topbar .download-url-wrapper { display: none; }\n';

/**
 * The one inline <style> Swagger UI's bundle inserts, allowed by its hash rather than by
 * 'unsafe-inline' (a new swagger-ui-dist version may change it: test/e2e/security-headers.test.ts
 * renders the page in Chromium and names the hash a violation asks for).
 */
const SWAGGER_INLINE_STYLE = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='";

/**
 * The page's CSP: only its own origin's scripts, styles (and that one inline style), images
 * (and data: images, which Swagger UI's icons use), fetches of /openapi.json; no framing
 * (frame-ancestors 'none'), no forms posted elsewhere. The smallest policy that keeps the page
 * working, checked in a real browser (no violation reported, every operation rendered).
 */
export const DOCS_CSP = `default-src 'none'; script-src 'self'; style-src 'self' ${SWAGGER_INLINE_STYLE}; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

const HTML = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Timekeeper API</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png" sizes="32x32">
  <link rel="icon" type="image/png" href="/docs/assets/favicon-16x16.png" sizes="16x16">
  <link rel="stylesheet" href="/docs/assets/docs.css">
</head>
<body>
  <noscript>The interactive docs need JavaScript; the API description itself is at <a href="/openapi.json">/openapi.json</a>.</noscript>
  <div id="swagger-ui" data-spec="/openapi.json"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
  <script src="/docs/assets/init.js"></script>
</body>
</html>
`;

export function docsRouter(): Router {
  const r = Router();
  const dir = getAbsoluteFSPath();
  r.get('/docs', (_req, res) => {
    res.type('html').set('cache-control', 'no-cache').set('content-security-policy', DOCS_CSP).send(HTML);
  });
  r.get('/docs/assets/docs.css', (_req, res) => {
    res.type('text/css; charset=utf-8').set('cache-control', 'no-cache').send(DOCS_CSS);
  });
  r.get('/docs/assets/init.js', (_req, res) => {
    res.type('text/javascript; charset=utf-8').set('cache-control', 'no-cache').send(INIT_JS);
  });
  r.get('/docs/assets/:file', (req, res, next) => {
    const file = req.params.file;
    const type = Object.prototype.hasOwnProperty.call(DOCS_ASSETS, file) ? DOCS_ASSETS[file] : undefined;
    if (!type) return next();
    res.set('content-type', type).set('cache-control', 'public, max-age=3600');
    res.sendFile(path.join(dir, file), (err) => err && next(err));
  });
  return r;
}
