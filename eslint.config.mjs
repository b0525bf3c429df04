// Lint rules that guard correctness, not taste: promises must be awaited or handled, and
// workflow code must stay deterministic (no Node built-ins, no I/O modules).
import tseslint from 'typescript-eslint';

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
  // deterministic sandbox. Value imports may only reach workflows/, lib/domain/ and the SDK's
  // sandbox-safe packages; type-only imports (erased from the bundle) may go anywhere.
  sandbox(['workflows/*/**/*.ts'], String.raw`^(?!\./|\.\./[a-z][a-z0-9-]*/[^/]+$|\.\./\.\./lib/domain/[^/]+$)\.`),
  sandbox(['workflows/*.ts'], String.raw`^(?!\./|\.\./lib/domain/[^/]+$)\.`),
  sandbox(['lib/domain/**/*.ts'], String.raw`^(?!\./[^/]+$)\.`),
  // The bench's floor workflow is sandbox code too, and imports nothing relative at all.
  sandbox(['bench/floor/workflow.ts'], String.raw`^\.`),
);

/** The sandbox rules for `files`; `outside` matches a relative import that leaves the sandbox folders. */
function sandbox(files, outside) {
  return {
    files,
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*'], message: 'Workflow code runs in a deterministic sandbox: no Node built-ins.' },
            {
              // zod is pure and deterministic: the kernel's schemas (e.g. the agent answer protocol) may use it.
              group: ['fs', 'path', 'os', 'crypto', 'http', 'https', 'net', 'child_process', 'pg', 'express', '@temporalio/client', '@temporalio/worker', '@temporalio/activity'],
              message: 'Workflow code must not do I/O; use activities.',
              allowTypeImports: true,
            },
            { regex: outside, message: 'Sandbox code may import only workflows/ and lib/domain/ at run time (type-only imports are fine).', allowTypeImports: true },
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
