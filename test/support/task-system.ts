/**
 * What a task test file sets up: one test system whose outgoing requests may reach
 * 127.0.0.1 (the local stand-ins), the stand-in servers it closes after the file, task ids no
 * other test uses, and a task's runs oldest fire time first. Call at the top of a test file.
 */
import type { TimekeeperClient } from '../../api/client';
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

