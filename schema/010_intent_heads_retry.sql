-- The blocked intents that wait for an automatic retry, for the worker's reconcile sweep.
--
-- A blocked intent with data.retry = true and a retry_after re-opens itself as requested at
-- that time: its workflow holds the timer. If that workflow is gone (terminated by an
-- operator, or lost with Temporal's state), nothing re-opens the intent and its agent is
-- never woken, so the sweep (IntentClient.reconcileOpen) restarts those workflows too. It
-- has to find them without reading every blocked intent: intents that expired (blocked with
-- retry false) stay blocked forever and would soon outnumber the ones waiting for a retry.
--
-- intent_heads (006, 009) therefore also carries awaiting_retry: whether the intent's latest
-- transition is blocked with data.retry true and a retry_after (a string; the writer accepts
-- only ISO-8601 date-times there, domain rule blockedDataProblem). The trigger derives it from
-- the transition's content without casting anything, so it cannot fail a write. A partial
-- index holds just those heads, in the sweep's keyset order (created_ts, event_id), as
-- intent_heads_pending does for the open ones. intent_heads_check() and
-- intent_heads_rebuild() cover the new column.

ALTER TABLE intent_heads ADD COLUMN awaiting_retry boolean NOT NULL DEFAULT false;

-- The rule, once: whether a transition's status and content make its intent wait for a retry.
CREATE FUNCTION intent_awaits_retry(status text, content jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, public AS $$
  SELECT status = 'blocked'
     AND coalesce(content->'data'->'retry' = 'true'::jsonb, false)
     AND coalesce(jsonb_typeof(content->'data'->'retry_after') = 'string', false)
$$;

UPDATE intent_heads h SET awaiting_retry = true
  FROM intent_transitions t
 WHERE t.event_id = h.event_id AND t.seq = h.seq AND intent_awaits_retry(t.status, t.content);

CREATE INDEX intent_heads_retry ON intent_heads (created_ts, event_id) WHERE awaiting_retry;

CREATE OR REPLACE FUNCTION intent_heads_track() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
  INSERT INTO intent_heads (event_id, seq, status, created_ts, awaiting_retry)
  SELECT NEW.event_id, NEW.seq, NEW.status, i.created_ts, intent_awaits_retry(NEW.status, NEW.content)
    FROM intents i WHERE i.event_id = NEW.event_id
  ON CONFLICT (event_id) DO UPDATE SET seq = EXCLUDED.seq, status = EXCLUDED.status, awaiting_retry = EXCLUDED.awaiting_retry
   WHERE intent_heads.seq < EXCLUDED.seq;
  RETURN NULL;
END $$;

-- The expected rows gain the column (a changed result type: dropped and created again).
DROP FUNCTION intent_heads_expected();
CREATE FUNCTION intent_heads_expected() RETURNS TABLE (event_id text, seq bigint, status text, created_ts bigint, awaiting_retry boolean)
LANGUAGE sql STABLE SET search_path = pg_catalog, public AS $$
  SELECT DISTINCT ON (t.event_id) t.event_id, t.seq, t.status, i.created_ts, intent_awaits_retry(t.status, t.content)
    FROM intent_transitions t JOIN intents i ON i.event_id = t.event_id
   ORDER BY t.event_id, t.seq DESC
$$;

CREATE OR REPLACE FUNCTION intent_heads_check()
RETURNS TABLE (event_id text, stored_seq bigint, stored_status text, expected_seq bigint, expected_status text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
  SELECT coalesce(e.event_id, h.event_id), h.seq, h.status, e.seq, e.status
    FROM intent_heads_expected() e
    FULL JOIN intent_heads h ON h.event_id = e.event_id
   WHERE h.event_id IS NULL OR e.event_id IS NULL
      OR (h.seq, h.status, h.created_ts, h.awaiting_retry) IS DISTINCT FROM (e.seq, e.status, e.created_ts, e.awaiting_retry)
$$;

CREATE OR REPLACE FUNCTION intent_heads_rebuild() RETURNS integer
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
  INSERT INTO intent_heads AS h (event_id, seq, status, created_ts, awaiting_retry)
  SELECT e.event_id, e.seq, e.status, e.created_ts, e.awaiting_retry FROM intent_heads_expected() e
  ON CONFLICT (event_id) DO UPDATE
     SET seq = EXCLUDED.seq, status = EXCLUDED.status, created_ts = EXCLUDED.created_ts, awaiting_retry = EXCLUDED.awaiting_retry
   WHERE (h.seq, h.status, h.created_ts, h.awaiting_retry) IS DISTINCT FROM (EXCLUDED.seq, EXCLUDED.status, EXCLUDED.created_ts, EXCLUDED.awaiting_retry);
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN changed + n;
END $$;

ANALYZE intent_heads;

ALTER FUNCTION intent_awaits_retry(text, jsonb) OWNER TO timekeeper_owner;
ALTER FUNCTION intent_heads_expected() OWNER TO timekeeper_owner;
REVOKE ALL ON FUNCTION intent_awaits_retry(text, jsonb) FROM PUBLIC;
REVOKE ALL ON FUNCTION intent_heads_expected() FROM PUBLIC;
