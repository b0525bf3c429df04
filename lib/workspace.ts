/**
 * The OML workspace files: STATE.md and the ARTIFACTS folder, read-only. Every artifact
 * path is resolved inside the folder's real path and checked again after following links,
 * so no `..`, absolute path, encoded separator or symbolic link can reach anything outside
 * it. Markdown is rendered with `marked` and sanitised with `sanitize-html` (no scripts,
 * event handlers or javascript: links survive).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { marked } from 'marked';
import sanitizeHtml from 'sanitize-html';
import { DomainError, ErrorCode } from './domain/errors';
import { LIMITS } from './domain/limits';

export const isMarkdown = (name: string): boolean => /\.(md|markdown)$/i.test(name);

export function renderMarkdown(raw: string): string {
  const html = marked.parse(raw, { async: false, gfm: true });
  return sanitizeHtml(html, {
    allowedTags: sanitizeHtml.defaults.allowedTags.concat(['img', 'h1', 'h2', 'del', 'input']),
    allowedAttributes: { ...sanitizeHtml.defaults.allowedAttributes, input: ['type', 'checked', 'disabled'], code: ['class'] },
    allowedSchemes: ['http', 'https', 'mailto'],
  });
}

export interface WorkspaceFile {
  name: string;
  size: number;
  modified: string;
  markdown: boolean;
}

const notFound = (name: string) => DomainError.field(ErrorCode.NotFound, 'filename', 'no such artifact').withMessage(`artifact ${JSON.stringify(name)} not found`);

/** A file name is one path segment: no separators, no NUL, not . or .. (anything else is looked up, and contained). */
export function artifactNameProblem(name: string): DomainError | null {
  if (name.length === 0 || name.length > 255 || /[/\\\u0000]/.test(name) || name === '.' || name === '..') {
    return DomainError.validation('filename', 'must be a single file name inside ARTIFACTS_DIR (no path separators, not . or ..)');
  }
  return null;
}

async function realDir(dir: string): Promise<string | undefined> {
  try {
    return await fs.realpath(dir);
  } catch {
    return undefined;
  }
}

const inside = (root: string, p: string) => p.startsWith(root + path.sep);

/** The real path of `name` inside `dir`, when it is a regular file there (after following links); else a 404. */
export async function resolveArtifact(dir: string, name: string): Promise<string> {
  const bad = artifactNameProblem(name);
  if (bad) throw bad;
  const root = await realDir(dir);
  if (!root) throw notFound(name);
  const candidate = path.resolve(root, name);
  if (!inside(root, candidate)) throw notFound(name);
  let real: string;
  try {
    real = await fs.realpath(candidate);
  } catch {
    throw notFound(name);
  }
  if (!inside(root, real)) throw notFound(name);
  const st = await fs.stat(real);
  if (!st.isFile()) throw notFound(name);
  return real;
}

export async function listArtifacts(dir: string): Promise<WorkspaceFile[]> {
  const root = await realDir(dir);
  if (!root) return [];
  const entries = await fs.readdir(root);
  const out: WorkspaceFile[] = [];
  for (const name of entries.sort()) {
    if (out.length >= LIMITS.artifactsListMax) break;
    try {
      const real = await resolveArtifact(root, name);
      const st = await fs.stat(real);
      out.push({ name, size: st.size, modified: st.mtime.toISOString(), markdown: isMarkdown(name) });
    } catch {
      // Folders, links that leave the folder, and files that vanished are not listed.
    }
  }
  return out;
}

/** A file's text, refusing files larger than the workspace limit. */
export async function readText(file: string, field: string): Promise<{ raw: string; size: number; modified: string }> {
  const st = await fs.stat(file);
  if (st.size > LIMITS.workspaceFileMaxBytes) throw DomainError.field(ErrorCode.TooLarge, field, `is ${st.size} bytes; the limit is ${LIMITS.workspaceFileMaxBytes}`);
  return { raw: await fs.readFile(file, 'utf8'), size: st.size, modified: st.mtime.toISOString() };
}

/** STATE.md: its text and rendering, or exists: false. */
export async function readState(file: string): Promise<{ exists: boolean; raw: string; html: string; modified: string | null }> {
  try {
    const st = await fs.stat(file);
    if (!st.isFile()) return { exists: false, raw: '', html: '', modified: null };
  } catch {
    return { exists: false, raw: '', html: '', modified: null };
  }
  const t = await readText(file, 'state');
  return { exists: true, raw: t.raw, html: renderMarkdown(t.raw), modified: t.modified };
}
