/**
 * Function-calling tool definitions for agents, as OML describes them (log_event_requested,
 * log_event_done, log_event_blocked, plus pending_intents), with JSON Schemas generated from
 * the route contracts: a tool takes exactly what its route accepts.
 */
import { z } from 'zod';
import { toolParameters, type ToolDefinition } from '../tool-schema';
import { createIntent, intentId, pendingIntents, transitionIntent } from '../../api/intents/contract';

const patch = transitionIntent.body.shape;

export function intentTools(): ToolDefinition[] {
  return [
    {
      name: 'log_event_requested',
      description: 'Before starting any substantive work, record the intent (status requested). event_id must be unique, e.g. EMAIL-20231027-001.',
      parameters: toolParameters(createIntent.body.omit({ status: true })),
      route: { method: 'POST', path: createIntent.path },
    },
    {
      name: 'log_event_done',
      description: 'After the work succeeded, close the intent as done with its result data (e.g. a message id).',
      parameters: toolParameters(z.object({ event_id: intentId, note: patch.note, result_data: patch.data })),
      route: { method: 'PATCH', path: transitionIntent.path },
    },
    {
      name: 'log_event_blocked',
      description: 'When the work failed or cannot go on, record blocked with the root cause (error) and what to do next (next_step); retry and retry_after re-open it automatically.',
      parameters: toolParameters(
        z.object({
          event_id: intentId,
          note: patch.note,
          error_data: z.object({
            error: z.string().min(1),
            next_step: z.string().min(1),
            retry: z.boolean().optional(),
            retry_after: z.string().describe('ISO-8601 date-time with a time zone').optional(),
          }),
        }),
      ),
      route: { method: 'PATCH', path: transitionIntent.path },
    },
    {
      name: 'pending_intents',
      description: 'At start-up, list intents that were requested but never reached done or blocked, oldest first, to resume or close them.',
      parameters: toolParameters(z.object({ older_than: z.number().int().min(0).optional(), domain: pendingIntents.query.shape.domain })),
      route: { method: 'GET', path: pendingIntents.path },
    },
  ];
}
