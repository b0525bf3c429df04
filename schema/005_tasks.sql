-- Scheduled agent tasks (issue 7): task definitions, their execution log and deliveries.
--
-- Everything is append-only (003's timekeeper_make_append_only): timekeeper_app may only
-- SELECT and INSERT. A task's current definition is derived from its history (the `tasks`
-- view, as 001 derives `timelines`), a run's current state from its execution log (the
-- `task_runs_current` view).

-- Every change to a task: create, update, pause, resume, delete, auto_disable, complete.
-- Each row carries the whole definition after the change, so the newest row is the task.
CREATE TABLE task_history (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  task_id     text NOT NULL CHECK (task_id ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'),
  version     integer NOT NULL CHECK (version >= 1),
  action      text NOT NULL CHECK (action IN ('create', 'update', 'pause', 'resume', 'delete', 'auto_disable', 'complete')),
  definition  jsonb NOT NULL,
  enabled     boolean NOT NULL,
  deleted     boolean NOT NULL DEFAULT false,
  reason      text CHECK (length(reason) <= 1000),
  recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- Two concurrent changes of one task collide here instead of both winning.
  UNIQUE (task_id, version),
  CHECK ((version = 1) = (action = 'create'))
);
SELECT timekeeper_make_append_only('task_history');

-- The execution log: one row per state a run reaches (running, retry, success, failed,
-- skipped, timed_out ...). A run id names one fire time of one task.
CREATE TABLE task_run_log (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id       text NOT NULL CHECK (length(run_id) BETWEEN 1 AND 300),
  task_id      text NOT NULL,
  status       text NOT NULL CHECK (status IN ('running', 'retry', 'success', 'failed', 'skipped')),
  reason       text CHECK (length(reason) <= 1000),
  trigger      text NOT NULL CHECK (trigger IN ('schedule', 'manual', 'misfire', 'backfill')),
  nominal_at   timestamptz NOT NULL,
  started_at   timestamptz,
  finished_at  timestamptz,
  lateness_ms  bigint,
  duration_ms  bigint,
  attempt      integer NOT NULL DEFAULT 0 CHECK (attempt >= 0),
  processed    integer,
  error_count  integer,
  summary      text CHECK (length(summary) <= 500),
  result       jsonb,
  needs_attention boolean NOT NULL DEFAULT false,
  recorded_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
SELECT timekeeper_make_append_only('task_run_log');
CREATE INDEX task_run_log_run ON task_run_log (run_id, id);
-- A log write retried after a worker crash (committed, but not acknowledged) is not stored twice.
CREATE UNIQUE INDEX task_run_log_once ON task_run_log (run_id, status, attempt);
CREATE INDEX task_run_log_task ON task_run_log (task_id, id);

-- What each delivery target did with a run's result; failures here are not run failures.
CREATE TABLE task_deliveries (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id      text NOT NULL,
  task_id     text NOT NULL,
  target      integer NOT NULL CHECK (target >= 0),
  type        text NOT NULL,
  ok          boolean NOT NULL,
  detail      text CHECK (length(detail) <= 1000),
  recorded_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
SELECT timekeeper_make_append_only('task_deliveries');
CREATE INDEX task_deliveries_run ON task_deliveries (run_id, id);
-- A target takes a run's result once.
CREATE UNIQUE INDEX task_deliveries_once ON task_deliveries (run_id, target) WHERE ok;

-- The newest state of every run.
CREATE VIEW task_runs_current AS
SELECT DISTINCT ON (l.run_id)
       l.*,
       (SELECT min(f.started_at) FROM task_run_log f WHERE f.run_id = l.run_id) AS first_started_at
  FROM task_run_log l
 ORDER BY l.run_id, l.id DESC;

-- Every task as of its newest history row, with its first and last change times and its
-- newest run.
CREATE VIEW tasks AS
SELECT h.task_id,
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
  FROM (SELECT DISTINCT ON (task_id) * FROM task_history ORDER BY task_id, version DESC) h
  JOIN task_history c ON c.task_id = h.task_id AND c.version = 1
  LEFT JOIN LATERAL (
        SELECT cur.* FROM task_runs_current cur
         WHERE cur.task_id = h.task_id
         ORDER BY cur.nominal_at DESC, cur.id DESC
         LIMIT 1) r ON true;

ALTER VIEW task_runs_current OWNER TO timekeeper_owner;
ALTER VIEW tasks OWNER TO timekeeper_owner;
REVOKE ALL ON task_runs_current, tasks FROM PUBLIC;
GRANT SELECT ON task_runs_current, tasks TO timekeeper_app;
