/**
 * The intent worker as it was before the input gate, in its own process so a test can replace
 * it the way an upgrade does (SIGKILL, then the new worker). Its recordTransition let an
 * unstorable value reach the hash, and the CanonicalJsonError it threw was retried forever.
 * A transition the old validator let through (a note with a lone surrogate) cannot be sent to
 * today's validator, so a transition whose data carries LEGACY_POISON_MARK stands in for one
 * and fails the same way. Env: TK_TEST_TEMPORAL_ADDRESS, TK_TEST_APP_URL,
 * TK_TEST_WORKFLOW_BUNDLE, TASK_QUEUE.
 */
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createIntentActivities, type RecordTransitionInput } from '../../activities/intents';
import { SessionClient } from '../../clients/sessions';
import { createPool } from '../../lib/db';
import { CanonicalJsonError, canonicalize } from '../../lib/domain/canonical-json';
import { TUNABLE } from '../../lib/domain/limits';
import { testEnv } from './system';
import { workflowSinksOff } from '../../worker/otel';

export const LEGACY_POISON_MARK = 'poison-accepted-by-the-old-validator';

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const env = testEnv();
  const taskQueue = process.env.TASK_QUEUE!;
  const pool = createPool(env.appUrl);
  const client = new Client({ connection: await Connection.connect({ address: env.temporalAddress }) });
  const sessions = new SessionClient({ client, pool, taskQueue, maxContentBytes: TUNABLE.maxContentBytes.default, updatesPerRun: TUNABLE.updatesPerRun.default, writeTimeoutMs: 8_000 });
  const real = createIntentActivities({ pool, sessions });
  const recordTransition = async (input: RecordTransitionInput) => {
    try {
      canonicalize({ header: input.create ?? null, note: input.transition.note ?? null, data: input.transition.data });
    } catch (err) {
      if (err instanceof CanonicalJsonError) throw new Error(err.message); // a plain Error: retried, as before
      throw err;
    }
    if (input.transition.data[LEGACY_POISON_MARK]) throw new Error('string has a lone surrogate \\udc00 at index 0 at $.content.note');
    return real.recordTransition(input);
  };
  const worker = await Worker.create({
    connection: await NativeConnection.connect({ address: env.temporalAddress }),
    namespace: 'default',
    taskQueue,
    workflowBundle: { codePath: env.workflowBundle },
    sinks: workflowSinksOff(),
    activities: { ...real, recordTransition },
  });
  const running = worker.run();
  process.stdout.write('worker ready\n');
  await running;
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
