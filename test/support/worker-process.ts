/**
 * A worker in its own process, so a test can kill it with SIGKILL mid-append.
 * Env: TK_TEST_TEMPORAL_ADDRESS, TK_TEST_APP_URL, TK_TEST_WORKFLOW_BUNDLE, TASK_QUEUE, and
 * OUTBOUND_ALLOW (hosts task requests may reach, comma-separated), SECRETS_KEY (the API's sealing key, if it shares one),
 * the OpenTelemetry settings as lib/config.ts reads them (OTEL_EXPORTER_OTLP_ENDPOINT, …), TASK_SLOTS_DEFAULT /
 * TASK_SLOTS_CORE, and WORKER_METRICS_PORT (a scrape endpoint on 127.0.0.1, for the benches).
 */
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { loadConfig } from '../../lib/config';
import { createPool } from '../../lib/db';
import { parseSecretsKey } from '../../lib/secrets-key';
import { TaskSecrets } from '../../lib/task-secrets';
import { createTimekeeperWorker } from '../../worker/worker';
import { listenWorkerMetrics } from '../../worker/metrics-listener';
import { loadKeyStore } from '../../api/auth';
import { testEnv } from './system';

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const env = testEnv();
  const pool = createPool(env.appUrl);
  const connection = await NativeConnection.connect({ address: env.temporalAddress });
  const c = loadConfig(process.env);
  const worker = await createTimekeeperWorker({
    connection,
    namespace: 'default',
    taskQueue: process.env.TASK_QUEUE!,
    pool,
    workflowBundle: { codePath: env.workflowBundle },
    otel: c.otelEndpoint ? { endpoint: c.otelEndpoint, serviceName: c.otelServiceName, pollMs: c.otelPollMs, settleMs: c.otelSettleMs } : undefined,
    tasks: {
      outboundAllowHosts: (process.env.OUTBOUND_ALLOW ?? '').split(',').filter(Boolean),
      secrets: process.env.SECRETS_KEY ? new TaskSecrets(parseSecretsKey(process.env.SECRETS_KEY)) : undefined,
      slotsDefault: c.taskSlotsDefault,
      slotsCore: c.taskSlotsCore,
    },
  });
  // WORKER_METRICS_PORT: the bench reads the worker's series (bench/tasks.ts: the first attempt's steps).
  const metrics = c.workerMetricsPort ? await listenWorkerMetrics('127.0.0.1', c.workerMetricsPort, loadKeyStore(undefined)) : undefined;
  const running = worker.run();
  process.stdout.write('worker ready\n');
  await running;
  await metrics?.close();
  await pool.end();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
