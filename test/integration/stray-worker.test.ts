/**
 * A worker connected to another event database (misconfigured, or a stray process polling
 * the same task queue) must not write a session into the wrong database: sessions carry
 * their database's instance id and the writer refuses any other.
 */
import { NativeConnection } from '@temporalio/worker';
import { Client as PgClient, Pool } from 'pg';
import { databaseInstanceId } from '../../lib/store/instance';
import { deriveAppUrl } from '../../lib/config';
import { createPool, quoteIdent, withDatabase } from '../../lib/db';
import { migrate } from '../../lib/migrate';
import { createTimekeeperWorker, type TimekeeperWorker } from '../../worker/worker';
import { refusal, startTestSystem, testEnv, TestSystem, uniqueSessionId } from '../support';

let sys: TestSystem;
let otherPool: Pool;
let stray: TimekeeperWorker | undefined;
let strayRun: Promise<void> | undefined;
let strayConn: NativeConnection | undefined;
const otherDb = `timekeeper_test_${process.pid}_other`;

beforeAll(async () => {
  const env = testEnv();
  const otherOwner = withDatabase(env.ownerUrl, otherDb);
  await migrate(otherOwner);
  otherPool = createPool(deriveAppUrl(otherOwner));
  sys = await startTestSystem({ worker: false, config: { writeTimeoutMs: 5000 } });
});

afterAll(async () => {
  if (stray?.getState() === 'RUNNING') stray.shutdown();
  await strayRun;
  await strayConn?.close();
  await sys?.stop();
  await otherPool?.end();
  const admin = new PgClient({ connectionString: withDatabase(testEnv().ownerUrl, 'postgres') });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(otherDb)} WITH (FORCE)`);
  await admin.end();
});

test('the two databases have different instance ids', async () => {
  expect(await databaseInstanceId(otherPool)).not.toBe(await databaseInstanceId(sys.pool));
});

test('a stray worker refuses to write; once the right worker runs, the session is created in the right database', async () => {
  strayConn = await NativeConnection.connect({ address: testEnv().temporalAddress });
  stray = await createTimekeeperWorker({
    connection: strayConn,
    namespace: 'default',
    taskQueue: sys.config.taskQueue,
    pool: otherPool,
    workflowBundle: { codePath: testEnv().workflowBundle },
  });
  strayRun = stray.run();

  const id = uniqueSessionId('stray');
  const refused = await refusal(sys.tk.createSession({ session_id: id }));
  expect(refused.status).toBe(503);
  const inOther = await otherPool.query('SELECT count(*)::int AS n FROM timeline_sessions WHERE session_id = $1', [id]);
  expect(inOther.rows[0].n).toBe(0);

  stray.shutdown();
  await strayRun;
  await sys.startWorker();
  const created = await sys.tk.call('createSession', { body: { session_id: id } });
  expect(created.status).toBe(201);
  const appended = await sys.tk.call('appendEvent', { params: { id }, body: { type: 'USER_INPUT', content: { input: 'right place' } } });
  expect(appended.status).toBe(201);
  const inRight = await sys.pool.query('SELECT count(*)::int AS n FROM timeline_events WHERE session_id = $1', [id]);
  expect(inRight.rows[0].n).toBe(2);
});
