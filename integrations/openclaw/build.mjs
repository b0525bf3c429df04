// Bundles the plugin and the repository's typed Timekeeper client (../../sdk/client.ts and the
// route contracts it reads, with zod) into dist/index.js, so the installed plugin needs no
// dependency of its own. `openclaw/*` stays external: OpenClaw provides its plugin SDK at load.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
await build({
  entryPoints: [path.join(here, 'src/index.ts')],
  outfile: path.join(here, 'dist/index.js'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node22',
  external: ['openclaw', 'openclaw/*'],
  sourcemap: false,
  logLevel: 'warning',
  legalComments: 'none',
});
console.log('built', path.join(here, 'dist/index.js'));
