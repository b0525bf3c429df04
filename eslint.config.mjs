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
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*'], message: 'Workflow code runs in a deterministic sandbox: no Node built-ins.' },
            { group: ['fs', 'path', 'os', 'crypto', 'http', 'https', 'net', 'child_process', 'pg', 'express', '@temporalio/client', '@temporalio/worker', '@temporalio/activity'], message: 'Workflow code must not do I/O; use activities.' },
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        { selector: "CallExpression[callee.object.name='Math'][callee.property.name='random']", message: 'Use the SDK-seeded Math.random only through uuid4() or deterministic logic.' },
      ],
    },
  },
);
