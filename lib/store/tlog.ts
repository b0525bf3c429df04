/**
 * All SQL of the transparency log (schema/017_tlog.sql): tiles, leaves, checkpoints, keys,
 * and the builder's batch (new chained records in log order → leaves, tiles, checkpoint) in
 * one transaction; and the witnessing rounds (schema/018_tlog_cosigned.sql): each checkpoint as
 * the witnesses cosigned it, and the size each witness holds.
 */
import type { Pool, PoolClient } from 'pg';
import { inTransaction } from '../db';
import { checkChainInLog, type ChainLeaf, type LogCheck, type WitnessTrust } from '../tlog/chain-check';
import { formatCheckpoint } from '../tlog/checkpoint';
import { cachingTileReader, DEFAULT_TILE_CACHE_BYTES } from '../tlog/tile-cache';
import { recordHash, runLogCanonical, runLogRecordOf, taskHistoryCanonical, taskHistoryRecordOf } from '../tlog/record-leaf';
import { extend, frontierOf, HASH_SIZE, leafHash, tileKey, tileStrips, type TileId, type TileReader } from '../tlog/tree';

const us = (col: string) => `(extract(epoch FROM ${col}) * 1000000)::bigint AS ${col}_us`;

/**
 * The tables the log covers, by their `source` number in tlog_leaves: the chain id and seq
 * columns (a record's place in the log order), the columns its leaf data is made of, and how.
 * Session events and intent transitions carry their chain hash; task history and run log rows
 * are hashed as records (lib/tlog/record-leaf.ts, schema/021).
 */
export const LOG_SOURCES = [
  { source: 0, table: 'timeline_events', chain: 'session_id', seq: 'seq', columns: 'hash', leafData: (r: Record<string, unknown>) => Buffer.from(r.hash as string, 'hex') },
  { source: 1, table: 'intent_transitions', chain: 'event_id', seq: 'seq', columns: 'hash', leafData: (r: Record<string, unknown>) => Buffer.from(r.hash as string, 'hex') },
  {
    source: 2,
    table: 'task_history',
    chain: 'task_id',
    seq: 'version',
    columns: `id, task_id, version, action, definition, enabled, deleted, reason, created_by, ${us('recorded_at')}`,
    leafData: (r: Record<string, unknown>) => recordHash(taskHistoryCanonical(taskHistoryRecordOf(r))),
  },
  {
    source: 3,
    table: 'task_run_log',
    chain: 'run_id',
    seq: 'id',
    columns: `id, run_id, task_id, status, reason, trigger, ${us('nominal_at')}, ${us('started_at')}, ${us('finished_at')}, lateness_ms, duration_ms, attempt, processed, error_count, summary, result, needs_attention, ${us('recorded_at')}`,
    leafData: (r: Record<string, unknown>) => recordHash(runLogCanonical(runLogRecordOf(r))),
  },
] as const;
export type LogSource = 0 | 1 | 2 | 3;

/** Where the builder is: the last record logged, in log order (log_xid, source, chain id, seq). */
export interface LogCursor {
  xid: bigint;
  source: number;
  chain: string;
  seq: number;
}

export interface StoredCheckpoint {
  treeSize: number;
  rootHash: Buffer;
  note: string;
  verifierKey: string;
  recordedAt: Date;
}

/** A new chained record the builder found, with its chain hash (the leaf data). */
interface PendingRecord extends LogCursor {
  hash: Buffer;
}

const BUILDER_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended('timekeeper:tlog-builder', 0))";

/** Reads whole tiles (their strips concatenated by offset); a tile with no strips is left out. */
function tileReader(db: Pool | PoolClient): TileReader {
  return async (ids: TileId[]) => {
    const out = new Map<string, Buffer>();
    if (ids.length === 0) return out;
    const { rows } = await db.query(
      `SELECT t.level, t.tile_index, t.start, t.hashes
         FROM tlog_tiles t
         JOIN unnest($1::smallint[], $2::bigint[]) AS w(level, tile_index) USING (level, tile_index)
        ORDER BY t.level, t.tile_index, t.start`,
      [ids.map((t) => t.level), ids.map((t) => t.index)],
    );
    for (const r of rows) {
      const key = tileKey({ level: Number(r.level), index: Number(r.tile_index) });
      const have = out.get(key) ?? Buffer.alloc(0);
      // Strips are written contiguously; a gap would be a broken store, not a shorter tile.
      if (have.length !== Number(r.start) * HASH_SIZE) throw new Error(`tile ${key}: strip at ${r.start} does not follow ${have.length / HASH_SIZE} hashes`);
      out.set(key, Buffer.concat([have, r.hashes as Buffer]));
    }
    return out;
  };
}

function rowToCheckpoint(r: Record<string, unknown>): StoredCheckpoint {
  return {
    treeSize: Number(r.tree_size),
    rootHash: r.root_hash as Buffer,
    note: r.note as string,
    verifierKey: r.verifier_key as string,
    recordedAt: r.recorded_at as Date,
  };
}

/** The WHERE part that selects one source's records after the cursor, in log order. */
function afterCursor(source: number, chainCol: string, seqCol: string, c: LogCursor | null, params: unknown[]): string {
  if (!c) return 'true';
  params.push(c.xid.toString());
  const x = `$${params.length}::xid8`;
  if (source < c.source) return `log_xid > ${x}`;
  if (source > c.source) return `log_xid >= ${x}`;
  params.push(c.chain, c.seq);
  return `log_xid >= ${x} AND (log_xid > ${x} OR (${chainCol} COLLATE "C", ${seqCol}) > ($${params.length - 1}::text COLLATE "C", $${params.length}::bigint))`;
}

function compareOrder(a: LogCursor, b: LogCursor): number {
  if (a.xid !== b.xid) return a.xid < b.xid ? -1 : 1;
  return a.source - b.source; // within one source the database's order stands
}

/** Signs a checkpoint body (the C2SP tlog-checkpoint text) into a signed note. */
export interface CheckpointSigner {
  verifierKey: string;
  sign(body: string): string;
}

/** The checkpoint text (C2SP tlog-checkpoint, no extension lines) the signer signs. */
export const checkpointBody = (origin: string, size: number, root: Buffer): string => formatCheckpoint({ origin, size, rootHash: root, extensions: [] });

/** One witnessing round as stored (log_cosigned_checkpoints). */
export interface WitnessingRound {
  treeSize: number;
  /** The log-signed note with the valid cosignatures the witnesses gave. */
  note: string;
  witnessCount: number;
  quorum: number;
  quorumMet: boolean;
  /** The size each witness (by key name) holds, as far as the log knows. */
  witnessSizes: Record<string, number>;
  recordedAt: Date;
}

/** A checkpoint with the cosignatures it got (none: the log-signed note as published). */
export interface ServedCheckpoint extends StoredCheckpoint {
  witnessCount: number;
  quorumMet: boolean;
}

function rowToRound(r: Record<string, unknown>): WitnessingRound {
  return {
    treeSize: Number(r.tree_size),
    note: r.note as string,
    witnessCount: Number(r.witness_count),
    quorum: Number(r.quorum),
    quorumMet: r.quorum_met as boolean,
    witnessSizes: r.witness_sizes as Record<string, number>,
    recordedAt: r.recorded_at as Date,
  };
}

const ROUND_COLUMNS = 'tree_size, note, witness_count, quorum, quorum_met, witness_sizes, recorded_at';

export interface BatchResult {
  /** Leaves added by this batch (0: nothing new, no checkpoint). */
  added: number;
  treeSize: number;
  /** The records still waiting after this batch's limit (true: run again at once). */
  more: boolean;
  checkpoint?: StoredCheckpoint;
}

export interface TlogStoreOptions {
  /** LOG_TILE_CACHE_BYTES: tiles kept in memory for proofs (lib/tlog/tile-cache.ts); 0: none. Default 64 MiB. */
  tileCacheBytes?: number;
}

export class TlogStore {
  /** Tiles for proofs, through this store's tile cache (the builder reads its own in its transaction). */
  readonly readTiles: TileReader;
  /** The largest checkpoint size seen: sizes only grow, so a size at most this one needs no query. */
  private knownSize = 0;

  constructor(
    private readonly pool: Pool,
    opts: TlogStoreOptions = {},
  ) {
    this.readTiles = cachingTileReader(tileReader(pool), opts.tileCacheBytes ?? DEFAULT_TILE_CACHE_BYTES);
  }

  /**
   * The latest checkpoint's size, or a size already seen when that is at least `atLeast` (a proof
   * against a published size needs no query then); 0 before the first checkpoint.
   */
  async publishedSize(atLeast: number): Promise<number> {
    if (atLeast <= this.knownSize) return this.knownSize;
    const { rows } = await this.pool.query('SELECT max(tree_size) AS size FROM tlog_checkpoints');
    this.knownSize = Math.max(this.knownSize, Number(rows[0].size ?? 0));
    return this.knownSize;
  }

  async latestCheckpoint(): Promise<StoredCheckpoint | null> {
    const { rows } = await this.pool.query('SELECT tree_size, root_hash, note, verifier_key, recorded_at FROM tlog_checkpoints ORDER BY tree_size DESC LIMIT 1');
    return rows[0] ? rowToCheckpoint(rows[0]) : null;
  }

  async checkpointAt(size: number): Promise<StoredCheckpoint | null> {
    const { rows } = await this.pool.query('SELECT tree_size, root_hash, note, verifier_key, recorded_at FROM tlog_checkpoints WHERE tree_size = $1', [size]);
    return rows[0] ? rowToCheckpoint(rows[0]) : null;
  }

  /** The newest witnessing round (the builder continues from its witness sizes), or null before the first. */
  async latestWitnessingRound(): Promise<WitnessingRound | null> {
    const { rows } = await this.pool.query(`SELECT ${ROUND_COLUMNS} FROM log_cosigned_checkpoints ORDER BY id DESC LIMIT 1`);
    return rows[0] ? rowToRound(rows[0]) : null;
  }

  async recordWitnessingRound(r: Omit<WitnessingRound, 'recordedAt'>): Promise<void> {
    await this.pool.query(
      'INSERT INTO log_cosigned_checkpoints (tree_size, note, witness_count, quorum, quorum_met, witness_sizes) VALUES ($1, $2, $3, $4, $5, $6::jsonb)',
      [r.treeSize, r.note, r.witnessCount, r.quorum, r.quorumMet, JSON.stringify(r.witnessSizes)],
    );
  }

  /**
   * The newest log-signed checkpoint, with the most cosignatures any round got for it (its
   * note as published when no witness cosigned it yet).
   */
  async latestServedCheckpoint(): Promise<ServedCheckpoint | null> {
    const { rows } = await this.pool.query(
      `SELECT c.tree_size, c.root_hash, c.verifier_key, c.recorded_at, coalesce(w.note, c.note) AS note,
              coalesce(w.witness_count, 0) AS witness_count, coalesce(w.quorum_met, false) AS quorum_met
         FROM (SELECT * FROM tlog_checkpoints ORDER BY tree_size DESC LIMIT 1) c
         LEFT JOIN LATERAL (SELECT note, witness_count, quorum_met FROM log_cosigned_checkpoints k
                             WHERE k.tree_size = c.tree_size AND k.witness_count > 0
                             ORDER BY k.witness_count DESC, k.id DESC LIMIT 1) w ON true`,
    );
    return rows[0] ? { ...rowToCheckpoint(rows[0]), witnessCount: Number(rows[0].witness_count), quorumMet: rows[0].quorum_met as boolean } : null;
  }

  /** The newest checkpoint whose round met the quorum, with its cosignatures; null: none yet. */
  async latestWitnessedCheckpoint(): Promise<ServedCheckpoint | null> {
    const { rows } = await this.pool.query(
      `SELECT c.tree_size, c.root_hash, c.verifier_key, k.recorded_at, k.note, k.witness_count, k.quorum_met
         FROM log_cosigned_checkpoints k JOIN tlog_checkpoints c USING (tree_size)
        WHERE k.quorum_met ORDER BY k.tree_size DESC, k.witness_count DESC, k.id DESC LIMIT 1`,
    );
    return rows[0] ? { ...rowToCheckpoint(rows[0]), witnessCount: Number(rows[0].witness_count), quorumMet: true } : null;
  }

  /**
   * The verifier key the log signs with now: the one on its newest checkpoint, or before the
   * first checkpoint the newest key a builder recorded. Not the newest row of tlog_keys alone: a
   * key's row keeps the time it was first recorded, so after a builder with another key signed
   * once (a worker started with a different LOG_SIGNING_KEY_FILE) that key stayed "newest" while
   * the original builder went on signing, and clients were handed a key the checkpoint is not
   * signed with (seen in CI: keys recorded 11:43, 11:47, 11:48; checkpoints 97-307 by the first).
   */
  async verifierKey(): Promise<string | null> {
    const { rows } = await this.pool.query(
      `SELECT COALESCE(
         (SELECT verifier_key FROM tlog_checkpoints ORDER BY tree_size DESC LIMIT 1),
         (SELECT verifier_key FROM tlog_keys ORDER BY recorded_at DESC, verifier_key LIMIT 1)) AS verifier_key`,
    );
    return (rows[0]?.verifier_key as string | undefined) ?? null;
  }

  async recordKey(verifierKey: string): Promise<void> {
    await this.pool.query('INSERT INTO tlog_keys (verifier_key) VALUES ($1) ON CONFLICT (verifier_key) DO NOTHING', [verifierKey]);
  }

  /** log_index of records of one chain, by seq (records not logged yet are absent). */
  async logIndexes(source: LogSource, chainId: string, seqs: number[]): Promise<Map<number, number>> {
    if (seqs.length === 0) return new Map();
    const { rows } = await this.pool.query('SELECT seq, log_index FROM tlog_leaves WHERE source = $1 AND chain_id = $2 AND seq = ANY($3::bigint[])', [source, chainId, seqs]);
    return new Map(rows.map((r) => [Number(r.seq), Number(r.log_index)]));
  }

  /** Every logged record of one chain, seq → log_index (for verify; a chain is read page by page elsewhere). */
  async chainLogIndexes(source: LogSource, chainId: string): Promise<Map<number, number>> {
    const { rows } = await this.pool.query('SELECT seq, log_index FROM tlog_leaves WHERE source = $1 AND chain_id = $2', [source, chainId]);
    return new Map(rows.map((r) => [Number(r.seq), Number(r.log_index)]));
  }

  /** Every record of one chain in seq order, with its leaf data (hex) and leaf index (null: not logged yet). */
  async chainLeaves(source: LogSource, chainId: string): Promise<ChainLeaf[]> {
    const s = LOG_SOURCES[source];
    const { rows } = await this.pool.query(
      `SELECT x.*, l.log_index
         FROM (SELECT ${s.chain} AS log_chain, ${s.seq} AS log_seq, ${s.columns} FROM ${s.table} WHERE ${s.chain} = $2) x
         LEFT JOIN tlog_leaves l ON l.source = $1 AND l.chain_id = x.log_chain AND l.seq = x.log_seq
        ORDER BY x.log_seq`,
      [source, chainId],
    );
    return rows.map((r) => ({ seq: Number(r.log_seq), hash: s.leafData(r).toString('hex'), logIndex: r.log_index == null ? null : Number(r.log_index) }));
  }

  /**
   * One chain checked against the checkpoint verify uses (docs/hash-chain.md §10.5): with
   * witnesses configured the newest one stored as witnessed, whose cosignatures checkChainInLog
   * counts again with the configured keys; the latest log-signed one otherwise (or while none
   * is witnessed). The checkpoint is read before the chain: a record logged after it is pending.
   */
  async checkChain(source: LogSource, chainId: string, trust: WitnessTrust): Promise<LogCheck> {
    const latest = (trust.witnessKeys.length > 0 ? await this.latestWitnessedCheckpoint() : null) ?? (await this.latestServedCheckpoint());
    return checkChainInLog(await this.chainLeaves(source, chainId), latest, this.readTiles, trust);
  }

  /**
   * One batch of the builder, in one transaction under the builder's lock: the records whose
   * transactions are older than every running one (so all of them are committed and none can
   * still appear), after the last checkpoint's cursor, in log order, at most `limit`; their
   * leaves, the tiles' new strips and the signed checkpoint.
   */
  extendBatch(origin: string, signer: CheckpointSigner, limit: number): Promise<BatchResult> {
    return inTransaction(
      this.pool,
      async (db, tx) => {
        // The horizon first, before this transaction writes (and gets an id of its own).
        const horizon = BigInt(tx.opened[1].rows[0].horizon as string);
        const last = tx.opened[2].rows[0] as Record<string, unknown> | undefined;
        const size = last ? Number(last.tree_size) : 0;
        const cursor: LogCursor | null = last
          ? { xid: BigInt(last.cursor_xid as string), source: Number(last.cursor_source), chain: last.cursor_chain as string, seq: Number(last.cursor_seq) }
          : null;
        const found: PendingRecord[][] = [];
        for (const s of LOG_SOURCES) {
          const params: unknown[] = [];
          const where = afterCursor(s.source, s.chain, s.seq, cursor, params);
          params.push(horizon.toString(), limit + 1);
          const { rows } = await db.query(
            `SELECT log_xid::text AS log_xid_text, ${s.chain} AS log_chain, ${s.seq} AS log_seq, ${s.columns} FROM ${s.table}
              WHERE ${where} AND log_xid < $${params.length - 1}::xid8
              ORDER BY log_xid, ${s.chain} COLLATE "C", ${s.seq} LIMIT $${params.length}`,
            params,
          );
          found.push(rows.map((r) => ({ xid: BigInt(r.log_xid_text as string), source: s.source, chain: r.log_chain as string, seq: Number(r.log_seq), hash: s.leafData(r) })));
        }
        const merged = mergeOrdered(found);
        const batch = merged.slice(0, limit);
        if (batch.length === 0) return { added: 0, treeSize: size, more: false };
        const read = tileReader(db);
        const grown = extend(size, await frontierOf(size, read), batch.map((r) => leafHash(r.hash)));
        const end = batch[batch.length - 1];
        const body = checkpointBody(origin, grown.size, grown.root);
        const note = signer.sign(body);
        const strips = tileStrips(grown.stored);
        await db.query(
          `INSERT INTO tlog_leaves (log_index, source, chain_id, seq)
           SELECT * FROM unnest($1::bigint[], $2::smallint[], $3::text[], $4::bigint[])`,
          [batch.map((_, i) => size + i), batch.map((r) => r.source), batch.map((r) => r.chain), batch.map((r) => r.seq)],
        );
        await db.query(
          `INSERT INTO tlog_tiles (level, tile_index, start, hashes)
           SELECT * FROM unnest($1::smallint[], $2::bigint[], $3::smallint[], $4::bytea[])`,
          [strips.map((s) => s.level), strips.map((s) => s.tile), strips.map((s) => s.offset), strips.map((s) => s.hashes)],
        );
        const { rows } = await db.query(
          `INSERT INTO tlog_checkpoints (tree_size, root_hash, note, verifier_key, cursor_xid, cursor_source, cursor_chain, cursor_seq)
           VALUES ($1, $2, $3, $4, $5::xid8, $6, $7, $8) RETURNING tree_size, root_hash, note, verifier_key, recorded_at`,
          [grown.size, grown.root, note, signer.verifierKey, end.xid.toString(), end.source, end.chain, end.seq],
        );
        return { added: batch.length, treeSize: grown.size, more: merged.length > limit, checkpoint: rowToCheckpoint(rows[0]) };
      },
      () =>
        `${BUILDER_LOCK}; SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon;
         SELECT tree_size, cursor_xid::text AS cursor_xid, cursor_source, cursor_chain, cursor_seq FROM tlog_checkpoints ORDER BY tree_size DESC LIMIT 1`,
    );
  }
}

/** Merges per-source lists (each already in log order) into one list in log order. */
function mergeOrdered(lists: PendingRecord[][]): PendingRecord[] {
  const out: PendingRecord[] = [];
  const at = lists.map(() => 0);
  for (;;) {
    let best = -1;
    for (let i = 0; i < lists.length; i++) {
      if (at[i] < lists[i].length && (best < 0 || compareOrder(lists[i][at[i]], lists[best][at[best]]) < 0)) best = i;
    }
    if (best < 0) return out;
    out.push(lists[best][at[best]++]);
  }
}

/** Reads tiles with a given pool (the bench seeds and reads without a TlogStore). */
export const tlogTileReader = (pool: Pool): TileReader => tileReader(pool);
