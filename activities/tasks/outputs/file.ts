/**
 * The `file` delivery: a run's result as one file directly under ARTIFACTS_DIR, where
 * GET /api/artifacts lists it. The name comes from the task's template with run-stable
 * variables only (lib/domain/tasks/outputs.ts), so a retried delivery writes the same file
 * with the same content; it is written to a temp file in the same folder and renamed over
 * the target, so readers see the old file or the new one, never half of one, and a name
 * that is a symbolic link is replaced, not followed. The name is checked again here with
 * the workspace's own rule (lib/workspace.ts artifactNameProblem) and against the folder's
 * real path, whatever the stored definition says.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { FILE_NAME_RE, defaultFileName, fileNameVariables, renderFileName } from '../../../lib/domain/tasks/outputs';
import type { FileDelivery, TaskDefinition } from '../../../lib/domain/tasks';
import { artifactNameProblem } from '../../../lib/workspace';
import { markdownOf, type RunPayload } from './format';

export async function writeRunFile(artifactsDir: string, target: FileDelivery, task: TaskDefinition, nominalMs: number, payload: RunPayload): Promise<string> {
  const name = renderFileName(target.path ?? defaultFileName(target.format), fileNameVariables(task, payload.run_id, nominalMs));
  const bad = artifactNameProblem(name);
  if (bad || !FILE_NAME_RE.test(name)) throw new Error(`refused file name ${JSON.stringify(name)}: ${bad?.message ?? 'not a plain file name'}`);
  await fs.mkdir(artifactsDir, { recursive: true });
  const root = await fs.realpath(artifactsDir);
  const file = path.join(root, name);
  if (path.dirname(file) !== root) throw new Error(`refused file name ${JSON.stringify(name)}: it leaves ARTIFACTS_DIR`);
  const body = target.format === 'json' ? JSON.stringify(payload, null, 2) + '\n' : markdownOf(payload) + '\n';
  const tmp = path.join(root, `.${name}.${randomUUID()}.tmp`);
  try {
    await fs.writeFile(tmp, body, { flag: 'wx', mode: 0o644 });
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
  return name;
}
