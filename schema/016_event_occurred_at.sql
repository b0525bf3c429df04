-- Event time (issue 20): when an event happened, as the hook or client that reported it says,
-- beside `ts`, when Timekeeper committed it. Milliseconds since the Unix epoch like `ts`, NULL
-- when the writer gave none (every event stored before this migration). `ts` stays the
-- ordering clock: occurred_at may go backwards within a session (an outbox delivering late),
-- so nothing here orders or indexes it. When present it is one of the hashed members
-- (docs/hash-chain.md §3), so old rows hash exactly as before.
--
-- A column without a default: PostgreSQL adds it without rewriting the table, and the chain
-- guard and the append-only triggers of 001/003 cover it as they cover every column.
-- timekeeper_app's table-level SELECT, INSERT grant covers the new column.
ALTER TABLE timeline_events
  ADD COLUMN occurred_at bigint CHECK (occurred_at IS NULL OR occurred_at >= 0);
