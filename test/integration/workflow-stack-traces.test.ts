/**
 * WORKFLOW_STACK_TRACES (worker/workflow-threads.ts): by default the worker's workflow threads
 * start without the Temporal SDK's per-promise stack capture, so the stack-trace query (the
 * Temporal UI's "Stack Trace" tab) answers that it is not enabled, and the workflows work as
 * before; set to true, the query shows where a session workflow waits.
 */
import { sessionWorkflowId } from '../../lib/domain/sessions';
import { startTestSystem, TestSystem, uniqueSessionId } from '../support';

let sys: TestSystem | undefined;

afterEach(async () => {
  await sys?.stop();
  sys = undefined;
});

async function sessionWithOneAppend(s: TestSystem): Promise<string> {
  const id = uniqueSessionId('stack');
  expect((await s.tk.call('createSession', { body: { session_id: id } })).status).toBe(201);
  expect((await s.tk.call('appendEvent', { params: { id }, body: { type: 'USER_INPUT', content: { input: 'hello' } } })).status).toBe(201);
  return id;
}

test('off by default: sessions work, and the stack-trace query says stack traces are not enabled', async () => {
  sys = await startTestSystem();
  expect(sys.config.workflowStackTraces).toBe(false);
  const id = await sessionWithOneAppend(sys);
  const handle = sys.client.workflow.getHandle(sessionWorkflowId(id));
  await expect(handle.query('__stack_trace')).rejects.toThrow(/stack traces are not enabled/);
  // Node's AsyncLocalStorage (the SDK's update scopes) takes the same createHook: it must still
  // work, so no workflow task of the session failed on the way.
  const { events } = await handle.fetchHistory();
  expect(events!.filter((e) => e.workflowTaskFailedEventAttributes)).toEqual([]);
  expect(events!.some((e) => e.workflowExecutionUpdateCompletedEventAttributes)).toBe(true);
});

test('WORKFLOW_STACK_TRACES=true: the stack-trace query shows the session workflow waiting', async () => {
  sys = await startTestSystem({ config: { workflowStackTraces: true } });
  const id = await sessionWithOneAppend(sys);
  const handle = sys.client.workflow.getHandle(sessionWorkflowId(id));
  const stack = await handle.query<string>('__stack_trace');
  expect(typeof stack).toBe('string');
  expect(stack).toMatch(/workflows\/sessions\/workflow\.ts/);
});
