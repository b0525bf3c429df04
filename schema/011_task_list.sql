-- GET /v1/tasks at 10,000 tasks and a long run log (issue 15).
--
-- 005's views answered a task's newest state with DISTINCT ON: `tasks` took the newest history
-- row per task with a DISTINCT ON over all of task_history, and its newest run from
-- task_runs_current, itself a DISTINCT ON (run_id) over the whole execution log. A predicate on
-- task_id cannot be pushed into a DISTINCT ON (run_id), so every listed task sorted the entire
-- run log once more: the list slowed with every run ever logged.
--
-- Same columns, same meaning, written as lookups the indexes answer:
--  - a task is its creation row (version 1, a partial index in task_id order), so a page walks
--    that index and stops at its limit; its newest history row is one backward probe of the
--    (task_id, version) key;
--  - a run's current row is the one with no later row of that run (on task_run_log_run);
--  - a task's newest run is its log row with the latest fire time, the latest of those rows
--    (one run's rows share their nominal time): one probe of the new index below.
-- No derived table and no trigger: the execution log stays the only record. CREATE OR REPLACE
-- keeps the views' owner and grants. The indexes are built inside this migration's transaction
-- (not CONCURRENTLY): run-log writes wait while they build, a few seconds per million rows.

CREATE INDEX task_run_log_task_nominal ON task_run_log (task_id, nominal_at DESC, id DESC);
-- The newest runs first (GET /v1/runs) and the needs-attention queue, without sorting the log.
CREATE INDEX task_run_log_recorded ON task_run_log (recorded_at);
CREATE INDEX task_run_log_attention ON task_run_log (recorded_at) WHERE needs_attention;
-- One entry per task (its creation), in task_id order: the list's keyset walks it.
CREATE INDEX task_history_created ON task_history (task_id) WHERE version = 1;

CREATE OR REPLACE VIEW task_runs_current AS
SELECT l.*,
       (SELECT min(f.started_at) FROM task_run_log f WHERE f.run_id = l.run_id) AS first_started_at
  FROM task_run_log l
 WHERE NOT EXISTS (SELECT 1 FROM task_run_log n WHERE n.run_id = l.run_id AND n.id > l.id);

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
       r.finished_at AS last_run_finished_at
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

ANALYZE task_history;
ANALYZE task_run_log;
