/**
 * `npm run tools:size`: the size of every tool definition a model reads on every turn (name,
 * description and JSON Schema, as the MCP server lists them and as OpenAI-style function
 * definitions), in bytes and approximate tokens (bytes / 4, the usual rule of thumb for
 * English and JSON; no tokenizer is installed on purpose: the figure is for keeping the
 * definitions small, not for billing).
 */
import { openAiTools, timekeeperTools } from '../sdk/tools';

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));
const rows = timekeeperTools().map((t) => ({ name: t.name, bytes: bytes({ name: t.name, description: t.description, inputSchema: t.parameters }) }));
const width = Math.max(...rows.map((r) => r.name.length));
for (const r of rows) console.log(`${r.name.padEnd(width)}  ${String(r.bytes).padStart(6)} B  ~${Math.round(r.bytes / 4)} tokens`);
const mcp = rows.reduce((n, r) => n + r.bytes, 0);
const openai = bytes(openAiTools());
console.log(`${'all (MCP tools/list)'.padEnd(width)}  ${String(mcp).padStart(6)} B  ~${Math.round(mcp / 4)} tokens, ${rows.length} tools`);
console.log(`${'all (OpenAI tools)'.padEnd(width)}  ${String(openai).padStart(6)} B  ~${Math.round(openai / 4)} tokens`);
