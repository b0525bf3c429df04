-- The task list's default order (newest first, issue 20): creation time, then task id, both
-- descending. The `tasks` view takes created_at from the creation row (version 1), so a partial
-- index over those rows lets a page walk the index backwards from the cursor and stop at the
-- limit, instead of reading and sorting every task (011's index serves the id order).
CREATE INDEX task_history_created_newest ON task_history (recorded_at DESC, task_id DESC) WHERE version = 1;
