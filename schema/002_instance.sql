-- The identity of this event database. Session workflows carry it, and the writer refuses
-- to write a session into any other database: a worker pointed at the wrong database
-- (or a stray worker polling the same task queue) must not scatter a chain across two.
CREATE TABLE timekeeper_instance (
  instance_id uuid PRIMARY KEY,
  created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
  singleton   boolean NOT NULL DEFAULT true UNIQUE CHECK (singleton)
);
INSERT INTO timekeeper_instance (instance_id) VALUES (gen_random_uuid());

CREATE TRIGGER timekeeper_instance_no_update_delete BEFORE UPDATE OR DELETE ON timekeeper_instance
  FOR EACH ROW EXECUTE FUNCTION timeline_forbid_change();
CREATE TRIGGER timekeeper_instance_no_truncate BEFORE TRUNCATE ON timekeeper_instance
  FOR EACH STATEMENT EXECUTE FUNCTION timeline_forbid_change();
ALTER TABLE timekeeper_instance ENABLE ALWAYS TRIGGER timekeeper_instance_no_update_delete;
ALTER TABLE timekeeper_instance ENABLE ALWAYS TRIGGER timekeeper_instance_no_truncate;

ALTER TABLE timekeeper_instance OWNER TO timekeeper_owner;
REVOKE ALL ON timekeeper_instance FROM PUBLIC;
GRANT SELECT ON timekeeper_instance TO timekeeper_app;
