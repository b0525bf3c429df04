-- The `table` delivery of scheduled tasks (issue 7): one row per run that delivered to it,
-- with the agent's whole answer and its summary in full (the execution log, task_run_log,
-- keeps the summary cut to 500 characters).
--
-- Append-only through 003's helper. The run id is unique, so a delivery retried after a
-- crash (committed, not acknowledged) or listed twice stores the run once.
CREATE TABLE task_results (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id       text NOT NULL UNIQUE CHECK (length(run_id) BETWEEN 1 AND 300),
  task_id      text NOT NULL,
  status       text NOT NULL CHECK (status IN ('success', 'failed', 'partial')),
  scheduled_at timestamptz NOT NULL,
  started_at   timestamptz NOT NULL,
  finished_at  timestamptz NOT NULL,
  attempt      integer NOT NULL CHECK (attempt >= 1),
  processed    integer,
  error_count  integer,
  summary      text NOT NULL CHECK (length(summary) <= 20000),
  result       jsonb NOT NULL,
  recorded_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
SELECT timekeeper_make_append_only('task_results');
CREATE INDEX task_results_task ON task_results (task_id, scheduled_at DESC, id DESC);

-- Follow-up tasks are found by the run that created them (GET /v1/runs/{id} lists them).
CREATE INDEX task_history_parent_run ON task_history ((definition->>'parent_run_id')) WHERE version = 1 AND definition ? 'parent_run_id';
