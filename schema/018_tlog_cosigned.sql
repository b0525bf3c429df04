-- Witnessing of the transparency log (issue 19, docs/hash-chain.md §11.5): every round in which
-- the log builder (activities/tlog.ts) sent a checkpoint to the configured witnesses
-- (LOG_WITNESSES) and what came back: the note with the valid cosignatures added, how many
-- witnesses cosigned, whether LOG_WITNESS_QUORUM was met, and the size each witness holds as
-- far as the log knows (a cosignature says the checkpoint's size, a 409 says the witness's own),
-- so that the next round sends each witness a consistency proof from the size it has.
--
-- A round is recorded even when no witness answered (witness_count 0): the checkpoint is still
-- published log-signed in tlog_checkpoints and the next batch retries. Several rounds may name
-- the same tree_size (a witness that was down cosigns it later); the newest row wins.
--
-- Append-only (003's timekeeper_make_append_only): a writer cannot drop a cosignature it dislikes.

CREATE TABLE log_cosigned_checkpoints (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tree_size      bigint NOT NULL REFERENCES tlog_checkpoints (tree_size),
  note           text NOT NULL,
  witness_count  integer NOT NULL CHECK (witness_count >= 0),
  quorum         integer NOT NULL CHECK (quorum >= 0),
  quorum_met     boolean NOT NULL,
  -- { "<witness key name>": <size it holds> }
  witness_sizes  jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(witness_sizes) = 'object'),
  recorded_at    timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX log_cosigned_checkpoints_witnessed ON log_cosigned_checkpoints (tree_size DESC, id DESC) WHERE quorum_met;
CREATE INDEX log_cosigned_checkpoints_size ON log_cosigned_checkpoints (tree_size DESC, id DESC);
SELECT timekeeper_make_append_only('log_cosigned_checkpoints');
