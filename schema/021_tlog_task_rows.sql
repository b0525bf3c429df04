-- Task history and run log rows in the transparency log (issue 19, docs/hash-chain.md §10.1):
-- task_history and task_run_log carry no chain hash, so their leaf data is a record hash of
-- the row's columns (lib/tlog/record-leaf.ts), and they take part in the log order of 017 with
-- a log_xid of their own.
--
-- No table rewrite: a volatile default in ADD COLUMN would rewrite every existing row. The
-- column is added with a constant default, this migration's own transaction id (a "fast
-- default": stored once in the catalogue, read for every existing row), and the volatile
-- default is set afterwards, for new rows only. Every row that existed before this migration
-- thus has this migration's id: larger than every cursor any checkpoint recorded (those are
-- ids of transactions that ended before the builder's horizon, while this one was either not
-- started or still running), so the builder takes all of them, once, in the next batches.
DO $$
DECLARE mine xid8 := pg_current_xact_id();
BEGIN
  EXECUTE format('ALTER TABLE task_history ADD COLUMN log_xid xid8 NOT NULL DEFAULT %L::xid8', mine);
  EXECUTE format('ALTER TABLE task_run_log ADD COLUMN log_xid xid8 NOT NULL DEFAULT %L::xid8', mine);
END $$;
ALTER TABLE task_history ALTER COLUMN log_xid SET DEFAULT pg_current_xact_id();
ALTER TABLE task_run_log ALTER COLUMN log_xid SET DEFAULT pg_current_xact_id();
CREATE INDEX task_history_log_order ON task_history (log_xid, task_id COLLATE "C", version);
CREATE INDEX task_run_log_log_order ON task_run_log (log_xid, run_id COLLATE "C", id);

-- As 017: the app role may not pick a log_xid (a row behind the builder's horizon would stay
-- out of the log), so INSERT is granted on every column the app writes but that one.
REVOKE INSERT ON task_history FROM timekeeper_app;
GRANT INSERT (task_id, version, action, definition, enabled, deleted, reason, created_by)
  ON task_history TO timekeeper_app;
REVOKE INSERT ON task_run_log FROM timekeeper_app;
GRANT INSERT (run_id, task_id, status, reason, trigger, nominal_at, started_at, finished_at, lateness_ms, duration_ms,
              attempt, processed, error_count, summary, result, needs_attention)
  ON task_run_log TO timekeeper_app;

-- Two more sources: 2 = task_history (chain_id = task_id, seq = version), 3 = task_run_log
-- (chain_id = run_id, seq = the row's id: a run's rows have no seq of their own). NOT VALID
-- then VALIDATE: the check is added without a long lock; existing rows are all 0 or 1.
ALTER TABLE tlog_leaves DROP CONSTRAINT tlog_leaves_source_check;
ALTER TABLE tlog_leaves ADD CONSTRAINT tlog_leaves_source_check CHECK (source IN (0, 1, 2, 3)) NOT VALID;
ALTER TABLE tlog_leaves VALIDATE CONSTRAINT tlog_leaves_source_check;
