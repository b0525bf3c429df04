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

const HTML = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Timekeeper API</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png" sizes="32x32">
  <link rel="icon" type="image/png" href="/docs/assets/favicon-16x16.png" sizes="16x16">
  <style>body { margin: 0; } .swagger-ui .topbar .download-url-wrapper { display: none; }</style>
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
    res.type('html').set('cache-control', 'no-cache').send(HTML);
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
