/** Prompt templates: the variables a task's prompt_template may use as {{name}}, and rendering. */

/** The variables a prompt template may use as {{name}}. */
export const TEMPLATE_VARIABLES = ['task_id', 'task_name', 'now_local', 'now_utc', 'date', 'timezone', 'scheduled_at', 'attempt', 'last_run_at', 'run_id'] as const;
export type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];
const VAR_RE = /\{\{\s*([^}]*?)\s*\}\}/g;

export function unknownTemplateVariables(template: string): string[] {
  return [...template.matchAll(VAR_RE)].map((m) => m[1]).filter((v) => !(TEMPLATE_VARIABLES as readonly string[]).includes(v));
}

export function renderTemplate(template: string, vars: Record<TemplateVariable, string>): string {
  return template.replace(VAR_RE, (_, name: string) => vars[name as TemplateVariable] ?? '');
}
