-- Scheduled-task firing without child workflows (issue 15): a scheduler no longer learns from
-- Temporal when a run it started closes, so a scheduler holding a buffer_one fire time while a
-- run is running asks to be woken when that run finishes, with one row here per run it waits
-- for. The run's final log write reads these rows and signals the scheduler (run-finished):
-- only runs somebody waits for cost a signal.
--
-- The scheduler inserts its row first and then reads whether the run is still open; the run
-- writes its finish first and then reads the rows: one of the two always sees the other, so a
-- wake is never lost (both may: the scheduler ignores a wake it no longer needs).
-- Append-only through 003's helper; rows are a few bytes per buffered fire time.
CREATE TABLE task_run_wakes (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id       text NOT NULL CHECK (length(run_id) BETWEEN 1 AND 300),
  task_id      text NOT NULL,
  recorded_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
SELECT timekeeper_make_append_only('task_run_wakes');
CREATE UNIQUE INDEX task_run_wakes_once ON task_run_wakes (run_id, task_id);

-- A task's open runs (a start logged, no finish) are read newest first at every fire time
-- that finds the task busy: only the `running` rows of the task are in this index.
CREATE INDEX task_run_log_task_started ON task_run_log (task_id, id DESC) WHERE status = 'running';
