/**
 * The agent answer protocol (the article's schedule_invoke: task_id, status, processed,
 * errors, summary, next_action) as a zod schema, shared by the run activities (agent
 * answers) and the API contract. The TypeScript type is lib/domain/tasks.ts's AgentAnswer.
 */
import { z } from 'zod';
import type { AgentAnswer } from './tasks';

export const AgentAnswerSchema = z
  .object({
    task_id: z.string(),
    status: z.enum(['success', 'failed', 'partial']),
    processed: z.number().int().min(0),
    errors: z.array(z.unknown()),
    summary: z.string().max(20_000),
    next_action: z.string().nullable(),
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
