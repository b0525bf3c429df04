-- Who created a task (issue 22): the agent id of a task an agent scheduled for itself (through
-- the MCP / function-calling tools, or a POST /v1/tasks that names `created_by`), NULL for a
-- task an operator or a gateway created. Written once, on the task's creation row (version 1):
-- later history rows leave it NULL and the `tasks` view reads it from the creation row, so a
-- PATCH can never change who created a task. The API's agent bounds (AGENT_TASK_*) apply to
-- every task whose creation row names an agent.
ALTER TABLE task_history
  ADD COLUMN created_by text CHECK (length(created_by) BETWEEN 1 AND 200),
  ADD CONSTRAINT task_history_created_by_once CHECK (created_by IS NULL OR version = 1);
-- AGENT_TASKS_MAX counts an agent's tasks: one probe of the creation rows that name it.
CREATE INDEX task_history_created_by ON task_history (created_by) WHERE version = 1 AND created_by IS NOT NULL;

-- 011's view with one more column at the end (CREATE OR REPLACE may only append columns; it
-- keeps the view's owner and grants).
CREATE OR REPLACE VIEW tasks AS
SELECT c.task_id,
       h.version,
       h.action AS last_action,
       h.definition,
       h.enabled,
       h.deleted,
       h.reason,
       c.recorded_at AS created_at,
       h.recorded_at AS updated_at,
       r.run_id      AS last_run_id,
       r.status      AS last_run_status,
       r.nominal_at  AS last_run_nominal_at,
       r.started_at  AS last_run_started_at,
       r.finished_at AS last_run_finished_at,
       c.created_by
  FROM task_history c
 CROSS JOIN LATERAL (
        SELECT n.version, n.action, n.definition, n.enabled, n.deleted, n.reason, n.recorded_at
          FROM task_history n
         WHERE n.task_id = c.task_id
         ORDER BY n.version DESC
         LIMIT 1) h
  LEFT JOIN LATERAL (
        SELECT l.run_id, l.status, l.nominal_at, l.started_at, l.finished_at
          FROM task_run_log l
         WHERE l.task_id = c.task_id
         ORDER BY l.nominal_at DESC, l.id DESC
         LIMIT 1) r ON true
 WHERE c.version = 1;
