/** Tests are split by how much of the real system they need (see docs/operations.md#tests). */
const transform = { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }] };
const common = { transform, testEnvironment: 'node', moduleFileExtensions: ['ts', 'js', 'json'] };

module.exports = {
  testTimeout: 120000,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    { ...common, displayName: 'integration', testMatch: ['<rootDir>/test/integration/**/*.test.ts'] },
    { ...common, displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.test.ts'] },
    // Recorded workflow histories against the current workflow code: no server, no database.
    { ...common, displayName: 'replay', testMatch: ['<rootDir>/test/replay/**/*.test.ts'] },
  ],
};
