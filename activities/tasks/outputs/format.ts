/** A delivered run as Markdown: the webhook `markdown` format and the `file` delivery's .md files. */
export interface RunPayload {
  run_id: string;
  task_id: string;
  task_name: string;
  scheduled_at: string;
  started_at: string;
  finished_at: string;
  attempt: number;
  status: string;
  result: unknown;
  summary: string;
}

export function markdownOf(p: RunPayload): string {
  return [`## ${p.task_name}`, '', p.summary, '', `- status: ${p.status}`, `- scheduled: ${p.scheduled_at}`, `- finished: ${p.finished_at}`, `- attempt: ${p.attempt}`, `- run: ${p.run_id}`].join('\n');
}
