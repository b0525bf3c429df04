/**
 * `npm run mcp`: Timekeeper's MCP server on stdio, for any MCP-capable agent. It talks to a
 * running Timekeeper over HTTP: TIMEKEEPER_URL (default http://127.0.0.1:8000) and
 * TIMEKEEPER_API_KEY (an `agent` key; unset for an open API on loopback); TIMEKEEPER_AGENT_ID
 * names the agent the tools act for (the `created_by` of the tasks it schedules, so the
 * operator's agent bounds apply to them). Logs go to stderr:
 * stdout carries the protocol.
 *
 *   { "mcpServers": { "timekeeper": { "command": "npm", "args": ["run", "--silent", "mcp"],
 *       "env": { "TIMEKEEPER_URL": "http://127.0.0.1:8000", "TIMEKEEPER_API_KEY": "…", "TIMEKEEPER_AGENT_ID": "agent-7" } } } }
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { TimekeeperClient } from '../sdk/client';
import { clientSettings } from '../lib/config';
import { LIMITS } from '../lib/domain/limits';
import { createMcpServer } from '../integrations/mcp/server';
import { McpStdinGate } from '../integrations/mcp/stdin-gate';

async function main(): Promise<void> {
  let settings: ReturnType<typeof clientSettings>;
  try {
    settings = clientSettings();
  } catch (err) {
    console.error('[timekeeper-mcp]', (err as Error).message);
    process.exit(1);
  }
  const tk = new TimekeeperClient({ baseUrl: settings.url, apiKey: settings.apiKey, timeoutMs: LIMITS.mcpRequestTimeoutMs });
  const server = createMcpServer(tk, { agentId: settings.agentId });
  // Every message through the input gate first (integrations/mcp/stdin-gate.ts).
  const transport = new StdioServerTransport(process.stdin.pipe(new McpStdinGate((m) => process.stdout.write(`${JSON.stringify(m)}\n`))), process.stdout);
  transport.onclose = () => process.exit(0);
  await server.connect(transport);
  console.error(`[timekeeper-mcp] serving on stdio, Timekeeper at ${settings.url}`);
}

void main();
