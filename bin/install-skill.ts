/**
 * `npm run install-skill`: links integrations/openclaw-skill/timekeeper-intents into the
 * OpenClaw skills directory (OPENCLAW_SKILLS_DIR, default ~/.openclaw/skills). Running it
 * again changes nothing; a different folder or link of the same name is refused (exit 1).
 */
import { openclawSkillsDir } from '../lib/config';
import { installSkill } from '../integrations/openclaw-skill/install';

try {
  const r = installSkill(openclawSkillsDir());
  console.log(r.status === 'linked' ? `linked ${r.target} → ${r.source}` : `already installed: ${r.target} → ${r.source}`);
} catch (err) {
  console.error(`install-skill: ${(err as Error).message}`);
  process.exit(1);
}
