/**
 * The custom search attributes Timekeeper tags its workflows with, for every capability, defined
 * once: the typed keys the clients set and the workflows upsert, and the list of names that the
 * dev server's command line and the production registration (lib/temporal.ts) register. Shared
 * platform mechanics (issue 21); sandbox-safe (only @temporalio/common), so workflows import
 * these very keys instead of building their own from the names.
 */
import { SearchAttributeType, defineSearchAttributeKey } from '@temporalio/common';

/** Sessions: find a session's workflow in the Temporal UI by `SessionId = "…"`, `AgentId`, `Channel`. */
export const SessionIdKey = defineSearchAttributeKey('SessionId', SearchAttributeType.KEYWORD);
export const AgentIdKey = defineSearchAttributeKey('AgentId', SearchAttributeType.KEYWORD);
export const ChannelKey = defineSearchAttributeKey('Channel', SearchAttributeType.KEYWORD);

/**
 * Intents: `IntentId = "REPORT-20231027"`, `Domain = "reporting"`; `IntentStatus = "blocked"` kept
 * current on every transition only with INTENT_STATUS_SEARCH_ATTRIBUTE=true (an event and a
 * visibility write per transition; the dashboard and `GET /api/events?status=` filter by state from the store).
 */
export const IntentIdKey = defineSearchAttributeKey('IntentId', SearchAttributeType.KEYWORD);
export const DomainKey = defineSearchAttributeKey('Domain', SearchAttributeType.KEYWORD);
export const IntentStatusKey = defineSearchAttributeKey('IntentStatus', SearchAttributeType.KEYWORD);

/**
 * Tasks: a task's scheduler by `TaskId = "…"`; runs by `RunStatus` (waiting, retry, failed, and
 * every change after) once they leave the plain path. Runs started since stop 38 carry no
 * TaskId (found by `WorkflowId STARTS_WITH "run/<task_id>/"`); older runs carry both.
 */
export const TaskIdKey = defineSearchAttributeKey('TaskId', SearchAttributeType.KEYWORD);
export const RunStatusKey = defineSearchAttributeKey('RunStatus', SearchAttributeType.KEYWORD);

const ALL_KEYS = [SessionIdKey, AgentIdKey, ChannelKey, IntentIdKey, DomainKey, IntentStatusKey, TaskIdKey, RunStatusKey];

/** Names of the Keyword attributes to register. */
export const SEARCH_ATTRIBUTES: readonly string[] = ALL_KEYS.filter((k) => k.type === SearchAttributeType.KEYWORD).map((k) => k.name);
