/**
 * `openclaw timekeeper status [--json]`: the outbox as its status.json has it (depth per
 * session, counters across processes, the last error), read from the folder without a running
 * Gateway. OpenClaw's `plugins list` and `plugins inspect` show manifest metadata only (a cold
 * inventory; a plugin cannot add runtime lines there), so the depth is reported by a command of
 * the plugin's own, declared in openclaw.plugin.json `cliCommands`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { defaultOutboxDir, parseConfig } from './config';
import type { OutboxStatus } from './outbox';

/** The slice of commander's Command the registrar uses (OpenClaw hands in its root program). */
export interface CliProgram {
  command(name: string): CliProgram;
  description(text: string): CliProgram;
  option(flags: string, description: string): CliProgram;
  action(fn: (opts: { json?: boolean }) => void): CliProgram;
}

/** The outbox folder the configured plugin uses (its default when the config cannot be read). */
export function outboxDirOf(pluginConfig: Record<string, unknown> | undefined): string {
  try {
    return parseConfig(pluginConfig).outboxDir;
  } catch {
    return typeof pluginConfig?.outboxDir === 'string' ? path.resolve(pluginConfig.outboxDir) : defaultOutboxDir();
  }
}

/** status.json of the folder's owner plus any other process's status-<pid>.json. */
export function readStatuses(dir: string): OutboxStatus[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((f) => /^status(-\d+)?\.json$/.test(f));
  } catch {
    return [];
  }
  const out: OutboxStatus[] = [];
  for (const f of names.sort()) {
    try {
      out.push(JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as OutboxStatus);
    } catch {
      /* being rewritten: the next call reads it */
    }
  }
  return out;
}

/** Human-readable lines for `openclaw timekeeper status`. */
export function statusLines(dir: string, statuses: OutboxStatus[]): string[] {
  if (statuses.length === 0) return [`Timekeeper outbox ${dir}: no status.json yet (nothing recorded with this folder)`];
  const lines: string[] = [];
  for (const s of statuses) {
    const sessions = Object.entries(s.pending_by_session ?? {});
    lines.push(
      `Timekeeper outbox ${s.journal}: ${s.pending} event(s) queued${sessions.length ? ` (${sessions.map(([k, n]) => `${k}: ${n}`).join(', ')})` : ''}`,
      `  since ${s.counting_since ?? '?'}: ${s.enqueued} enqueued, ${s.delivered} delivered, ${s.rejected} rejected, ${s.dropped} dropped, ${s.retries} retries (updated ${s.updated_at} by pid ${s.pid})`,
    );
    if (s.pending > 0 && s.last_error) lines.push(`  last error: ${s.last_error}`);
    if (s.last_rejection) lines.push(`  last rejection: ${s.last_rejection}`);
  }
  return lines;
}

export function registerStatusCli(program: CliProgram, pluginConfig: Record<string, unknown> | undefined): void {
  program
    .command('timekeeper')
    .description('Timekeeper plugin: the outbox of events on their way to Timekeeper')
    .command('status')
    .description('How many events wait in the outbox, per session, and what was delivered, rejected or dropped')
    .option('--json', 'print the status.json contents')
    .action((opts) => {
      const dir = outboxDirOf(pluginConfig);
      const statuses = readStatuses(dir);
      process.stdout.write(opts.json ? `${JSON.stringify({ outbox_dir: dir, statuses }, null, 2)}\n` : `${statusLines(dir, statuses).join('\n')}\n`);
    });
}
