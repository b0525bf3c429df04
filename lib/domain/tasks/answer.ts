/**
 * The agent answer protocol (the article's schedule_invoke: task_id, status, processed,
 * errors, summary, next_action) as a zod schema, shared by the run activities (agent
 * answers) and the API contract. The TypeScript type is lib/domain/tasks/index.ts's AgentAnswer.
 */
import { z } from 'zod';
import type { AgentAnswer } from './index';

export const AgentAnswerSchema = z
  .object({
    task_id: z.string(),
    status: z.enum(['success', 'failed', 'partial']),
    processed: z.number().int().min(0),
    errors: z.array(z.unknown()),
    summary: z.string().max(20_000),
    next_action: z
      .union([
        z.string(),
        z.strictObject({
          type: z.literal('follow_up'),
          // Shape only: the definition is validated like any POST /v1/tasks body when the
          // follow-up is created, and a refusal there is recorded, not a run failure.
          task: z.record(z.string(), z.unknown()),
          delay_s: z.number().min(0).max(7 * 24 * 3600).optional(),
        }),
      ])
      .nullable()
      .describe('a note, or {"type": "follow_up", "task": {...}} to hand work to another agent'),
  })
  .meta({ id: 'AgentAnswer' });

/** The answer, or a sentence saying what is wrong with it (for the re-ask). */
export function parseAgentAnswer(text: string, taskId: string): { ok: true; answer: AgentAnswer } | { ok: false; problem: string } {
  const stripped = text.trim().replace(/^```(?:json)?\s*/i, '').replace(/\s*```$/, '');
  let value: unknown;
  try {
    value = JSON.parse(stripped);
  } catch {
    return { ok: false, problem: 'the answer is not a JSON object' };
  }
  const r = AgentAnswerSchema.safeParse(value);
  if (!r.success) return { ok: false, problem: r.error.issues.map((i) => `${i.path.join('.') || 'answer'}: ${i.message}`).join('; ') };
  if (r.data.task_id !== taskId) return { ok: false, problem: `task_id: must be "${taskId}"` };
  return { ok: true, answer: r.data as AgentAnswer };
}
