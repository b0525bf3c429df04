// `npm run build` (and `npm start`, `npm run worker`, `npm run api` through bin/launch.cjs when
// the build is missing or stale): compiles the production entry points to JavaScript in dist/.
//
//   dist/bin/{start,worker,api}.js (+ .map)  one esbuild bundle per entry point: our code
//                                            bundled, node_modules left to require() at run
//                                            time (the Temporal SDK's native core, pg, ...)
//   dist/workflow-bundle.js                  the workflow code as the worker's sandbox loads
//                                            it (bundleWorkflowCode, once per build instead
//                                            of once per process start)
//   dist/build-stamp.json                    every input file and its hash, written last: a
//                                            missing or different input makes the build stale
//
// Plain JavaScript on purpose: it runs before anything is compiled and without tsx, so the
// compiled start-up pays neither tsx nor the check's cost beyond hashing ~150 small files.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DIST = path.join(ROOT, 'dist');
export const STAMP = path.join(DIST, 'build-stamp.json');
/** The entry points `bin/launch.cjs ROLE` runs, by role. */
export const ENTRIES = ['start', 'worker', 'api'];
const WORKFLOWS = path.join(ROOT, 'workflows', 'index.ts');
/** The workflow interceptor module (Temporal's OpenTelemetry workflow spans), as worker/workflow-bundle.ts names it. */
const WORKFLOW_INTERCEPTORS = path.join(ROOT, 'workflows', 'otel', 'interceptors.ts');
/** Inputs beyond the bundles' own source files: the build itself and the dependency versions. */
const ALWAYS = ['bin/build.mjs', 'package-lock.json', 'tsconfig.json'];

const sha256 = (file) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/**
 * Why the build in dist/ is stale (missing, an input changed or vanished), or undefined when
 * it is current. Reads the stamp and hashes its inputs: no esbuild, no SDK.
 */
export function staleReason() {
  let stamp;
  try {
    stamp = JSON.parse(fs.readFileSync(STAMP, 'utf8'));
  } catch {
    return 'no build yet';
  }
  for (const e of ENTRIES) if (!fs.existsSync(path.join(DIST, 'bin', `${e}.js`))) return `dist/bin/${e}.js is missing`;
  if (!fs.existsSync(path.join(DIST, 'workflow-bundle.js'))) return 'dist/workflow-bundle.js is missing';
  for (const [rel, hash] of Object.entries(stamp.inputs ?? {})) {
    const file = path.join(ROOT, rel);
    if (!fs.existsSync(file)) return `${rel} is gone`;
    if (sha256(file) !== hash) return `${rel} changed`;
  }
  return undefined;
}

/**
 * esbuild gives every bundled module the bundle's `__dirname` (dist/bin). Our modules locate
 * files next to their source (lib/migrate.ts: ../schema, api/dashboard/router.ts: ./src), so
 * each module that names `__dirname` gets its own source folder back, relative to the bundle:
 * the tree keeps working wherever it is copied (/app in the image).
 */
const sourceDirname = {
  name: 'source-dirname',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const source = await fs.promises.readFile(args.path, 'utf8');
      if (!/\b__dirname\b/.test(source)) return undefined;
      const rel = path.relative(path.join(DIST, 'bin'), path.dirname(args.path)).split(path.sep).join('/');
      const prelude = `const __source_dirname = require('node:path').resolve(__dirname, ${JSON.stringify(rel)});\n`;
      return { contents: prelude + source.replace(/\b__dirname\b/g, '__source_dirname'), loader: 'ts' };
    });
  },
};

/** Builds everything into dist/ (the stamp last, so an interrupted build stays stale). */
export async function build({ log = console.log } = {}) {
  const started = Date.now();
  const esbuild = await import('esbuild');
  fs.rmSync(STAMP, { force: true });
  const result = await esbuild.build({
    entryPoints: Object.fromEntries(ENTRIES.map((e) => [`bin/${e}`, path.join(ROOT, 'bin', `${e}.ts`)])),
    absWorkingDir: ROOT,
    outdir: DIST,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    sourcesContent: false,
    // Class and function names stay as written: logs, errors and the SDK's activity names use them.
    keepNames: true,
    metafile: true,
    logLevel: 'warning',
    plugins: [sourceDirname],
  });
  // The workflow sandbox's bundle, and the list of its inputs for the stamp (esbuild walks the
  // same imports webpack does, in a few milliseconds).
  const { bundleWorkflowCode } = await import('@temporalio/worker');
  const noop = () => undefined;
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS, workflowInterceptorModules: [WORKFLOW_INTERCEPTORS], logger: { log: noop, trace: noop, debug: noop, info: noop, warn: (m) => log(`[build] ${m}`), error: (m) => log(`[build] ${m}`) } });
  fs.writeFileSync(path.join(DIST, 'workflow-bundle.js'), code);
  const workflowInputs = await esbuild.build({ entryPoints: [WORKFLOWS, WORKFLOW_INTERCEPTORS], absWorkingDir: ROOT, outdir: DIST, bundle: true, write: false, packages: 'external', platform: 'neutral', metafile: true, logLevel: 'silent' });

  const inputs = {};
  for (const meta of [result.metafile, workflowInputs.metafile]) {
    for (const rel of Object.keys(meta.inputs)) if (!rel.includes('node_modules/')) inputs[rel] = '';
  }
  for (const rel of ALWAYS) inputs[rel] = '';
  for (const rel of Object.keys(inputs)) inputs[rel] = sha256(path.join(ROOT, rel));
  fs.writeFileSync(STAMP, `${JSON.stringify({ builtAt: new Date().toISOString(), inputs }, null, 1)}\n`);
  log(`[build] dist/: ${ENTRIES.map((e) => `bin/${e}.js`).join(', ')}, workflow-bundle.js from ${Object.keys(inputs).length} inputs in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

// `node bin/build.mjs [--if-stale]`
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const ifStale = process.argv.includes('--if-stale');
  const reason = staleReason();
  if (ifStale && reason === undefined) process.exit(0);
  if (reason) console.log(`[build] building dist/ (${reason})`);
  await build().catch((err) => {
    console.error('[build] failed:', err);
    process.exit(1);
  });
}
