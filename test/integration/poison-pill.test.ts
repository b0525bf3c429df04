/**
 * No poison pill (issue 16): a hostile value sent below the HTTP gate, as a buggy internal
 * caller would (IntentClient, SessionClient, or straight to the intent workflow), is refused
 * at once as a validation error naming the field, and the same workflow (or id) serves the
 * next, clean call. Intents wedged by the code before the fix (a write retried forever,
 * holding the intent's writer) are repaired by the upgrade itself and by
 * `timekeeper intents repair`.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { WithStartWorkflowOperation, WorkflowUpdateFailedError } from '@temporalio/client';
import { WORKER_NODE_ARGS } from '../../bin/run';
import { IntentClient } from '../../clients/intents';
import { SessionClient } from '../../clients/sessions';
import { DomainError, ErrorCode } from '../../lib/domain/errors';
import { IntentStatus, intentWorkflowId, type IntentSettings } from '../../lib/domain/intents';
import { EventType } from '../../lib/domain/sessions';
import { databaseInstanceReader } from '../../lib/store/instance';
import { intentWorkflow } from '../../workflows/intents/workflow';
import { createdUpdate, stateQuery, transitionUpdate } from '../../workflows/intents/messages';
import { eventually, startTestSystem, uniqueSessionId, type TestSystem } from '../support';
import { LEGACY_POISON_MARK } from '../support/legacy-intent-worker';

const ROOT = path.resolve(__dirname, '..', '..');

const WRITE_TIMEOUT_MS = 8_000;
let sys: TestSystem;
let intents: IntentClient;
let sessions: SessionClient;
let instance: () => Promise<string>;
const P = `poison-${process.pid}-`;
let n = 0;
const nextId = (what: string) => `${P}${what}-${n++}`;

const HOSTILE: [string, string][] = [
  ['a lone low surrogate', 'a\udc00b'],
  ['a lone high surrogate', 'x\ud800'],
  ['NUL', 'a\u0000b'],
];

beforeAll(async () => {
  sys = await startTestSystem({ config: { writeTimeoutMs: WRITE_TIMEOUT_MS } });
  intents = IntentClient.fromConfig(sys.client, sys.pool, sys.config);
  sessions = new SessionClient({ client: sys.client, pool: sys.pool, taskQueue: sys.config.taskQueue, maxContentBytes: sys.config.maxContentBytes, updatesPerRun: sys.config.updatesPerRun, writeTimeoutMs: WRITE_TIMEOUT_MS });
  instance = databaseInstanceReader(sys.pool);
});
afterAll(async () => {
  await sys?.stop();
});

/** The refusal `fn` must end in: a validation error naming `field`. */
async function refused(fn: () => Promise<unknown>, field: string): Promise<DomainError> {
  const err = await fn().then(
    () => undefined,
    (e: unknown) => e,
  );
  const d = err instanceof WorkflowUpdateFailedError ? DomainError.fromFailure(err.cause) : err;
  if (!(d instanceof DomainError) || d.code !== ErrorCode.Validation || d.errors[0]?.field !== field) {
    throw new Error(`expected a validation error naming ${field}, got ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
  }
  return d;
}

const transitions = async (eventId: string) =>
  (await sys.pool.query('SELECT seq, content FROM intent_transitions WHERE event_id = $1 ORDER BY seq', [eventId])).rows as { seq: number; content: { note: string | null } }[];

/** Settings of a create as IntentClient would build them, without its checks: what a buggy caller could send. */
async function rawSettings(eventId: string, action: string): Promise<IntentSettings> {
  return {
    header: { event_id: eventId, domain: 'test', action, tags: [], session_id: null, dedupe_key: null, ttl_s: 3600 },
    create: { transitionId: crypto.randomUUID(), to: IntentStatus.Requested, data: {} },
    retentionS: 3600,
    databaseInstance: await instance(),
  };
}

function rawCreate(settings: IntentSettings, deadlineMs = WRITE_TIMEOUT_MS) {
  const start = new WithStartWorkflowOperation(intentWorkflow, {
    workflowId: intentWorkflowId(settings.header.event_id),
    taskQueue: sys.config.taskQueue,
    args: [{ settings }],
    workflowIdConflictPolicy: 'FAIL',
    workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
  });
  return sys.client.withDeadline(Date.now() + deadlineMs, () => sys.client.workflow.executeUpdateWithStart(createdUpdate, { startWorkflowOperation: start }));
}

describe.each(HOSTILE)('%s below the HTTP gate', (_name, bad) => {
  test('IntentClient.create refuses it in the note, action, a tag or data; the id then takes a clean create', async () => {
    for (const [input, field] of [
      [{ note: bad }, 'note'],
      [{ action: bad }, 'action'],
      [{ tags: ['ok', bad] as string[] }, 'tags.1'],
      [{ data: { deep: [{ v: bad }] } }, 'data.deep.0.v'],
    ] as [Record<string, unknown>, string][]) {
      const eventId = nextId('create');
      await refused(() => intents.create({ eventId, domain: 'test', action: 'poison-check', ...input }), field);
      const t = await intents.create({ eventId, domain: 'test', action: 'poison-check', note: 'clean' });
      expect(t.seq).toBe(1);
    }
  });

  test('IntentClient.transition refuses it; the next clean transition of the same intent is stored', async () => {
    const eventId = nextId('transition');
    await intents.create({ eventId, domain: 'test', action: 'poison-check' });
    await refused(() => intents.transition(eventId, { status: IntentStatus.InProgress, note: bad }), 'note');
    await refused(() => intents.transition(eventId, { status: IntentStatus.InProgress, data: { [`k${bad}`]: 1 } }), 'data');
    const t = await intents.transition(eventId, { status: IntentStatus.InProgress, note: 'clean' });
    expect(t.seq).toBe(2);
    expect((await transitions(eventId)).map((r) => r.content.note)).toEqual([null, 'clean']);
  });

  test('straight to the workflow, skipping the client: a create is refused by the writer and the id is free; a transition by the validator', async () => {
    const eventId = nextId('raw');
    const settings = await rawSettings(eventId, `act${bad}`);
    await refused(() => rawCreate(settings), 'action');
    expect(await transitions(eventId)).toEqual([]);
    expect((await intents.create({ eventId, domain: 'test', action: 'clean' })).seq).toBe(1);

    const handle = sys.client.workflow.getHandle(intentWorkflowId(eventId));
    await refused(() => handle.executeUpdate(transitionUpdate, { args: [{ transitionId: crypto.randomUUID(), to: IntentStatus.InProgress, note: bad, data: {} }] }), 'note');
    expect((await intents.transition(eventId, { status: IntentStatus.Done, note: 'clean' })).seq).toBe(2);
  });

  test('SessionClient refuses it in content and in metadata; the session takes the next clean append', async () => {
    const sessionId = uniqueSessionId('poison');
    await refused(() => sessions.create({ sessionId, metadata: { note: bad } }), 'metadata');
    await sessions.create({ sessionId });
    await refused(() => sessions.append({ sessionId, type: EventType.UserInput, content: { input: bad } }), 'content');
    const r = await sessions.append({ sessionId, type: EventType.UserInput, content: { input: 'clean' } });
    expect(r.event.seq).toBe(2);
  });
});

describe('intents wedged by the code before the fix', () => {
  let legacy: ChildProcess | undefined;

  /** The worker as it was (test/support/legacy-intent-worker.ts), in its own process, on this system's queue. */
  async function startLegacyWorker(): Promise<void> {
    const child = spawn(process.execPath, [...WORKER_NODE_ARGS, path.join(ROOT, 'test', 'support', 'legacy-intent-worker.ts')], {
      cwd: ROOT,
      env: { ...process.env, TASK_QUEUE: sys.config.taskQueue },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`legacy worker exited early with ${code}`)));
      child.stdout!.on('data', (b: Buffer) => b.toString().includes('worker ready') && resolve());
    });
    legacy = child;
  }
  /** As an upgrade replaces a worker process. */
  async function killLegacyWorker(): Promise<void> {
    if (!legacy || legacy.exitCode !== null) return;
    const exited = new Promise((r) => legacy!.once('exit', r));
    legacy.kill('SIGKILL');
    await exited;
    legacy = undefined;
  }

  /** Until the run has held an update without an answer for at least `s` seconds (its write retrying). */
  async function wedgedFor(eventId: string, s: number): Promise<void> {
    const handle = sys.client.workflow.getHandle(intentWorkflowId(eventId));
    await eventually(async () => {
      const events = (await handle.fetchHistory()).events ?? [];
      const accepted = events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).map((e) => Number(e.eventTime?.seconds ?? 0) * 1000);
      const completed = events.filter((e) => e.workflowExecutionUpdateCompletedEventAttributes).length;
      return accepted.length > completed && Date.now() - accepted[accepted.length - 1] > s * 1000;
    }, 30_000);
  }

  function repairCli(stuckForS: number): Promise<{ terminated: string[]; restarted: string[] }> {
    const env = {
      ...process.env,
      TEMPORAL_ADDRESS: sys.config.temporalAddress,
      TEMPORAL_NAMESPACE: sys.config.temporalNamespace,
      TEMPORAL_TASK_QUEUE: sys.config.taskQueue,
      DATABASE_URL: sys.config.databaseUrl,
      APP_DATABASE_URL: sys.config.appDatabaseUrl,
    };
    const cli = path.join(ROOT, 'bin', 'timekeeper.ts');
    const tsx = path.join(ROOT, 'node_modules', '.bin', 'tsx');
    return promisify(execFile)(tsx, [cli, '--json', 'intents', 'repair', '--stuck-for', String(stuckForS)], { env, timeout: 60_000 }).then((r) => JSON.parse(r.stdout));
  }

  beforeAll(async () => {
    await sys.stopWorker();
    await startLegacyWorker();
  });
  afterAll(async () => {
    await killLegacyWorker();
    if (!sys.worker) await sys.startWorker();
  });

  test('`timekeeper intents repair` frees a wedged create and un-wedges an intent whose PATCH was stuck', async () => {
    // A create with a lone surrogate in its action: today's code answered 503 and retried forever.
    const created = nextId('wedged-create');
    await expect(rawCreate(await rawSettings(created, 'a\udc00'), 3_000)).rejects.toThrow();
    // An intent whose PATCH holds its writer: every later PATCH times out.
    const patched = nextId('wedged-patch');
    await intents.create({ eventId: patched, domain: 'test', action: 'poison-check' });
    const stuck = intents.transition(patched, { status: IntentStatus.InProgress, data: { [LEGACY_POISON_MARK]: true } }).catch((e: unknown) => e);
    await wedgedFor(patched, 2);
    const blocked = await intents.transition(patched, { status: IntentStatus.InProgress, note: 'clean' }).catch((e: unknown) => e);
    expect((blocked as DomainError).code).toBe(ErrorCode.Unavailable);
    expect(((await stuck) as DomainError).code).toBe(ErrorCode.Unavailable);
    await wedgedFor(created, 2);

    const r = await repairCli(2);
    expect(r.terminated.sort()).toEqual([created, patched].sort());
    expect(r.restarted).toContain(patched);
    expect(r.restarted).not.toContain(created);

    // The created id is free, the patched intent takes clean PATCHes, and nothing of the poison was stored.
    expect((await intents.create({ eventId: created, domain: 'test', action: 'clean' })).seq).toBe(1);
    expect((await intents.transition(patched, { status: IntentStatus.InProgress, note: 'clean' })).seq).toBe(2);
    expect((await transitions(patched)).map((t) => t.content.note)).toEqual([null, 'clean']);
    // A second repair finds nothing stuck.
    expect((await repairCli(2)).terminated).toEqual([]);
  });

  test('upgrading the worker repairs a wedged create by itself: the write is refused, the run fails, the id is free', async () => {
    const eventId = nextId('wedged-upgrade');
    await expect(rawCreate(await rawSettings(eventId, 'a\udc00'), 3_000)).rejects.toThrow();
    await wedgedFor(eventId, 1);
    await killLegacyWorker();
    await sys.startWorker();
    const handle = sys.client.workflow.getHandle(intentWorkflowId(eventId));
    await eventually(async () => (await handle.describe()).status.name === 'FAILED', { timeoutMs: 60_000, stepMs: 500 });
    expect(await transitions(eventId)).toEqual([]);
    expect((await intents.create({ eventId, domain: 'test', action: 'clean' })).seq).toBe(1);
    expect((await handle.query(stateQuery)).status).toBe(IntentStatus.Requested);
  });
});
