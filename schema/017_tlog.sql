-- The transparency log (issue 19, docs/hash-chain.md §10): one RFC 6962 Merkle tree per
-- instance over every chained record (session events, intent transitions), extended after the
-- fact by the log builder (workflows/tlog/builder.ts), and its signed checkpoints.
--
-- Commit order without waiting: every chained row records the id of the transaction that
-- inserted it (log_xid, pg_current_xact_id()). The builder only takes rows whose transaction is
-- older than the oldest one still running (pg_snapshot_xmin of its snapshot): those are all
-- committed or rolled back, and no row with such an id can appear any more, so nothing is
-- skipped, whatever order concurrent transactions commit in. Rows are logged in the order
-- (log_xid, source, chain id, seq). A chain's next record is inserted after the previous one
-- committed (the writers take advisory locks, which assign no transaction id, and INSERT is
-- their first write), so its log_xid is larger: every chain keeps its order in the log.
--
-- The app role may not set log_xid itself (column privileges below): a writer that could
-- would put a record behind the builder's horizon, out of the log for good.
--
-- Everything here is append-only (003's timekeeper_make_append_only).

ALTER TABLE timeline_events ADD COLUMN log_xid xid8 NOT NULL DEFAULT pg_current_xact_id();
ALTER TABLE intent_transitions ADD COLUMN log_xid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX timeline_events_log_order ON timeline_events (log_xid, session_id COLLATE "C", seq);
CREATE INDEX intent_transitions_log_order ON intent_transitions (log_xid, event_id COLLATE "C", seq);

-- INSERT on every column but log_xid (the default fills it). A later migration that adds a
-- column the app writes must grant INSERT on it too (column grants do not cover new columns).
REVOKE INSERT ON timeline_events FROM timekeeper_app;
GRANT INSERT (session_id, seq, event_id, event_type, ts, content, prev_hash, hash, idempotency_key, workflow_id, run_id, recorded_at, occurred_at)
  ON timeline_events TO timekeeper_app;
REVOKE INSERT ON intent_transitions FROM timekeeper_app;
GRANT INSERT (event_id, seq, transition_id, ts, status, content, prev_hash, hash, workflow_id, run_id, recorded_at)
  ON intent_transitions TO timekeeper_app;

-- One row per leaf: which record it is. Leaf data is that record's chain hash (32 raw bytes).
-- source: 0 = timeline_events (chain_id = session_id), 1 = intent_transitions (chain_id = event_id).
CREATE TABLE tlog_leaves (
  log_index  bigint PRIMARY KEY CHECK (log_index >= 0),
  source     smallint NOT NULL CHECK (source IN (0, 1)),
  chain_id   text NOT NULL,
  seq        bigint NOT NULL CHECK (seq >= 1),
  UNIQUE (source, chain_id, seq)
);
SELECT timekeeper_make_append_only('tlog_leaves');

-- The tree's stored hashes in C2SP tlog-tiles order (tile height 8): tile (level, tile_index)
-- holds the level-8·level node hashes tile_index·256 …; appended in strips, a strip being the
-- hashes from offset `start` on (the tile is the concatenation of its strips by start). A
-- strip is written once: a partial tile grows by new strips, never by rewriting.
CREATE TABLE tlog_tiles (
  level       smallint NOT NULL CHECK (level BETWEEN 0 AND 7),
  tile_index  bigint NOT NULL CHECK (tile_index >= 0),
  start       smallint NOT NULL CHECK (start BETWEEN 0 AND 255),
  hashes      bytea NOT NULL CHECK (octet_length(hashes) BETWEEN 32 AND 8192 AND octet_length(hashes) % 32 = 0
                                    AND start + octet_length(hashes) / 32 <= 256),
  PRIMARY KEY (level, tile_index, start)
);
SELECT timekeeper_make_append_only('tlog_tiles');

-- Every checkpoint the log published: the signed note, and where the builder was (the last
-- record logged, in log order) so that the next batch continues after it.
CREATE TABLE tlog_checkpoints (
  tree_size     bigint PRIMARY KEY CHECK (tree_size >= 1),
  root_hash     bytea NOT NULL CHECK (octet_length(root_hash) = 32),
  note          text NOT NULL,
  verifier_key  text NOT NULL,
  cursor_xid    xid8 NOT NULL,
  cursor_source smallint NOT NULL,
  cursor_chain  text NOT NULL,
  cursor_seq    bigint NOT NULL,
  recorded_at   timestamptz NOT NULL DEFAULT clock_timestamp()
);
SELECT timekeeper_make_append_only('tlog_checkpoints');

-- The verifier keys the log has signed with (GET /v1/log/key serves the newest).
CREATE TABLE tlog_keys (
  verifier_key text PRIMARY KEY,
  recorded_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
SELECT timekeeper_make_append_only('tlog_keys');
