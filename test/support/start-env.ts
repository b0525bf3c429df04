/** The environment an `npm start` process gets in e2e tests: the test PostgreSQL and Temporal server, its own task queue, port and data folder, JSON logs. */
import { testEnv } from './system';

export function startProcessEnv(o: { taskQueue: string; port: number; dataDir: string }): NodeJS.ProcessEnv {
  const env = testEnv();
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATABASE_URL: env.ownerUrl,
    APP_DATABASE_URL: env.appUrl,
    TEMPORAL_ADDRESS: env.temporalAddress,
    TEMPORAL_TASK_QUEUE: o.taskQueue,
    HOST: '127.0.0.1',
    PORT: String(o.port),
    TIMEKEEPER_DATA_DIR: o.dataDir,
    LOG_FORMAT: 'json',
    TEMPORAL_LOG_LEVEL: 'ERROR',
  };
}
