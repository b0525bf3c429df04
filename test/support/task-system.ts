/**
 * What a task test file sets up: one test system whose outgoing requests may reach
 * 127.0.0.1 (the local stand-ins), the stand-in servers it closes after the file, task ids no
 * other test uses, and a task's runs oldest fire time first. Call at the top of a test file.
 */
import { temporal } from '@temporalio/proto';
import type { TimekeeperClient } from '../../sdk/client';
import { schedulerWorkflowId } from '../../lib/domain/tasks';
import { schedulerStateQuery, signalEventSignal, type SchedulerState } from '../../workflows/tasks/messages';
import { eventually, type WaitOptions } from './wait';
import { useTestSystem, TestSystem } from './system';
import { fakeServer, FakeServer } from './fake-services';
import { uid } from './ids';

export interface TaskTestSystem {
  readonly sys: TestSystem;
  readonly tk: TimekeeperClient;
  /** A local stand-in server, closed after the file. */
  server(handler: Parameters<typeof fakeServer>[0]): Promise<FakeServer>;
  /** A task id unique to this process and moment. */
  uid(prefix: string): string;
  /** The task's runs, oldest fire time first. */
  runsOldestFirst(taskId: string): Promise<Awaited<ReturnType<TimekeeperClient['tasks']['runs']>>['runs']>;
}

export function useTaskTestSystem(): TaskTestSystem {
  const servers: FakeServer[] = [];
  // Declared before the system's (jest runs afterAll hooks in their order): the stand-ins close before the system stops.
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });
  const system = useTestSystem({ config: { outboundAllowHosts: ['127.0.0.1'] } });
  const t: TaskTestSystem = {
    get sys() {
      return system.sys;
    },
    get tk() {
      return system.tk;
    },
    async server(handler) {
      const s = await fakeServer(handler);
      servers.push(s);
      return s;
    },
    uid,
    async runsOldestFirst(taskId) {
      const { runs } = await t.tk.tasks.runs(taskId, { limit: 1000 });
      return runs.sort((a, b) => Date.parse(a.scheduled_at) - Date.parse(b.scheduled_at));
    },
  };
  return t;
}

/** The task's scheduler workflow as its `state` query answers (enabled, next wake, runs in flight, fires so far). */
export function schedulerState(sys: TestSystem, taskId: string): Promise<SchedulerState> {
  return sys.client.workflow.getHandle(schedulerWorkflowId(taskId)).query(schedulerStateQuery);
}

const { EventType } = temporal.api.enums.v1;
const WORKFLOW_TASK_EVENTS = new Set<number>([
  EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
  EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED,
  EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
  EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
  EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT,
]);

/**
 * Resolves once the task's scheduler (its current run) has taken in at least `signals` signal
 * events and rests with nothing due: its newest workflow task completed (none is waiting) and no wake is set (a
 * paused task; a signal trigger with nothing waiting). From then on nothing starts until it
 * gets new input, so a "nothing more ran" check needs no window. `until` adds a condition on its state.
 */
export interface AtRestOptions extends WaitOptions {
  /** Signal events it must have taken in (counted in its current run's history). Default 0. */
  signals?: number;
  /** A wake set after this time (ms since the epoch) counts as resting too, e.g. a condition window's next recheck. */
  noWakeBefore?: number;
  until?: (s: SchedulerState) => boolean;
}

export async function schedulerAtRest(sys: TestSystem, taskId: string, opts: AtRestOptions = {}): Promise<SchedulerState> {
  const { signals = 0, until = () => true, noWakeBefore, ...wait } = opts;
  const handle = sys.client.workflow.getHandle(schedulerWorkflowId(taskId));
  return eventually(
    async () => {
      const events = (await handle.fetchHistory()).events ?? [];
      const taken = events.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === signalEventSignal.name).length;
      // Idle: its newest workflow-task event is a completion (the commands it gave follow that event).
      const last = events.filter((e) => WORKFLOW_TASK_EVENTS.has(e.eventType ?? 0)).at(-1)?.eventType;
      const state = await handle.query(schedulerStateQuery);
      const rests = state.nextFireMs === null || (noWakeBefore !== undefined && state.nextFireMs > noWakeBefore);
      if (taken >= signals && last === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED && rests && until(state)) return state;
      // Not yet: said, so that a timeout tells what it last saw.
      throw new Error(`${taken} signal events taken, last workflow task event ${EventType[last ?? 0]}, state ${JSON.stringify(state)}`);
    },
    { what: `the scheduler of ${taskId} to rest with nothing due`, ...wait },
  );
}
