-- Named events for delay and condition triggers (issue 7): POST /v1/signals and the
-- outcome signals task runs emit (task_run:<task_id>).
--
-- Append-only (003's timekeeper_make_append_only): timekeeper_app may only SELECT and
-- INSERT. signal_id is the sender's idempotency id (or one the API generates): a retried
-- send finds its row instead of storing a second one, and is delivered again (schedulers
-- drop signal ids they have seen; run ids derived from the signal make runs at-most-once).
CREATE TABLE signals (
  seq           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  signal_id     text NOT NULL UNIQUE CHECK (length(signal_id) BETWEEN 1 AND 300),
  name          text NOT NULL CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$'),
  value         jsonb,
  signal_values jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(signal_values) = 'object'),
  occurred_at   timestamptz NOT NULL,
  source        text NOT NULL CHECK (source IN ('api', 'task_run')),
  recorded_at   timestamptz NOT NULL DEFAULT clock_timestamp()
);
SELECT timekeeper_make_append_only('signals');
CREATE INDEX signals_name ON signals (name, seq);

-- Runs started by the new triggers say so in the execution log.
ALTER TABLE task_run_log DROP CONSTRAINT task_run_log_trigger_check;
ALTER TABLE task_run_log ADD CONSTRAINT task_run_log_trigger_check
  CHECK (trigger IN ('schedule', 'manual', 'misfire', 'backfill', 'delay', 'condition'));
