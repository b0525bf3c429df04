-- The shared fire schedule (issue 15): plain cron and interval tasks (overlap skip, allow or
-- cancel_previous) no longer wake their own scheduler workflow at every fire time. Their
-- scheduler registers the task here (definition version, next fire time, cursor) and sleeps
-- until the task changes; a few fire-shard activities (workflows/tasks/fire-shard.ts) read the
-- due rows of their shard, start the runs (run/<task_id>/<nominal UTC>, REJECT_DUPLICATE, as
-- before) and move each row on to its next fire time. One wake per shard and instant, not one
-- workflow task per fire.
--
-- A shard claims due rows with FOR UPDATE SKIP LOCKED and holds them until the batch's runs
-- are started and the rows advanced, so a scheduler that takes its task out (pause, delete,
-- a new definition) waits for a fire in flight: once its DELETE or upsert returns, no run of
-- the old state can start. A row too late to fire on time is handed back (`returned`) to the
-- task's own scheduler, which applies the misfire policy and registers the task again.
--
-- Rows are kept per Temporal task queue (`queue`, the queue of the scheduler that registered
-- the task): a queue's own workers run its shards and start its runs, as they run its
-- schedulers. Two deployments (or test systems) on one database and namespace do not fire
-- each other's tasks.
--
-- Operational state, not a record: not append-only, not under any chain (the runs it starts
-- are logged in task_run_log). timekeeper_app may SELECT, INSERT, UPDATE and DELETE it.

CREATE TABLE task_fire_schedule (
  task_id       text PRIMARY KEY CHECK (task_id ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'),
  queue         text NOT NULL CHECK (queue <> ''),
  shard         integer NOT NULL CHECK (shard >= 0),
  version       integer NOT NULL CHECK (version >= 1),
  definition    jsonb NOT NULL,
  -- Null: the trigger has no fire time left.
  next_fire_ms  bigint,
  -- Fire times after this instant (exclusive) are still to come.
  cursor_ms     bigint NOT NULL,
  last_fire_ms  bigint,
  fires         bigint NOT NULL DEFAULT 0,
  returned      boolean NOT NULL DEFAULT false
);
-- A shard's next due rows, and its earliest fire time, are one index range.
CREATE INDEX task_fire_schedule_due ON task_fire_schedule (queue, shard, next_fire_ms) WHERE next_fire_ms IS NOT NULL AND NOT returned;

ALTER TABLE task_fire_schedule OWNER TO timekeeper_owner;
REVOKE ALL ON task_fire_schedule FROM PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON task_fire_schedule TO timekeeper_app;
