-- Every finished run asks which tasks listen to its outcome (lib/store/signals.ts listeners:
-- task_run:<task_id> in a delay or condition trigger), and so does every signal. Only delay
-- and condition tasks can listen, and they are few beside the crons and intervals, so a
-- partial index over just their rows replaces a scan of all of task_history per run
-- (issue 15; measured at 10,000 daily crons + 20 condition tasks: 4–9 ms → 0.2–0.35 ms).
-- The predicate is the query's own expression, so the planner matches it.
CREATE INDEX task_history_listening ON task_history (task_id) WHERE (definition->'trigger'->>'type') IN ('delay', 'condition');
