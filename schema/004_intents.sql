-- Durable agent intents (operational memory, OML-compatible).
--
-- intents:             one row per intent, written once with its first transition: the fields
--                      fixed at creation (domain, action, tags, session link, dedupe key, ttl).
-- intent_transitions:  every change of state is a new row, hash-chained per intent with the
--                      timeline's rule (docs/hash-chain.md §9). The current state is the last row.
--
-- Both tables are append-only through timekeeper_make_append_only (003): no UPDATE, DELETE or
-- TRUNCATE even for the owner; timekeeper_app may only SELECT and INSERT. Each intent's Temporal
-- workflow is the single writer of its transitions; the guard trigger below refuses anything
-- that would fork, gap or mis-link a chain all the same.

CREATE TABLE intents (
  event_id     text PRIMARY KEY CHECK (event_id ~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$'),
  domain       text NOT NULL CHECK (domain ~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$'),
  action       text NOT NULL CHECK (length(action) BETWEEN 1 AND 200),
  tags         text[] NOT NULL DEFAULT '{}' CHECK (cardinality(tags) <= 32),
  session_id   text CHECK (session_id IS NULL OR session_id ~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$'),
  dedupe_key   text CHECK (dedupe_key IS NULL OR length(dedupe_key) BETWEEN 1 AND 200),
  ttl_s        integer NOT NULL CHECK (ttl_s > 0),
  created_ts   bigint NOT NULL CHECK (created_ts >= 0),
  workflow_id  text NOT NULL,
  recorded_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE intent_transitions (
  event_id       text NOT NULL REFERENCES intents (event_id),
  seq            bigint NOT NULL CHECK (seq >= 1),
  transition_id  uuid NOT NULL UNIQUE,
  ts             bigint NOT NULL CHECK (ts >= 0),
  -- The state this row moves to; repeated from content (which the hash covers) for indexing.
  status         text NOT NULL CHECK (status IN ('requested', 'in-progress', 'done', 'blocked')),
  content        jsonb NOT NULL CHECK (content->>'to' = status),
  prev_hash      text CHECK (prev_hash ~ '^[0-9a-f]{64}$'),
  hash           text NOT NULL CHECK (hash ~ '^[0-9a-f]{64}$'),
  workflow_id    text NOT NULL,
  run_id         text NOT NULL,
  recorded_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (event_id, seq),
  CHECK ((seq = 1) = (prev_hash IS NULL))
);

-- Filters of GET /api/events and /api/stats.
CREATE INDEX intents_domain ON intents (domain, created_ts);
CREATE INDEX intents_created ON intents (created_ts, event_id);
CREATE INDEX intents_tags ON intents USING gin (tags);
CREATE INDEX intents_dedupe ON intents (dedupe_key) WHERE dedupe_key IS NOT NULL;
-- The pending query looks at open transitions only, then checks that nothing follows them.
CREATE INDEX intent_transitions_open ON intent_transitions (event_id, seq) WHERE status IN ('requested', 'in-progress');

-- The chain guard: seq 1 first, then head + 1 linked to the head's hash, ts never decreasing.
CREATE FUNCTION intent_transitions_guard_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  head record;
BEGIN
  SELECT t.seq, t.hash, t.ts INTO head
    FROM intent_transitions t
   WHERE t.event_id = NEW.event_id
   ORDER BY t.seq DESC
   LIMIT 1;
  IF NOT FOUND THEN
    IF NEW.seq <> 1 THEN
      RAISE EXCEPTION 'intent %: the first transition must have seq 1 (got %)', NEW.event_id, NEW.seq
        USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
  END IF;
  IF NEW.seq <> head.seq + 1 THEN
    RAISE EXCEPTION 'intent %: seq % does not follow the head seq %', NEW.event_id, NEW.seq, head.seq
      USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.prev_hash IS DISTINCT FROM head.hash THEN
    RAISE EXCEPTION 'intent %: prev_hash does not link to the hash of seq %', NEW.event_id, head.seq
      USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.ts < head.ts THEN
    RAISE EXCEPTION 'intent %: ts % is earlier than the head ts %', NEW.event_id, NEW.ts, head.ts
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER intent_transitions_guard BEFORE INSERT ON intent_transitions
  FOR EACH ROW EXECUTE FUNCTION intent_transitions_guard_insert();
ALTER TABLE intent_transitions ENABLE ALWAYS TRIGGER intent_transitions_guard;
ALTER FUNCTION intent_transitions_guard_insert() OWNER TO timekeeper_owner;

SELECT timekeeper_make_append_only('intents');
SELECT timekeeper_make_append_only('intent_transitions');
