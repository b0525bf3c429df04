-- One definition of "append-only", for every table that needs it.
--
-- timekeeper_make_append_only(tbl) gives a table exactly the protection that 001/002 gave
-- the timeline tables by hand:
--   * <table>_no_update_delete: BEFORE UPDATE OR DELETE FOR EACH ROW, timeline_forbid_change()
--   * <table>_no_truncate:      BEFORE TRUNCATE FOR EACH STATEMENT,  timeline_forbid_change()
--   * both ENABLE ALWAYS, so session_replication_role = replica cannot silence them
--   * owner timekeeper_owner (NOLOGIN); nothing for PUBLIC; timekeeper_app gets exactly
--     SELECT, INSERT (or only SELECT with app_may_insert => false) and nothing more.
-- Refusals raise SQLSTATE 42501 (insufficient_privilege), "table ... is append-only: ...".
--
-- A later migration creates its table and then makes it append-only in the same migration:
--
--   CREATE TABLE intent_transitions (...);
--   SELECT timekeeper_make_append_only('intent_transitions');
--
-- The argument is a regclass, so a schema-qualified name works too
-- ('other_schema.intent_transitions'). Calling it again is harmless: triggers that already
-- exist are checked, not recreated, and a same-named trigger that does anything else is an
-- error rather than being trusted. Table names are limited to 46 bytes so that
-- "<table>_no_update_delete" fits PostgreSQL's 63-byte identifiers without truncation.
--
-- Key columns should be identity columns: timekeeper_app may INSERT into those without any
-- sequence grant, whereas a serial column's sequence would need a GRANT USAGE of its own.
--
-- Only the migrator (a superuser, or a member of timekeeper_owner owning the table) calls
-- it: EXECUTE is revoked from PUBLIC, so timekeeper_app cannot.

CREATE FUNCTION timekeeper_make_append_only(tbl regclass, app_may_insert boolean DEFAULT true)
RETURNS void
LANGUAGE plpgsql
-- Resolve timeline_forbid_change() the way this migration does, whatever the caller's path.
SET search_path FROM CURRENT
AS $$
DECLARE
  forbid   constant regprocedure := 'timeline_forbid_change()'::regprocedure;
  rel      record;
  fn       record;
  t        record;
  trg_name text;
  trg      record;
BEGIN
  SELECT n.nspname, c.relname, c.relkind INTO rel
    FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
   WHERE c.oid = tbl;
  IF rel.relkind IS DISTINCT FROM 'r' THEN
    RAISE EXCEPTION 'timekeeper_make_append_only: % is not an ordinary table', tbl
      USING ERRCODE = 'wrong_object_type';
  END IF;

  SELECT n.nspname, p.proname INTO fn
    FROM pg_catalog.pg_proc p
    JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
   WHERE p.oid = forbid;

  -- tgtype bits (pg_trigger.h): ROW 1, BEFORE 2, INSERT 4, DELETE 8, UPDATE 16, TRUNCATE 32.
  FOR t IN
    SELECT *
      FROM (VALUES ('_no_update_delete', 1 | 2 | 8 | 16, 'BEFORE UPDATE OR DELETE', 'FOR EACH ROW'),
                   ('_no_truncate',      2 | 32,         'BEFORE TRUNCATE',         'FOR EACH STATEMENT'))
           AS v (suffix, tgtype, timing_events, level)
  LOOP
    trg_name := rel.relname || t.suffix;
    IF octet_length(trg_name) > 63 THEN
      RAISE EXCEPTION 'timekeeper_make_append_only: trigger name % would be truncated; use a shorter table name',
        trg_name USING ERRCODE = 'name_too_long';
    END IF;

    SELECT g.tgfoid, g.tgtype, g.tgnargs, g.tgqual, g.tgattr, g.tgisinternal INTO trg
      FROM pg_catalog.pg_trigger g
     WHERE g.tgrelid = tbl AND g.tgname = trg_name;
    IF NOT FOUND THEN
      EXECUTE format('CREATE TRIGGER %I %s ON %I.%I %s EXECUTE FUNCTION %I.%I()',
                     trg_name, t.timing_events, rel.nspname, rel.relname, t.level, fn.nspname, fn.proname);
    ELSIF trg.tgfoid <> forbid OR trg.tgtype <> t.tgtype OR trg.tgnargs <> 0 OR trg.tgqual IS NOT NULL
          OR pg_catalog.cardinality(trg.tgattr::int2[]) <> 0 OR trg.tgisinternal THEN
      RAISE EXCEPTION 'timekeeper_make_append_only: %.% already has a trigger % that is not % % EXECUTE FUNCTION %',
        rel.nspname, rel.relname, trg_name, t.timing_events, t.level, forbid
        USING ERRCODE = 'duplicate_object';
    END IF;
    EXECUTE format('ALTER TABLE %I.%I ENABLE ALWAYS TRIGGER %I', rel.nspname, rel.relname, trg_name);
  END LOOP;

  EXECUTE format('ALTER TABLE %I.%I OWNER TO timekeeper_owner', rel.nspname, rel.relname);
  EXECUTE format('REVOKE ALL ON TABLE %I.%I FROM PUBLIC', rel.nspname, rel.relname);
  -- Exactly these privileges, whatever was granted before (table and column grants alike).
  EXECUTE format('REVOKE ALL ON TABLE %I.%I FROM timekeeper_app', rel.nspname, rel.relname);
  EXECUTE format('GRANT %s ON TABLE %I.%I TO timekeeper_app',
                 CASE WHEN app_may_insert THEN 'SELECT, INSERT' ELSE 'SELECT' END, rel.nspname, rel.relname);
END
$$;

ALTER FUNCTION timekeeper_make_append_only(regclass, boolean) OWNER TO timekeeper_owner;
REVOKE ALL ON FUNCTION timekeeper_make_append_only(regclass, boolean) FROM PUBLIC;

-- The tables of 001 and 002, through the one definition. Their triggers already have these
-- names, definitions and ENABLE ALWAYS, their owner and grants already match: a no-op in
-- effect, and proof that the hand-written protection is the same as the helper's (a
-- differing same-named trigger would fail this migration).
SELECT timekeeper_make_append_only('timeline_sessions');
SELECT timekeeper_make_append_only('timeline_events');
-- The instance row is written by migration 002 only: the application may read it, not add one.
SELECT timekeeper_make_append_only('timekeeper_instance', app_may_insert => false);
