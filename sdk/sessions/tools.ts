/**
 * Function-calling tool definitions for a session timeline: read the session's history as
 * LLM context, and append to it. Like the intent tools (sdk/intents/tools.ts), the JSON
 * Schemas are generated from the route contracts; query values an LLM would send as numbers
 * are numbers here, with the bounds of the contract.
 */
import { z } from 'zod';
import { LIMITS } from '../../lib/domain/limits';
import { sessionId } from '../../api/contract';
import { toolParameters, type ToolDefinition } from '../tool-schema';
import { appendEvent, getContext } from '../../api/sessions/contract';

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.number().int().min(min).max(max);
const ctx = getContext.query.shape;

export function sessionTools(): ToolDefinition[] {
  return [
    {
      name: 'session_context',
      description: "Read a session's history formatted for an LLM (text and chat messages), as of now or as of a seq or time.",
      parameters: toolParameters(
        z.strictObject({
          session_id: sessionId,
          as_of_seq: int(0).optional().describe('the history up to and including this seq'),
          as_of_ts: int(0).optional().describe('the history up to this time (milliseconds since the epoch)'),
          max_events: int(1, LIMITS.pageMax).optional().describe('only the latest this many events'),
          lang: ctx.lang,
          timestamps: z.boolean().optional().describe('prefix each line with its time'),
        }),
      ),
      route: { method: 'GET', path: getContext.path },
    },
    {
      name: 'session_append',
      description: "Append an event to a session's hash-chained timeline (USER_INPUT, TOOL_CALL, TOOL_RESULT, ...); a retry with the same idempotency_key or event_id answers the stored event.",
      parameters: toolParameters(appendEvent.body.extend({ session_id: sessionId })),
      route: { method: 'POST', path: appendEvent.path },
    },
  ];
}
