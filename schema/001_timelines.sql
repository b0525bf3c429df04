-- Session timelines: per-session, hash-chained, append-only event log.
--
-- Roles: the tables belong to timekeeper_owner, which cannot log in; the application
-- connects as timekeeper_app, which may only SELECT and INSERT. Nothing here is ever
-- updated or deleted: the status of a timeline is derived from its events (see the
-- `timelines` view), so even the bookkeeping needs no UPDATE privilege.

DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'timekeeper_owner') THEN
    CREATE ROLE timekeeper_owner NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'timekeeper_app') THEN
    CREATE ROLE timekeeper_app LOGIN;
  END IF;
END
$$;

CREATE TABLE timeline_sessions (
  session_id      text PRIMARY KEY
                  CHECK (session_id ~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$'),
  timeline_id     uuid NOT NULL UNIQUE,
  agent_id        text,
  channel         text,
  metadata        jsonb NOT NULL DEFAULT '{}'::jsonb,
  idle_timeout_s  integer CHECK (idle_timeout_s IS NULL OR idle_timeout_s > 0),
  workflow_id     text NOT NULL,
  created_ts      bigint NOT NULL,
  recorded_at     timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE timeline_events (
  session_id      text NOT NULL REFERENCES timeline_sessions (session_id),
  seq             bigint NOT NULL CHECK (seq >= 1),
  event_id        uuid NOT NULL UNIQUE,
  event_type      text NOT NULL CHECK (event_type ~ '^[A-Z][A-Z0-9_]{0,63}$'),
  ts              bigint NOT NULL CHECK (ts >= 0),
  content         jsonb NOT NULL,
  prev_hash       text CHECK (prev_hash ~ '^[0-9a-f]{64}$'),
  hash            text NOT NULL CHECK (hash ~ '^[0-9a-f]{64}$'),
  idempotency_key text CHECK (length(idempotency_key) BETWEEN 1 AND 200),
  workflow_id     text NOT NULL,
  run_id          text NOT NULL,
  recorded_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (session_id, seq),
  CHECK ((seq = 1) = (prev_hash IS NULL))
);

-- A retried append with the same key finds its first result instead of forking the chain.
CREATE UNIQUE INDEX timeline_events_idempotency
  ON timeline_events (session_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX timeline_events_session_ts ON timeline_events (session_id, ts);
CREATE INDEX timeline_sessions_agent ON timeline_sessions (agent_id, created_ts);
CREATE INDEX timeline_sessions_created ON timeline_sessions (created_ts, session_id);

-- The chain guard: even a faulty or malicious writer with INSERT rights cannot fork,
-- gap or reorder a chain, nor write past SESSION_END. Concurrent writers that both read
-- the same head collide on the primary key, so no lock is needed here.
CREATE FUNCTION timeline_events_guard_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  head record;
BEGIN
  SELECT e.seq, e.hash, e.event_type, e.ts INTO head
    FROM timeline_events e
   WHERE e.session_id = NEW.session_id
   ORDER BY e.seq DESC
   LIMIT 1;
  IF NOT FOUND THEN
    IF NEW.seq <> 1 OR NEW.event_type <> 'SESSION_CREATE' THEN
      RAISE EXCEPTION 'timeline %: the first event must be SESSION_CREATE with seq 1 (got % seq %)',
        NEW.session_id, NEW.event_type, NEW.seq USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
  END IF;
  IF head.event_type = 'SESSION_END' THEN
    RAISE EXCEPTION 'timeline %: archived, nothing may follow SESSION_END', NEW.session_id
      USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.seq <> head.seq + 1 THEN
    RAISE EXCEPTION 'timeline %: seq must be % (got %)', NEW.session_id, head.seq + 1, NEW.seq
      USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.prev_hash IS DISTINCT FROM head.hash THEN
    RAISE EXCEPTION 'timeline %: prev_hash must be the hash of seq %', NEW.session_id, head.seq
      USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.ts < head.ts THEN
    RAISE EXCEPTION 'timeline %: ts % is before the previous event''s ts %', NEW.session_id, NEW.ts, head.ts
      USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.event_type = 'SESSION_CREATE' THEN
    RAISE EXCEPTION 'timeline %: SESSION_CREATE may only be the first event', NEW.session_id
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END
$$;

CREATE FUNCTION timeline_forbid_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'table % is append-only: % is not allowed', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE TRIGGER timeline_events_guard BEFORE INSERT ON timeline_events
  FOR EACH ROW EXECUTE FUNCTION timeline_events_guard_insert();
CREATE TRIGGER timeline_events_no_update_delete BEFORE UPDATE OR DELETE ON timeline_events
  FOR EACH ROW EXECUTE FUNCTION timeline_forbid_change();
CREATE TRIGGER timeline_events_no_truncate BEFORE TRUNCATE ON timeline_events
  FOR EACH STATEMENT EXECUTE FUNCTION timeline_forbid_change();
CREATE TRIGGER timeline_sessions_no_update_delete BEFORE UPDATE OR DELETE ON timeline_sessions
  FOR EACH ROW EXECUTE FUNCTION timeline_forbid_change();
CREATE TRIGGER timeline_sessions_no_truncate BEFORE TRUNCATE ON timeline_sessions
  FOR EACH STATEMENT EXECUTE FUNCTION timeline_forbid_change();

-- ENABLE ALWAYS: triggers otherwise stay silent under session_replication_role = replica,
-- a well-known way to bypass them.
ALTER TABLE timeline_events ENABLE ALWAYS TRIGGER timeline_events_guard;
ALTER TABLE timeline_events ENABLE ALWAYS TRIGGER timeline_events_no_update_delete;
ALTER TABLE timeline_events ENABLE ALWAYS TRIGGER timeline_events_no_truncate;
ALTER TABLE timeline_sessions ENABLE ALWAYS TRIGGER timeline_sessions_no_update_delete;
ALTER TABLE timeline_sessions ENABLE ALWAYS TRIGGER timeline_sessions_no_truncate;

-- One row per timeline, its status derived from its last event.
CREATE VIEW timelines AS
SELECT s.session_id,
       s.timeline_id,
       s.agent_id,
       s.channel,
       s.metadata,
       s.idle_timeout_s,
       s.workflow_id,
       s.created_ts,
       CASE WHEN h.event_type = 'SESSION_END' THEN 'archived' ELSE 'open' END AS status,
       CASE WHEN h.event_type = 'SESSION_END' THEN h.ts END AS archived_ts,
       h.seq  AS head_seq,
       h.hash AS head_hash,
       h.ts   AS head_ts
  FROM timeline_sessions s
  LEFT JOIN LATERAL (
        SELECT e.seq, e.hash, e.ts, e.event_type
          FROM timeline_events e
         WHERE e.session_id = s.session_id
         ORDER BY e.seq DESC
         LIMIT 1) h ON true;

ALTER TABLE timeline_sessions OWNER TO timekeeper_owner;
ALTER TABLE timeline_events OWNER TO timekeeper_owner;
ALTER VIEW timelines OWNER TO timekeeper_owner;
ALTER FUNCTION timeline_events_guard_insert() OWNER TO timekeeper_owner;
ALTER FUNCTION timeline_forbid_change() OWNER TO timekeeper_owner;

REVOKE ALL ON timeline_sessions, timeline_events, timelines FROM PUBLIC;
GRANT SELECT, INSERT ON timeline_sessions, timeline_events TO timekeeper_app;
GRANT SELECT ON timelines TO timekeeper_app;
