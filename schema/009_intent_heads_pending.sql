-- The pending query in the order it answers, and a check and rebuild of intent_heads.
--
-- GET /api/events/pending answers the open intents oldest first. Over 006 the planner had to
-- find the open heads (a bitmap scan of intent_heads_open), hash-join them with a sequential
-- scan of all of intents, and sort: at 100,000 intents that estimate also crossed PostgreSQL's
-- JIT threshold, and compiling the plan cost more than running it (about 75 ms of 90). Two
-- things made it worse the longer a database lived:
--   * every change of status rewrites the intent's intent_heads row (the status is in the
--     partial index's predicate, so the update is never HOT), and until VACUUM each old
--     version stays in the index: 100,000 entries for 100 open heads after a bulk load;
--   * a bitmap scan never marks such dead entries as dead, so it meets them on every call.
-- Now intent_heads carries the intent's created_ts, and the partial index over the open heads
-- is ordered (created_ts, event_id): the query walks it in answer order and stops at its
-- LIMIT, and a plain index scan marks the dead entries it meets, so the next call skips them.
-- Autovacuum visits this small, hot table sooner than the default 20 % of changed rows.
--
-- intent_heads stays derived data (see 006): intent_heads_check() lists every intent whose
-- row disagrees with its last transition, and intent_heads_rebuild() rewrites the disagreeing
-- rows from intent_transitions, the append-only source of truth.

ALTER TABLE intent_heads ADD COLUMN created_ts bigint;
UPDATE intent_heads h SET created_ts = i.created_ts FROM intents i WHERE i.event_id = h.event_id;
ALTER TABLE intent_heads ALTER COLUMN created_ts SET NOT NULL;

DROP INDEX intent_heads_open;
CREATE INDEX intent_heads_pending ON intent_heads (created_ts, event_id) WHERE status IN ('requested', 'in-progress');
ALTER TABLE intent_heads SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 500, autovacuum_analyze_scale_factor = 0.02);

CREATE OR REPLACE FUNCTION intent_heads_track() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
  INSERT INTO intent_heads (event_id, seq, status, created_ts)
  SELECT NEW.event_id, NEW.seq, NEW.status, i.created_ts FROM intents i WHERE i.event_id = NEW.event_id
  ON CONFLICT (event_id) DO UPDATE SET seq = EXCLUDED.seq, status = EXCLUDED.status
   WHERE intent_heads.seq < EXCLUDED.seq;
  RETURN NULL;
END $$;

-- What intent_heads should hold for every intent, from the append-only tables alone.
CREATE FUNCTION intent_heads_expected() RETURNS TABLE (event_id text, seq bigint, status text, created_ts bigint)
LANGUAGE sql STABLE SET search_path = pg_catalog, public AS $$
  SELECT DISTINCT ON (t.event_id) t.event_id, t.seq, t.status, i.created_ts
    FROM intent_transitions t JOIN intents i ON i.event_id = t.event_id
   ORDER BY t.event_id, t.seq DESC
$$;

-- Every intent whose intent_heads row is missing, extra or differs from its last transition.
CREATE FUNCTION intent_heads_check()
RETURNS TABLE (event_id text, stored_seq bigint, stored_status text, expected_seq bigint, expected_status text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
  SELECT coalesce(e.event_id, h.event_id), h.seq, h.status, e.seq, e.status
    FROM intent_heads_expected() e
    FULL JOIN intent_heads h ON h.event_id = e.event_id
   WHERE h.event_id IS NULL OR e.event_id IS NULL
      OR (h.seq, h.status, h.created_ts) IS DISTINCT FROM (e.seq, e.status, e.created_ts)
$$;

-- Rewrites the rows intent_heads_check() reports; returns how many it changed. Safe to run
-- at any time, also by the application: it can only make the table agree with the chains. It
-- locks the table against concurrent transitions while it runs.
CREATE FUNCTION intent_heads_rebuild() RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
  changed integer := 0;
  n integer;
BEGIN
  LOCK TABLE intent_heads IN SHARE ROW EXCLUSIVE MODE;
  DELETE FROM intent_heads h WHERE NOT EXISTS (SELECT 1 FROM intents i WHERE i.event_id = h.event_id)
     OR NOT EXISTS (SELECT 1 FROM intent_transitions t WHERE t.event_id = h.event_id);
  GET DIAGNOSTICS n = ROW_COUNT;
  changed := changed + n;
  INSERT INTO intent_heads AS h (event_id, seq, status, created_ts)
  SELECT e.event_id, e.seq, e.status, e.created_ts FROM intent_heads_expected() e
  ON CONFLICT (event_id) DO UPDATE SET seq = EXCLUDED.seq, status = EXCLUDED.status, created_ts = EXCLUDED.created_ts
   WHERE (h.seq, h.status, h.created_ts) IS DISTINCT FROM (EXCLUDED.seq, EXCLUDED.status, EXCLUDED.created_ts);
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN changed + n;
END $$;

ANALYZE intent_heads;

ALTER FUNCTION intent_heads_expected() OWNER TO timekeeper_owner;
ALTER FUNCTION intent_heads_check() OWNER TO timekeeper_owner;
ALTER FUNCTION intent_heads_rebuild() OWNER TO timekeeper_owner;
REVOKE ALL ON FUNCTION intent_heads_expected() FROM PUBLIC;
REVOKE ALL ON FUNCTION intent_heads_check() FROM PUBLIC;
REVOKE ALL ON FUNCTION intent_heads_rebuild() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION intent_heads_check() TO timekeeper_app;
GRANT EXECUTE ON FUNCTION intent_heads_rebuild() TO timekeeper_app;
