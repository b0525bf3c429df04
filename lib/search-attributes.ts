/**
 * The custom search attributes Timekeeper tags its workflows with, for every capability:
 * one list for the dev server's command line, the production registration
 * (lib/temporal.ts) and the typed keys the clients set.
 */
import { SearchAttributeType, defineSearchAttributeKey } from '@temporalio/common';
import { IntentSearchAttribute } from './domain/intents';
import { TASK_SEARCH_ATTRIBUTES } from './domain/tasks';

/** Sessions: find a session's workflow in the Temporal UI by `SessionId = "…"`, `AgentId`, `Channel`. */
export const SessionIdKey = defineSearchAttributeKey('SessionId', SearchAttributeType.KEYWORD);
export const AgentIdKey = defineSearchAttributeKey('AgentId', SearchAttributeType.KEYWORD);
export const ChannelKey = defineSearchAttributeKey('Channel', SearchAttributeType.KEYWORD);

/** Intents: `IntentId = "REPORT-20231027"`, `Domain = "reporting"`, `IntentStatus = "blocked"` (kept current on every transition). */
export const IntentIdKey = defineSearchAttributeKey(IntentSearchAttribute.IntentId, SearchAttributeType.KEYWORD);
export const DomainKey = defineSearchAttributeKey(IntentSearchAttribute.Domain, SearchAttributeType.KEYWORD);
export const IntentStatusKey = defineSearchAttributeKey(IntentSearchAttribute.IntentStatus, SearchAttributeType.KEYWORD);

/** Tasks: a task's scheduler and runs by `TaskId = "…"`; runs also by `RunStatus` (running, retry, success, failed). */
export const TaskIdKey = defineSearchAttributeKey(TASK_SEARCH_ATTRIBUTES.taskId, SearchAttributeType.KEYWORD);
export const RunStatusKey = defineSearchAttributeKey(TASK_SEARCH_ATTRIBUTES.runStatus, SearchAttributeType.KEYWORD);

const ALL_KEYS = [SessionIdKey, AgentIdKey, ChannelKey, IntentIdKey, DomainKey, IntentStatusKey, TaskIdKey, RunStatusKey];

/** Names of the Keyword attributes to register. */
export const SEARCH_ATTRIBUTES: readonly string[] = ALL_KEYS.filter((k) => k.type === SearchAttributeType.KEYWORD).map((k) => k.name);
