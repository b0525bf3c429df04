/**
 * How the production scripts run (`npm start`, `npm run worker`, `npm run api`, the image):
 * `node bin/launch.cjs ROLE` builds dist/ when it is missing or stale (bin/build.mjs, in a
 * child process so the bundlers' memory is not kept), turns on source maps for stack traces
 * in this thread, and runs the compiled `dist/bin/ROLE.js` in this process, so signals reach
 * the application itself.
 *
 * Source maps are turned on here rather than with `--enable-source-maps`: worker threads
 * inherit node's flags, and in the Temporal SDK's workflow threads source-map-aware stack
 * traces are paid for on every promise a workflow creates (bin/tsx-main-thread.cjs, the same
 * reasoning for the development path). `process.setSourceMapsEnabled` affects this thread only.
 *
 * TIMEKEEPER_BUILD=skip runs whatever dist/ holds (npm start's worker child: its parent has
 * just checked).
 */
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const ROLES = ['start', 'worker', 'api'];

async function main() {
  const role = process.argv[2];
  if (!ROLES.includes(role)) {
    console.error(`usage: node bin/launch.cjs ${ROLES.join('|')}`);
    process.exit(2);
  }
  // The entry sees the arguments after the role as its own.
  process.argv.splice(2, 1);
  if (process.env.TIMEKEEPER_BUILD !== 'skip') {
    const { staleReason } = await import('./build.mjs');
    const reason = staleReason();
    if (reason !== undefined) {
      const built = spawnSync(process.execPath, [path.join(__dirname, 'build.mjs')], { stdio: 'inherit', cwd: ROOT });
      if (built.status !== 0) {
        console.error(`[build] failed (${built.signal ?? `status ${built.status}`}); \`npm run build\` shows why`);
        process.exit(1);
      }
    }
  }
  process.setSourceMapsEnabled(true);
  require(path.join(ROOT, 'dist', 'bin', `${role}.js`));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
