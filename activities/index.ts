/** Every activity the worker registers, by capability. */
import type { Pool } from 'pg';
import { createSessionActivities } from './sessions';

export interface ActivityDeps {
  /** Pool connected as the SELECT/INSERT-only role. */
  pool: Pool;
}

export function createActivities(deps: ActivityDeps) {
  return { ...createSessionActivities(deps.pool) };
}
