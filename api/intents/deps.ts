/** What the intent routers need: the intent client for writes, the store for reads. */
import type { Admission } from '../admission';
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import type { IntentClient } from '../../clients/intents';
import type { IntentStore } from '../../lib/store/intents';
import type { SessionStore } from '../../lib/store/sessions';
import type { TlogStore } from '../../lib/store/tlog';
import type { KeyStore } from '../auth';

export interface IntentDeps {
  intents: IntentClient;
  /** Bounds the writes this process has in flight (shared with the session routes). */
  admission: Admission;
  store: IntentStore;
  /** Sessions an intent links to, checked against a bound key's agents. */
  sessions: SessionStore;
  /** log_index of transitions (the transparency log's leaves). */
  tlog: TlogStore;
  keys: KeyStore;
  /** For /api/health. */
  pool: Pool;
  client: Client;
  /** Shown by /api/health without its password. */
  databaseUrl: string;
  readOnly: boolean;
  /** STATE_MD_PATH and ARTIFACTS_DIR. */
  stateMdPath: string;
  artifactsDir: string;
}
