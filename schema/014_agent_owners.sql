-- Keys bound to agents (issue 16): the owner agent of intents, and the sender bounds of signals.
--
-- Sessions have carried their agent since 001 (timeline_sessions.agent_id). Tasks carry theirs
-- in the stored definition (`definition->>'agent_id'`, kept across changes; a follow-up task
-- inherits its parent's), so task_history needs no column: its reads filter on the newest
-- definition (no index: a bound key's list walks the task list as an unbound one does and
-- skips other agents' tasks).
--
-- intents.agent_id: set once with the first transition, whose hashed content records it too
-- (docs/hash-chain.md §9: only when set, so an intent without an owner hashes as before).
-- NULL: no owner, visible only to keys that are not bound to agents. Intents stored before this
-- migration have none. intents is append-only (003): adding a nullable column rewrites nothing.
ALTER TABLE intents ADD COLUMN agent_id text CHECK (agent_id IS NULL OR length(agent_id) BETWEEN 1 AND 128);
CREATE INDEX intents_agent ON intents (agent_id, created_ts) WHERE agent_id IS NOT NULL;

-- signals.agents_exact / agents_prefixes: the agent bounds of the key that sent the signal
-- (exact ids, and prefixes without their `*`). A bound key's signal is delivered to, and caught
-- up by, only tasks whose agent is within them. NULL: sent by an unbound key or by the system
-- (run outcomes), for every listening task, as before.
ALTER TABLE signals ADD COLUMN agents_exact text[];
ALTER TABLE signals ADD COLUMN agents_prefixes text[];
ALTER TABLE signals ADD CONSTRAINT signals_agents_both CHECK ((agents_exact IS NULL) = (agents_prefixes IS NULL));
