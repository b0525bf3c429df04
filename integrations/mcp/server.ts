/**
 * An MCP server over a running Timekeeper, built on the official SDK: the OML intent tools
 * (log_event_requested, log_event_done, log_event_blocked, pending_intents; definitions and
 * JSON Schemas from api/intents/tools.ts) and the session tools (session_context,
 * session_append; api/sessions/tools.ts). Every call goes through the typed HTTP client
 * (api/client.ts), so the API does the validating, authorising and refusing: a refusal comes
 * back as a tool result with `isError` and the problem details, which an LLM can read and act on.
 *
 * `bin/mcp.ts` connects it to stdio.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { TimekeeperApiError, type TimekeeperClient } from '../../api/client';
import type { CreateIntentBody } from '../../api/intents/client-helpers';
import { intentTools, type ToolDefinition } from '../../api/intents/tools';
import { sessionTools } from '../../api/sessions/tools';
import { version } from '../../package.json';

type Args = Record<string, unknown>;
type TransitionBody = Parameters<TimekeeperClient['intents']['transition']>[1];
type AppendBody = Parameters<TimekeeperClient['append']>[1];
type ContextQuery = NonNullable<Parameters<TimekeeperClient['context']>[1]>;

/** Every tool the server lists, in order. */
export function timekeeperTools(): ToolDefinition[] {
  return [...intentTools(), ...sessionTools()];
}

/** A required string argument (the API checks its form; this only keeps it out of the URL when absent). */
function str(args: Args, key: string): string {
  const v = args[key];
  if (typeof v !== 'string' || v === '') throw new ToolArgumentError(`${key}: is required (a string)`);
  return v;
}

class ToolArgumentError extends Error {}

/** How each tool's arguments map onto the typed client. */
const handlers: Record<string, (tk: TimekeeperClient, a: Args) => Promise<unknown>> = {
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
};

const text = (v: unknown, isError = false): CallToolResult => ({ content: [{ type: 'text', text: JSON.stringify(v, null, 2) }], ...(isError ? { isError } : {}) });

/** Runs one tool call; API refusals and argument errors are tool errors, anything else (network) too, with its message. */
export async function callTool(tk: TimekeeperClient, name: string, args: Args): Promise<CallToolResult> {
  const handler = Object.prototype.hasOwnProperty.call(handlers, name) ? handlers[name] : undefined;
  if (!handler) throw new McpError(ErrorCode.InvalidParams, `unknown tool ${name}`);
  try {
    return text(await handler(tk, args));
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
export function createMcpServer(tk: TimekeeperClient): Server {
  const server = new Server({ name: 'timekeeper', version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  const tools: Tool[] = timekeeperTools().map((t) => ({ name: t.name, description: t.description, inputSchema: t.parameters as Tool['inputSchema'] }));
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, (req) => callTool(tk, req.params.name, req.params.arguments ?? {}));
  return server;
}

const INSTRUCTIONS = [
  'Timekeeper keeps durable intents and session timelines.',
  'At start-up call pending_intents and resume or close each one.',
  'Before substantive work call log_event_requested with a unique event_id; after it, log_event_done with the result,',
  'or log_event_blocked with error and next_step when it failed.',
].join(' ');
