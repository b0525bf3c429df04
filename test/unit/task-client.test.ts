/**
 * The typed client's task parts (tk.tasks, tk.runs, tk.schedules) on the wire, against a
 * recording fetch: each method calls its route with its method, path, query and body, answers
 * the body, and rejects a refusal with the problem.
 */
import { TimekeeperApiError, TimekeeperClient } from '../../sdk/client';

interface Sent {
  method: string;
  url: string;
  body: unknown;
}

/** A client whose fetch records each request and answers `status` (by route) with `{}`. */
function recording(status: (method: string, url: string) => number = () => 200) {
  const sent: Sent[] = [];
  const tk = new TimekeeperClient({
    baseUrl: 'http://tk.test',
    fetch: async (url, init) => {
      const method = String(init.method);
      const path = url.replace('http://tk.test', '');
      sent.push({ method, url: path, body: init.body === undefined ? undefined : JSON.parse(String(init.body)) });
      const s = status(method, path);
      const body = s >= 400 ? { type: 'https://timekeeper.dev/problems/task_deleted', title: 'task_deleted', status: s, detail: 'task t1 is deleted', code: s, msg: 'task t1 is deleted' } : { echoed: path };
      return new Response(JSON.stringify(body), { status: s, headers: { 'content-type': s >= 400 ? 'application/problem+json' : 'application/json' } });
    },
  });
  return { tk, sent };
}

test('each task method calls its route and answers the body', async () => {
  const { tk, sent } = recording((method, url) => (url === '/v1/tasks' && method === 'POST' ? 201 : url.endsWith('/trigger') ? 202 : 200));
  const runId = 'run/daily-digest/2026-03-09T09:00:00.000Z';
  const answers = [
    await tk.tasks.create({ task_id: 'daily-digest', trigger: { type: 'cron', expression: '0 17 * * 1-5', timezone: 'Asia/Shanghai' }, agent: { type: 'webhook', url: 'https://a.example', prompt_template: 'go' } }),
    await tk.tasks.list({ tag: 'ops', enabled: 'false', limit: 2, cursor: 'a-task' }),
    await tk.tasks.list(),
    await tk.tasks.get('daily-digest'),
    await tk.tasks.update('daily-digest', { timeout_s: 60, alert: null }),
    await tk.tasks.pause('daily-digest'),
    await tk.tasks.resume('daily-digest'),
    await tk.tasks.trigger('daily-digest'),
    await tk.tasks.runs('daily-digest', { limit: 5 }),
    await tk.tasks.delete('daily-digest'),
    await tk.runs.get(runId),
    await tk.runs.list({ status: 'needs_attention', task_id: 'daily-digest' }),
    await tk.schedules.preview({ cron: '0 30 15 * * 1-5', timezone: 'Asia/Shanghai', from: '2026-03-06T00:00:00Z', count: 3 }),
  ];
  expect(sent.map((s) => `${s.method} ${s.url}`)).toEqual([
    'POST /v1/tasks',
    'GET /v1/tasks?tag=ops&enabled=false&limit=2&cursor=a-task',
    'GET /v1/tasks',
    'GET /v1/tasks/daily-digest',
    'PATCH /v1/tasks/daily-digest',
    'POST /v1/tasks/daily-digest/pause',
    'POST /v1/tasks/daily-digest/resume',
    'POST /v1/tasks/daily-digest/trigger',
    'GET /v1/tasks/daily-digest/runs?limit=5',
    'DELETE /v1/tasks/daily-digest',
    // The run id's slashes are percent-encoded: it is one path segment.
    'GET /v1/runs/run%2Fdaily-digest%2F2026-03-09T09%3A00%3A00.000Z',
    'GET /v1/runs?status=needs_attention&task_id=daily-digest',
    'GET /v1/schedules/preview?cron=0+30+15+*+*+1-5&timezone=Asia%2FShanghai&from=2026-03-06T00%3A00%3A00Z&count=3',
  ]);
  // Bodies only where the route takes one: the definition as given (defaults are the server's), a patch with its nulls.
  expect(sent.map((s) => s.body)).toEqual([
    { task_id: 'daily-digest', trigger: { type: 'cron', expression: '0 17 * * 1-5', timezone: 'Asia/Shanghai' }, agent: { type: 'webhook', url: 'https://a.example', prompt_template: 'go' } },
    ...Array(3).fill(undefined),
    { timeout_s: 60, alert: null },
    ...Array(8).fill(undefined),
  ]);
  expect(answers.map((a) => (a as unknown as { echoed: string }).echoed)).toEqual(sent.map((s) => s.url));
});

test('a refusal rejects with a TimekeeperApiError naming the route and carrying the problem', async () => {
  const { tk } = recording(() => 409);
  const e = (await tk.tasks.update('t1', { name: 'x' }).catch((x: unknown) => x)) as TimekeeperApiError;
  expect(e).toBeInstanceOf(TimekeeperApiError);
  expect(e).toMatchObject({ route: 'patchTask', status: 409, errorCode: 'task_deleted', detail: 'task t1 is deleted' });
  // 202 is the trigger's only success: a 200 there is not one either.
  const other = recording(() => 200).tk;
  await expect(other.tasks.trigger('t1')).rejects.toThrow(/triggerTask: HTTP 200/);
});
