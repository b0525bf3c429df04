/**
 * Agent bounds of an API key (issue 16, "keys bound to agents"): the agent ids a key may act
 * for, as exact ids and id prefixes (`team-b-*`). Sessions, intents and tasks carry an owner
 * agent id; a bound key sees and writes only those whose owner is within its bounds, and none
 * without an owner. An unbound key (`undefined` bounds) spans all. Pure: the API decides with
 * it per object, the stores turn it into SQL (lib/store/where.ts boundsCondition).
 */

export interface AgentBounds {
  /** Agent ids matched exactly. */
  readonly exact: readonly string[];
  /** Agent id prefixes (the entry without its trailing `*`). */
  readonly prefixes: readonly string[];
}

export const AGENT_BOUND_RULE = 'must be an agent id, or an agent id prefix ending in * (e.g. "team-b-*"), without a second * or spaces';
const ENTRY_RE = /^[^\s*]{1,200}\*?$/;

/** The bounds of a key's `agents` list, or the reason an entry breaks the rule. */
export function parseAgentBounds(entries: readonly unknown[]): AgentBounds | string {
  if (entries.length === 0) return 'must name at least one agent id or prefix (leave "agents" out for an unbound key)';
  const exact: string[] = [];
  const prefixes: string[] = [];
  for (const e of entries) {
    if (typeof e !== 'string' || !ENTRY_RE.test(e)) return `entry ${JSON.stringify(e)} ${AGENT_BOUND_RULE}`;
    if (e.endsWith('*')) prefixes.push(e.slice(0, -1));
    else exact.push(e);
  }
  return { exact, prefixes };
}

/** Whether an object owned by `agentId` is within the bounds; an unowned object only for an unbound key. */
export function withinBounds(bounds: AgentBounds | undefined, agentId: string | null | undefined): boolean {
  if (!bounds) return true;
  if (agentId === null || agentId === undefined) return false;
  return bounds.exact.includes(agentId) || bounds.prefixes.some((p) => agentId.startsWith(p));
}

/** The one agent id the bounds name (one exact id, no prefix): what a create without an agent id gets. */
export function singleAgentId(bounds: AgentBounds | undefined): string | undefined {
  return bounds && bounds.exact.length === 1 && bounds.prefixes.length === 0 ? bounds.exact[0] : undefined;
}

/** The bounds as a key's `agents` list: `["agent-a", "team-b-*"]` (parseAgentBounds' inverse). */
export const boundsEntries = (b: AgentBounds): string[] => [...b.exact, ...b.prefixes.map((p) => `${p}*`)];

/** The bounds in the words of a refusal: `agent-a, team-b-*`. */
export const describeBounds = (b: AgentBounds): string => boundsEntries(b).join(', ');
