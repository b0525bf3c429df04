/**
 * An MCP server over a running Timekeeper, built on the official SDK: the OML intent tools
 * (log_event_requested, log_event_done, log_event_blocked, pending_intents; definitions and
 * JSON Schemas from sdk/intents/tools.ts), the session tools (session_context,
 * session_append; sdk/sessions/tools.ts) and the task tools (schedule_task, list_tasks,
 * get_task, pause_task, resume_task, cancel_task, run_task_now, preview_schedule, send_signal,
 * time_now; sdk/tasks/tools.ts), all listed by sdk/tools.ts. Every call goes through the typed
 * HTTP client (sdk/client.ts), so the API does the validating, authorising and refusing (the
 * agent bounds too): a refusal comes back as a tool result with `isError` and the problem
 * details, which an LLM can read and act on. Task answers are cut to what a model needs to
 * check itself (id, trigger in words, next fire times, state): every byte is read.
 *
 * `callTool` serves function calling as well: a runtime that offers `openAiTools()`
 * (sdk/tools.ts) to its model runs the calls it gets back through it.
 *
 * `bin/mcp.ts` connects it to stdio.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { TimekeeperApiError, type TimekeeperClient } from '../../sdk/client';
import type { CreateIntentBody } from '../../sdk/intents/helpers';
import { timekeeperTools } from '../../sdk/tools';
import { version } from '../../package.json';

type Args = Record<string, unknown>;
type TransitionBody = Parameters<TimekeeperClient['intents']['transition']>[1];
type AppendBody = Parameters<TimekeeperClient['append']>[1];
type ContextQuery = NonNullable<Parameters<TimekeeperClient['context']>[1]>;

type CreateTaskBody = Parameters<TimekeeperClient['tasks']['create']>[0];
type TaskDetail = Awaited<ReturnType<TimekeeperClient['tasks']['get']>>;
type TaskView = Awaited<ReturnType<TimekeeperClient['tasks']['list']>>['tasks'][number];
type RunView = Awaited<ReturnType<TimekeeperClient['tasks']['runs']>>['runs'][number];

/** Who the calls act for: TIMEKEEPER_AGENT_ID, the `created_by` of the tasks it schedules (a key bound to an agent wins in the API). */
export interface ToolContext {
  agentId?: string;
}

/** Runs the agent's last runs a get_task shows by default. */
const LAST_RUNS = 5;

/** A required string argument (the API checks its form; this only keeps it out of the URL when absent). */
function str(args: Args, key: string): string {
  const v = args[key];
  if (typeof v !== 'string' || v === '') throw new ToolArgumentError(`${key}: is required (a string)`);
  return v;
}

class ToolArgumentError extends Error {}

/** A task as a model reads it: what it is, when it fires next, how it last went. */
const taskView = (t: TaskView | TaskDetail) => ({
  task_id: t.task_id,
  name: t.name,
  trigger_text: t.trigger_text,
  enabled: t.enabled,
  deleted: t.deleted,
  status: t.status,
  next_run: t.next_run,
  last_run: t.last_run && { status: t.last_run.status, scheduled_at: t.last_run.scheduled_at, finished_at: t.last_run.finished_at },
  created_by: t.created_by,
});
const detailView = (t: TaskDetail) => ({ ...taskView(t), next_fire_times: t.next_fire_times, ...(t.warnings ? { warnings: t.warnings } : {}) });
const runView = (r: RunView) => ({ run_id: r.run_id, status: r.status, scheduled_at: r.scheduled_at, started_at: r.started_at, finished_at: r.finished_at, lateness_ms: r.lateness_ms, reason: r.reason, summary: r.summary });

/**
 * schedule_task's arguments as POST /v1/tasks's body: `in_s` becomes an `at` trigger counted
 * from Timekeeper's clock (GET /v1/time), not this process's, which may be skewed; the
 * server's agent id is the default `created_by`.
 */
async function scheduleBody(tk: TimekeeperClient, a: Args, ctx: ToolContext): Promise<CreateTaskBody> {
  const { in_s, ...body } = a;
  if (in_s !== undefined) {
    if (body.trigger !== undefined) throw new ToolArgumentError('in_s: give either trigger or in_s, not both');
    if (typeof in_s !== 'number' || !Number.isInteger(in_s) || in_s < 1) throw new ToolArgumentError('in_s: must be a whole number of seconds, at least 1');
    const now = Date.parse((await tk.time.now()).instant);
    body.trigger = { type: 'at', at: new Date(now + in_s * 1000).toISOString() };
  } else if (body.trigger === undefined) throw new ToolArgumentError('trigger: is required (or in_s)');
  return { ...body, created_by: body.created_by ?? ctx.agentId } as CreateTaskBody;
}

/** How each tool's arguments map onto the typed client. */
const handlers: Record<string, (tk: TimekeeperClient, a: Args, ctx: ToolContext) => Promise<unknown>> = {
  // The create is always `requested`: that is what this tool records (a `status` argument is not in its schema).
  log_event_requested: (tk, a) => tk.intents.create({ ...(a as CreateIntentBody), status: 'requested' }),
  log_event_done: (tk, a) => tk.intents.transition(str(a, 'event_id'), { status: 'done', note: a.note, data: a.result_data } as TransitionBody),
  log_event_blocked: (tk, a) => tk.intents.transition(str(a, 'event_id'), { status: 'blocked', note: a.note, data: a.error_data } as TransitionBody),
  pending_intents: async (tk, a) => ({ intents: await tk.intents.pending({ older_than: a.older_than, domain: a.domain } as Parameters<TimekeeperClient['intents']['pending']>[0]) }),
  session_context: (tk, a) => {
    const { session_id: _id, timestamps, ...rest } = a;
    return tk.context(str(a, 'session_id'), { ...rest, timestamps: timestamps === undefined ? undefined : String(timestamps) } as ContextQuery);
  },
  session_append: (tk, a) => {
    const { session_id: _id, ...body } = a;
    return tk.append(str(a, 'session_id'), body as AppendBody);
  },
  schedule_task: async (tk, a, ctx) => detailView(await tk.tasks.create(await scheduleBody(tk, a, ctx))),
  list_tasks: async (tk, a) => {
    const page = await tk.tasks.list(a as Parameters<TimekeeperClient['tasks']['list']>[0]);
    return { tasks: page.tasks.map(taskView), next_cursor: page.next_cursor };
  },
  get_task: async (tk, a) => {
    const id = str(a, 'task_id');
    const n = typeof a.runs === 'number' ? a.runs : LAST_RUNS;
    const [task, runs] = await Promise.all([tk.tasks.get(id), n > 0 ? tk.tasks.runs(id, { limit: n }) : { runs: [] }]);
    return { ...detailView(task), definition: task.definition, runs: runs.runs.map(runView) };
  },
  pause_task: async (tk, a) => taskView(await tk.tasks.pause(str(a, 'task_id'))),
  resume_task: async (tk, a) => detailView(await tk.tasks.resume(str(a, 'task_id'))),
  cancel_task: async (tk, a) => taskView(await tk.tasks.delete(str(a, 'task_id'))),
  run_task_now: (tk, a) => tk.tasks.trigger(str(a, 'task_id')),
  preview_schedule: (tk, a) => tk.schedules.preview(a as Parameters<TimekeeperClient['schedules']['preview']>[0]),
  send_signal: (tk, a) => tk.signals.send(a as Parameters<TimekeeperClient['signals']['send']>[0]),
  time_now: (tk, a) => tk.time.now(a as Parameters<TimekeeperClient['time']['now']>[0]),
};

const text = (v: unknown, isError = false): CallToolResult => ({ content: [{ type: 'text', text: JSON.stringify(v, null, 2) }], ...(isError ? { isError } : {}) });

/** Runs one tool call; API refusals and argument errors are tool errors, anything else (network) too, with its message. */
export async function callTool(tk: TimekeeperClient, name: string, args: Args, ctx: ToolContext = {}): Promise<CallToolResult> {
  const handler = Object.prototype.hasOwnProperty.call(handlers, name) ? handlers[name] : undefined;
  if (!handler) throw new McpError(ErrorCode.InvalidParams, `unknown tool ${name}`);
  try {
    return text(await handler(tk, args, ctx));
  } catch (err) {
    if (err instanceof TimekeeperApiError) {
      // The whole problem (with its extensions: OML's error, current_status, allowed_next, ...) and the catalogue code.
      return text({ ...err.problem, error_code: err.errorCode }, true);
    }
    if (err instanceof ToolArgumentError) return text({ error: 'invalid_arguments', detail: err.message }, true);
    return text({ error: 'timekeeper_unreachable', detail: err instanceof Error ? err.message : String(err) }, true);
  }
}

/** The MCP server, not yet connected to a transport. */
export function createMcpServer(tk: TimekeeperClient, ctx: ToolContext = {}): Server {
  const server = new Server({ name: 'timekeeper', version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  const tools: Tool[] = timekeeperTools().map((t) => ({ name: t.name, description: t.description, inputSchema: t.parameters as Tool['inputSchema'] }));
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, (req) => callTool(tk, req.params.name, req.params.arguments ?? {}, ctx));
  return server;
}

const INSTRUCTIONS = [
  'Timekeeper keeps durable intents and session timelines.',
  'At start-up call pending_intents and resume or close each one.',
  'Before substantive work call log_event_requested with a unique event_id; after it, log_event_done with the result,',
  'or log_event_blocked with error and next_step when it failed.',
  'To act later, call time_now, then schedule_task, and check its next fire times and trigger in words.',
].join(' ');
