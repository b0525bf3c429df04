/** The zone a trigger's times are read in: its own for cron and condition triggers, UTC for the rest. */
import type { Trigger } from './index';

export const triggerZone = (t: Trigger): string => (t.type === 'cron' || t.type === 'condition' ? t.timezone : 'UTC');
