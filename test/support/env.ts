/** Names of the values global-setup hands the test files through the environment. */
export const TEST_ENV = {
  temporalAddress: 'TK_TEST_TEMPORAL_ADDRESS',
  ownerUrl: 'TK_TEST_OWNER_URL',
  appUrl: 'TK_TEST_APP_URL',
  workflowBundle: 'TK_TEST_WORKFLOW_BUNDLE',
} as const;
/** One database per jest run, so parallel runs on one machine do not collide. */
export const testDatabaseName = (pid = process.pid): string => `timekeeper_test_${pid}`;
