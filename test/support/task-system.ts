/**
 * What a task test file sets up: one test system whose outgoing requests may reach
 * 127.0.0.1 (the local stand-ins), the stand-in servers it closes after the file, task ids no
 * other test uses, and a task's runs oldest fire time first. Call at the top of a test file.
 */
import type { TimekeeperClient } from '../../api/client';
import { startTestSystem, TestSystem } from './system';
import { fakeServer, FakeServer } from './fake-services';

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
  let sys: TestSystem | undefined;
  const servers: FakeServer[] = [];
  let counter = 0;
  beforeAll(async () => {
    sys = await startTestSystem({ config: { outboundAllowHosts: ['127.0.0.1'] } });
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await sys?.stop();
  });
  const t: TaskTestSystem = {
    get sys() {
      if (!sys) throw new Error('the task test system is not started yet (use it inside tests)');
      return sys;
    },
    get tk() {
      return t.sys.tk;
    },
    async server(handler) {
      const s = await fakeServer(handler);
      servers.push(s);
      return s;
    },
    uid: (p) => `${p}-${process.pid}-${Date.now().toString(36)}-${counter++}`,
    async runsOldestFirst(taskId) {
      const { runs } = await t.tk.tasks.runs(taskId, { limit: 1000 });
      return runs.sort((a, b) => Date.parse(a.scheduled_at) - Date.parse(b.scheduled_at));
    },
  };
  return t;
}
