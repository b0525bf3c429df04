/**
 * What tests share: ids no other test uses (ids.ts), waiting on a condition (wait.ts), the
 * shape of a refusal (problems.ts), a worker in a child process (spawn-worker.ts) and a whole
 * Timekeeper for a test file (system.ts). Import from here.
 */
export * from './ids';
export * from './wait';
export * from './problems';
export * from './spawn-worker';
export * from './system';
