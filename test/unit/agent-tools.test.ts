/**
 * The agent-facing pieces of issue 22 that need no services: the tool definitions (one source
 * for MCP and function calling, and their size), the agent bounds' refusals, and time_now
 * against the run time context it shares its lines with.
 */
import { openAiTools, timekeeperTools } from '../../sdk/tools';
import { agentBoundProblems, agentTaskCountProblem, NO_AGENT_BOUNDS } from '../../lib/agent-task-bounds';
import { isRunDay } from '../../lib/domain/tasks/calendars';
import { buildTimeContext, TASK_DEFAULTS, type TaskDefinition } from '../../lib/domain/tasks';
import { timeNow } from '../../lib/domain/tasks/time-now';

/** The budget of every tool definition a model reads per turn (docs/api.md gives the measured figure). */
const TOOL_BYTES_BUDGET = 16_000;

test('the OpenAI function definitions are the MCP tools, name for name, schema for schema, and all of them stay within the budget', () => {
  const tools = timekeeperTools();
  expect(openAiTools()).toEqual(tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } })));
  expect(new Set(tools.map((t) => t.name)).size).toBe(tools.length);
  const bytes = tools.reduce((n, t) => n + Buffer.byteLength(JSON.stringify({ name: t.name, description: t.description, inputSchema: t.parameters })), 0);
  expect(bytes).toBeLessThan(TOOL_BYTES_BUDGET);
  // Short and exact: no description over two sentences' worth.
  for (const t of tools) expect(t.description.length).toBeLessThanOrEqual(200);
  // No 400-character date-time pattern left in any schema (compacted: `format` says it).
  expect(JSON.stringify(tools)).not.toContain('[13579][26]');
});

const definition = (over: Partial<TaskDefinition>): TaskDefinition =>
  ({
    ...TASK_DEFAULTS,
    retry: { max_attempts: 1, backoff_seconds: [] },
    task_id: 't1',
    name: 't1',
    trigger: { type: 'interval', every_s: 600, mode: 'from_last_start' },
    agent: { type: 'webhook', url: 'http://127.0.0.1:9/a', prompt_template: 'x' },
    delivery: [],
    tags: [],
    ...over,
  }) as TaskDefinition;

test('agent bounds name the field and the variable; no bounds, no refusals', () => {
  const b = { minIntervalS: 300, maxTasksPerAgent: 2, agentTypes: ['webhook'], deliveryTypes: ['table'], hosts: ['127.0.0.1'] };
  const now = Date.parse('2026-03-09T00:00:00Z');
  expect(agentBoundProblems(definition({}), b, now)).toEqual([]);
  expect(agentBoundProblems(definition({ trigger: { type: 'interval', every_s: 299, mode: 'from_last_start' } }), b, now)).toEqual([
    { field: 'trigger.every_s', reason: expect.stringContaining('AGENT_TASK_MIN_INTERVAL_S') },
  ]);
  // A cron's shortest gap, not its first: 09:00 and 09:01 every day is a one-minute gap.
  const twice = definition({ trigger: { type: 'cron', expression: '0,1 9 * * *', timezone: 'UTC', dom_dow: 'or', tolerant: true } });
  expect(agentBoundProblems(twice, b, now)).toEqual([{ field: 'trigger.expression', reason: expect.stringContaining('every 60 s at the shortest') }]);
  const hourly = definition({ trigger: { type: 'cron', expression: '0 * * * *', timezone: 'UTC', dom_dow: 'or', tolerant: true } });
  expect(agentBoundProblems(hourly, b, now)).toEqual([]);
  const elsewhere = definition({ agent: { type: 'openclaw', url: 'https://gw.example', hooks_path: '/hooks', token_env: 'T', prompt_template: 'x', deliver: false }, delivery: [{ type: 'file', path: 'x.md', format: 'markdown' }] });
  expect(agentBoundProblems(elsewhere, b, now).map((p) => p.field)).toEqual(['agent.type', 'delivery.0.type', 'agent.url']);
  expect(agentBoundProblems(elsewhere, NO_AGENT_BOUNDS, now)).toEqual([]);
  expect(agentTaskCountProblem('a', 1, b)).toBeUndefined();
  expect(agentTaskCountProblem('a', 2, b)).toEqual({ field: 'created_by', reason: expect.stringContaining('AGENT_TASKS_MAX allows 2') });
  expect(agentTaskCountProblem('a', 99, NO_AGENT_BOUNDS)).toBeUndefined();
});

test("time_now is the run time context's first and last line, with the day from the same calendar rule", () => {
  // Saturday 2026-10-10 is a make-up working day in China (调休 for National Day).
  const t = Date.parse('2026-10-10T01:30:00Z');
  const now = timeNow(t, 'Asia/Shanghai', 'cn-workdays');
  expect(now).toMatchObject({ instant: '2026-10-10T01:30:00.000Z', local_time: '2026-10-10T09:30:00+08:00', date: '2026-10-10', weekday: 'Saturday', working_day: true, day: 'makeup_workday' });
  expect(timeNow(t, 'Asia/Shanghai', undefined)).toMatchObject({ working_day: false, day: 'weekend', calendar: null });
  const task = definition({ trigger: { type: 'cron', expression: '30 9 * * *', timezone: 'Asia/Shanghai', dom_dow: 'or', tolerant: true }, calendar: { name: 'cn-workdays', holidays: [], skip_weekends: false } });
  const ctx = buildTimeContext({ task, runId: 'r', nominalMs: t, startedMs: t, nowMs: t, attempt: 1, trigger: 'schedule' } as Parameters<typeof buildTimeContext>[0], isRunDay(task.calendar, t, 'Asia/Shanghai'));
  const lines = ctx.split('\n');
  const [first, last] = now.text.split('\n');
  expect(lines[0]).toBe(first);
  expect(lines[lines.length - 1]).toBe(last.replace('the cn-workdays calendar', "the task's calendar"));
});

test('every tool takes an object (MCP requires inputSchema.type "object" at the top)', () => {
  for (const t of timekeeperTools()) expect([t.name, t.parameters.type]).toEqual([t.name, 'object']);
});
