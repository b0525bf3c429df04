/** Every activity the worker registers, by capability. */
import type { Pool } from 'pg';
import type { SessionWriter } from '../lib/domain/sessions';
import { createSessionActivities } from './sessions';

export interface ActivityDeps {
  /** Pool connected as the SELECT/INSERT-only role. */
  pool: Pool;
  /** For activities of other capabilities that append to session timelines (through the session workflow). */
  sessions: SessionWriter;
}

export function createActivities(deps: ActivityDeps) {
  return { ...createSessionActivities(deps.pool) };
}
