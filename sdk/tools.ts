/**
 * Every tool an agent gets, from one source for MCP (integrations/mcp/server.ts lists them)
 * and for function calling (openAiTools: the same names, descriptions and JSON Schemas in the
 * OpenAI `tools` format). Each capability defines its own (api/<room>/tools.ts) from its
 * route contracts; this only puts them together, as api/routes.ts does for the routes.
 */
import { intentTools } from './intents/tools';
import { sessionTools } from './sessions/tools';
import { taskTools } from './tasks/tools';
import type { ToolDefinition } from './tool-schema';

export type { ToolDefinition };

/** Every tool, in the order the MCP server lists them. */
export function timekeeperTools(): ToolDefinition[] {
  return [...intentTools(), ...sessionTools(), ...taskTools()];
}

/** The same tools as OpenAI-style function definitions (chat completions `tools`). */
export function openAiTools(): { type: 'function'; function: { name: string; description: string; parameters: Record<string, unknown> } }[] {
  return timekeeperTools().map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }));
}
