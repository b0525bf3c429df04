/**
 * What every capability's tool definitions are made of (api/<room>/tools.ts): the definition's
 * shape and a route contract's schema as a tool's JSON Schema arguments. Shared by all rooms
 * (issue 21), so sessions' and tasks' tools no longer borrow them from the intents room.
 */
import { z } from 'zod';

export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema (draft 2020-12) of the arguments. */
  parameters: Record<string, unknown>;
  /** The route the tool calls, and how its arguments map onto it. */
  route: { method: string; path: string };
}

/**
 * What a model gains nothing from, left out of tool schemas (a model reads them every turn;
 * the API still checks every rule): the ~400-character ISO pattern beside `format: date-time`,
 * and a `maximum` that is only JavaScript's largest safe integer.
 */
function compact(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(compact);
  if (v === null || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(o)) {
    if (k === 'pattern' && o.format === 'date-time') continue;
    if (k === 'maximum' && x === Number.MAX_SAFE_INTEGER) continue;
    out[k] = compact(x);
  }
  return out;
}

/** A tool's argument schema as JSON Schema (draft 2020-12, the input side), without `$schema`, compacted. */
export const toolParameters = (t: z.ZodType): Record<string, unknown> => {
  const { $schema: _s, ...rest } = z.toJSONSchema(t, { io: 'input', target: 'draft-2020-12', unrepresentable: 'any' }) as Record<string, unknown>;
  return compact(rest) as Record<string, unknown>;
};
