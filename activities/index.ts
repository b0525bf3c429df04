/** Every activity the worker registers, by capability. */
import type { Pool } from 'pg';
import type { OccurredAtBounds, SessionWriter } from '../lib/domain/sessions';
import type { TaskSecrets } from '../lib/task-secrets';
import { createIntentActivities } from './intents';
import { createOtelActivities, type OtelActivityDeps } from './otel';
import { createSessionActivities } from './sessions';
import type { FollowUpCreator } from './tasks/outputs/follow-up';
import { createSignalActivities } from './signals';
import type { RunControl } from './tasks/run-control';
import { createTaskActivities } from './tasks';
import { createTlogActivities, type TlogDeps } from './tlog';

export interface ActivityDeps {
  /** Pool connected as the SELECT/INSERT-only role. */
  pool: Pool;
  /** For activities of other capabilities that append to session timelines (through the session workflow). */
  sessions: SessionWriter;
  /** OpenClaw's wake hook for intents re-opened by retry_after (INTENT_WAKE_URL, INTENT_WAKE_TOKEN). */
  wake?: { url?: string; token?: string };
  /** Hosts task requests may reach although private or local (OUTBOUND_ALLOW_HOSTS). Default none. */
  outboundAllowHosts?: readonly string[];
  /** Opens the HMAC secrets of stored definitions (lib/task-secrets.ts). Default: none (a sealed secret fails the call). */
  secrets?: TaskSecrets;
  /** OUTBOUND_ECHO_BODIES (activities/tasks/index.ts). Default false. */
  outboundEchoBodies?: boolean;
  /** Reads a task's secret by its environment variable name (lib/config.ts readSecret). Default: none readable. */
  secret?: (name: string) => string | undefined;
  /** The API's base URL as agents reach it, for results reported later (PUBLIC_URL). Default http://127.0.0.1:8000. */
  publicUrl?: string;
  /** Where task `file` deliveries write (ARTIFACTS_DIR). Default none: they fail, recorded. */
  artifactsDir?: string;
  /** Creates next_action follow-up tasks. Default none: follow-ups are recorded as refused. */
  followUps?: FollowUpCreator;
  /** Run starts, cancels and scheduler wakes through Temporal (worker/run-control.ts). */
  runs?: RunControl;
  /** OpenTelemetry export (activities/otel/index.ts); none: the export activity answers `disabled`. */
  otel?: OtelActivityDeps['export'];
  /** The transparency log builder's origin and signer, and its interval (activities/tlog/index.ts). Default none: the builder's activity fails. */
  tlog?: Omit<TlogDeps, 'pool'>;
  /** How far an event's occurred_at may lie from its ts (EVENT_OCCURRED_AT_MAX_PAST_S / _FUTURE_S). Default: the TUNABLE defaults. */
  occurredAt?: OccurredAtBounds;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createSessionActivities(deps.pool, { occurredAt: deps.occurredAt }),
    ...createIntentActivities(deps),
    ...createSignalActivities({ pool: deps.pool }),
    ...createOtelActivities({ pool: deps.pool, export: deps.otel }),
    ...createTlogActivities({ pool: deps.pool, ...deps.tlog }),
    ...createTaskActivities({ pool: deps.pool, sessions: deps.sessions, outboundAllowHosts: deps.outboundAllowHosts ?? [], outboundEchoBodies: deps.outboundEchoBodies, secrets: deps.secrets, secret: deps.secret ?? (() => undefined), publicUrl: deps.publicUrl ?? 'http://127.0.0.1:8000', artifactsDir: deps.artifactsDir, followUps: deps.followUps, runs: deps.runs }),
  };
}
