/**
 * The OpenClaw skill: SKILL.md's front matter, and `npm run install-skill` linking the folder
 * into a skills directory (a temporary one here): idempotent, refusing a different folder, file
 * or link of the same name without touching it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { timekeeperTools } from '../../sdk/tools';
import { installSkill, SKILL_NAME, SKILL_SOURCE, SkillInstallRefused } from '../../integrations/openclaw-skill/install';

const ROOT = path.resolve(__dirname, '../..');
let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-skills-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

test('SKILL.md has OpenClaw front matter (name = folder name, description, metadata JSON) and names the calls and tools', () => {
  const text = fs.readFileSync(path.join(SKILL_SOURCE, 'SKILL.md'), 'utf8');
  const m = /^---\n([\s\S]*?)\n---\n/.exec(text);
  expect(m).not.toBeNull();
  const front = parse(m![1]) as { name: string; description: string; metadata: unknown };
  expect(front.name).toBe(SKILL_NAME);
  expect(front.description.length).toBeGreaterThan(40);
  expect(front.metadata).toEqual({ openclaw: expect.objectContaining({ requires: { bins: ['curl'] } }) });
  for (const s of ['/api/events/pending', 'POST "$TIMEKEEPER_URL/api/events"', '/status', 'log_event_requested', 'log_event_done', 'log_event_blocked', 'pending_intents', 'next_step']) {
    expect(text).toContain(s);
  }
  // Every tool the MCP server lists is named in the skill (the task tools with their REST routes).
  for (const t of timekeeperTools()) expect(text).toContain(`\`${t.name}\``);
  for (const s of ['/v1/time', 'POST /v1/tasks', 'POST /v1/signals', 'trigger_text', 'next_fire_times']) expect(text).toContain(s);
});

test('links the skill folder, and a second run changes nothing', () => {
  const skills = path.join(dir, 'nested', 'skills');
  const first = installSkill(skills);
  const target = path.join(skills, SKILL_NAME);
  expect(first).toEqual({ status: 'linked', target, source: SKILL_SOURCE });
  expect(fs.lstatSync(target).isSymbolicLink()).toBe(true);
  expect(fs.realpathSync(target)).toBe(fs.realpathSync(SKILL_SOURCE));
  expect(fs.readFileSync(path.join(target, 'SKILL.md'), 'utf8')).toContain(`name: ${SKILL_NAME}`);
  const ino = fs.lstatSync(target).ino;
  expect(installSkill(skills).status).toBe('already-linked');
  expect(fs.lstatSync(target).ino).toBe(ino);
  expect(fs.readdirSync(skills)).toEqual([SKILL_NAME]);
});

test('refuses a different folder, a file or a link elsewhere under the same name, and leaves it as it was', () => {
  const target = path.join(dir, SKILL_NAME);
  fs.mkdirSync(target);
  fs.writeFileSync(path.join(target, 'SKILL.md'), 'mine');
  expect(() => installSkill(dir)).toThrow(SkillInstallRefused);
  expect(() => installSkill(dir)).toThrow(/different folder/);
  expect(fs.readFileSync(path.join(target, 'SKILL.md'), 'utf8')).toBe('mine');
  fs.rmSync(target, { recursive: true });

  fs.writeFileSync(target, 'a file');
  expect(() => installSkill(dir)).toThrow(/different file/);
  expect(fs.readFileSync(target, 'utf8')).toBe('a file');
  fs.rmSync(target);

  const other = path.join(dir, 'other-skill');
  fs.mkdirSync(other);
  fs.symlinkSync(other, target, 'dir');
  expect(() => installSkill(dir)).toThrow(/is a link to .*other-skill/);
  expect(fs.readlinkSync(target)).toBe(other);
  fs.rmSync(target);
  // A dangling link is someone else's too.
  fs.symlinkSync(path.join(dir, 'gone'), target, 'dir');
  expect(() => installSkill(dir)).toThrow(SkillInstallRefused);
});

test('npm run install-skill reads OPENCLAW_SKILLS_DIR, is idempotent, and exits 1 on a refusal', () => {
  const env = { PATH: process.env.PATH ?? '', HOME: dir, OPENCLAW_SKILLS_DIR: path.join(dir, 'skills') };
  const run = () => spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bin/install-skill.ts')], { cwd: ROOT, env, encoding: 'utf8' });
  const a = run();
  expect(a.status).toBe(0);
  expect(a.stdout).toMatch(/^linked /);
  expect(fs.realpathSync(path.join(dir, 'skills', SKILL_NAME))).toBe(fs.realpathSync(SKILL_SOURCE));
  const b = run();
  expect(b.status).toBe(0);
  expect(b.stdout).toMatch(/^already installed/);
  // Without OPENCLAW_SKILLS_DIR: ~/.openclaw/skills (HOME is the temp folder here), where a different folder waits.
  fs.mkdirSync(path.join(dir, '.openclaw', 'skills', SKILL_NAME), { recursive: true });
  const c = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bin/install-skill.ts')], { cwd: ROOT, env: { PATH: env.PATH, HOME: dir }, encoding: 'utf8' });
  expect(c.status).toBe(1);
  expect(c.stderr).toContain(`${path.join(dir, '.openclaw', 'skills', SKILL_NAME)} is a different folder`);
  expect(execFileSync('ls', [path.join(dir, '.openclaw', 'skills', SKILL_NAME)], { encoding: 'utf8' })).toBe('');
});
