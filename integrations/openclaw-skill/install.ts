/**
 * Links the OpenClaw skill folder (timekeeper-intents/) into an OpenClaw skills directory,
 * as OML's install-skill does. Idempotent: a link that already points at this folder is left
 * alone. Refuses (and changes nothing) when the name is taken by a different folder, a file,
 * or a link to anywhere else.
 */
import fs from 'node:fs';
import path from 'node:path';

export const SKILL_NAME = 'timekeeper-intents';
export const SKILL_SOURCE = path.join(__dirname, SKILL_NAME);

export type InstallOutcome = { status: 'linked' | 'already-linked'; target: string; source: string };

export class SkillInstallRefused extends Error {
  override readonly name = 'SkillInstallRefused';
}

const real = (p: string): string | undefined => {
  try {
    return fs.realpathSync(p);
  } catch {
    return undefined;
  }
};

export function installSkill(skillsDir: string, source: string = SKILL_SOURCE): InstallOutcome {
  const src = path.resolve(source);
  if (!fs.statSync(src).isDirectory() || !fs.existsSync(path.join(src, 'SKILL.md'))) throw new Error(`${src} is not a skill folder (no SKILL.md)`);
  const target = path.join(path.resolve(skillsDir), path.basename(src));
  let st: fs.Stats | undefined;
  try {
    st = fs.lstatSync(target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (!st) {
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.symlinkSync(src, target, 'dir');
    return { status: 'linked', target, source: src };
  }
  if (real(target) === real(src)) return { status: 'already-linked', target, source: src };
  if (st.isSymbolicLink()) throw new SkillInstallRefused(`${target} is a link to ${fs.readlinkSync(target)}, not to ${src}; remove it first to install this skill`);
  throw new SkillInstallRefused(`${target} is a different ${st.isDirectory() ? 'folder' : 'file'}; remove or rename it first to install this skill`);
}
