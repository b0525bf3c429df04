// Lint rules that guard correctness, not taste: promises must be awaited or handled, and
// workflow code must stay deterministic (it imports only what an allowlist names).
import tseslint from 'typescript-eslint';

/**
 * The packages workflow code may import at run time: the SDK's workflow side (its
 * interceptors too, workflows/otel), and the common types and failures it shares with clients.
 */
const WORKFLOW_PACKAGES = [
  '@temporalio/workflow',
  '@temporalio/common',
  '@temporalio/interceptors-opentelemetry/lib/workflow',
  '@temporalio/interceptors-opentelemetry/lib/instrumentation',
];
/**
 * The packages lib/domain may import at run time: pure and deterministic. zod for the
 * kernel's schemas (the agent answer protocol), croner for fire times (lib/domain/tasks/schedule.ts,
 * run by activities), the chinese-days calendar data (lib/domain/tasks/calendars.ts), and
 * @temporalio/common for the error catalogue's ApplicationFailure and search-attribute keys.
 */
const DOMAIN_PACKAGES = ['@temporalio/common', 'zod', 'croner', 'chinese-days/dist/chinese-days.json'];

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'dist/**', 'test/replay/histories/**', '**/*.js', '**/*.mjs'] },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
    },
  },
  // The dashboard's browser code (api/dashboard/src, its own tsconfig with the DOM and no Node
  // types): no Node built-ins or globals. Everything else is server code: no browser globals
  // (the root tsconfig has the DOM lib only so that `tsc --noEmit` checks the dashboard too).
  {
    files: ['api/dashboard/src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [{ group: ['node:*', 'fs', 'path', 'os', 'crypto', 'http', 'https', 'net', 'child_process', 'pg', 'express'], message: 'Browser code: no Node built-ins or server packages.' }] }],
      'no-restricted-globals': ['error', 'process', 'require', 'Buffer', '__dirname', 'global'],
    },
  },
  {
    files: ['**/*.ts'],
    ignores: ['api/dashboard/src/**'],
    rules: { 'no-restricted-globals': ['error', 'window', 'document', 'localStorage', 'sessionStorage', 'navigator', 'location'] },
  },
  // Workflow code and everything it imports at run time (lib/domain) runs in Temporal's
  // deterministic sandbox. An allowlist: value imports may only reach the sandbox folders
  // (workflows/, lib/domain/ and its subfolders, e.g. lib/domain/platform/) and the packages
  // named below; anything else is refused. Type-only imports (erased from the bundle) may go
  // anywhere.
  sandbox(['workflows/*/**/*.ts'], WORKFLOW_PACKAGES, String.raw`^(?!\./|\.\./[a-z][a-z0-9-]*/[^/]+$|\.\./\.\./lib/domain/(?:[a-z][a-z0-9-]*/)?[^/]+$)\.`),
  sandbox(['workflows/*.ts'], WORKFLOW_PACKAGES, String.raw`^(?!\./|\.\./lib/domain/(?:[a-z][a-z0-9-]*/)?[^/]+$)\.`),
  sandbox(['lib/domain/*.ts'], DOMAIN_PACKAGES, String.raw`^(?!\./(?:[a-z][a-z0-9-]*/)?[^/]+$)\.`),
  sandbox(['lib/domain/*/**/*.ts'], DOMAIN_PACKAGES, String.raw`^(?!\./[^/]+$|\.\./(?:[a-z][a-z0-9-]*/)?[^/]+$)\.`),
  // The bench's floor workflow is sandbox code too, and imports nothing relative at all.
  sandbox(['bench/floor/workflow.ts'], ['@temporalio/workflow'], String.raw`^\.`),
);

/**
 * The sandbox rules for `files`: value imports only of `packages` and of relative paths that
 * `outside` (a regex matching a relative import that leaves the sandbox folders) lets through.
 */
function sandbox(files, packages, outside) {
  const allowed = packages.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
  return {
    files,
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*'], message: 'Workflow code runs in a deterministic sandbox: no Node built-ins.' },
            {
              // Anything that is not relative, not node:* (above) and not an allowed package.
              regex: `^(?!\\.|node:|(?:${allowed})$)`,
              message: `Sandbox code may import at run time only the packages ${packages.join(', ')} (eslint.config.mjs); I/O (fs, pg, express, @temporalio/client, @temporalio/activity, ...) belongs in activities. Type-only imports are fine.`,
              allowTypeImports: true,
            },
            { regex: outside, message: 'Sandbox code may import only workflows/ and lib/domain/ (and its subfolders) at run time (type-only imports are fine).', allowTypeImports: true },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'No process in workflow code.' },
        { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'setInterval', message: 'Use sleep() in a loop from @temporalio/workflow.' },
      ],
      'no-restricted-syntax': [
        'error',
        { selector: "CallExpression[callee.object.name='Math'][callee.property.name='random']", message: 'Use the SDK-seeded Math.random only through uuid4() or deterministic logic.' },
      ],
    },
  };
}
