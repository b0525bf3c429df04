-- Worker liveness for /readyz (issue 16).
--
-- The task queue's pollers (DescribeTaskQueue) stay listed for about two minutes after a worker
-- dies, since an idle long poll lasts about a minute: /readyz stayed 200 for 121 s after the
-- only worker was killed. Each worker process instead upserts one row here every
-- LIMITS.workerHeartbeatMs (2 s) while its workers run, and deletes it when it stops cleanly;
-- /readyz counts a worker as alive while its beat is at most LIMITS.workerHeartbeatFreshMs old,
-- by the database clock on both sides.
--
-- Operational state, not a record: it is not append-only and not under any chain. timekeeper_app
-- may SELECT, INSERT, UPDATE and DELETE it, and nothing else reads it.

CREATE TABLE worker_heartbeats (
  worker_id   text PRIMARY KEY CHECK (length(worker_id) BETWEEN 1 AND 200),
  task_queue  text NOT NULL CHECK (length(task_queue) BETWEEN 1 AND 1000),
  host        text NOT NULL CHECK (length(host) <= 255),
  pid         integer NOT NULL,
  started_ts  bigint NOT NULL,
  beat_ts     bigint NOT NULL
);
CREATE INDEX worker_heartbeats_queue ON worker_heartbeats (task_queue, beat_ts DESC);

ALTER TABLE worker_heartbeats OWNER TO timekeeper_owner;
REVOKE ALL ON worker_heartbeats FROM PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON worker_heartbeats TO timekeeper_app;
