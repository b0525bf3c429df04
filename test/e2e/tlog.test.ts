/**
 * The transparency log over the real system (issue 19): records of both chains get gapless
 * log indexes, signed checkpoints cover them within seconds (waited on as a condition), and
 * the proofs the API serves verify with the verifier code (lib/tlog/verify.ts) against the
 * signed checkpoint; the session verify checks the chain against the checkpoint and names a
 * rewritten record.
 */
import { parseCheckpoint } from '../../lib/tlog/checkpoint';
import { noteVerifier, openNote } from '../../lib/tlog/note';
import { leafHash, verifyConsistency, verifyInclusion } from '../../lib/tlog/verify';
import { goTlog } from '../support/go-tlog';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { databaseInstanceId } from '../../lib/store/instance';
import { TlogStore } from '../../lib/store/tlog';
import { TaskStore } from '../../lib/store/tasks';
import { defaultLogOrigin, logSignerOf } from '../../lib/tlog/log-key';
import { startTestSystem, testEnv, testLogKeyFile, uniqueSessionId, type TestSystem, eventually, type WaitOptions } from '../support';

/** The log runs on its own clock; a failing check fails the wait. */
const LOG: WaitOptions = { timeoutMs: 60_000, errors: 'throw' };
let sys: TestSystem;

beforeAll(async () => {
  sys = await startTestSystem({ tlog: true });
});
afterAll(async () => {
  await sys?.stop();
});

async function signedCheckpoint() {
  const key = await sys.tk.log.key();
  const note = await sys.tk.log.checkpoint();
  return { key, note, ...parseCheckpoint(openNote(note, [noteVerifier(key)]).text) };
}

const b64 = (s: string) => Buffer.from(s, 'base64');

describe('transparency log', () => {
  test('session events and intent transitions get log indexes and verify against a signed checkpoint', async () => {
    const sid = uniqueSessionId('tlog');
    await sys.tk.createSession({ session_id: sid });
    // Concurrent appends and an intent's transitions: several chains and transactions at once.
    await Promise.all(Array.from({ length: 5 }, (_, i) => sys.tk.append(sid, { type: 'USER_INPUT', content: { i } })));
    const intentId = `tlog-intent-${sid}`;
    await sys.tk.intents.create({ event_id: intentId, domain: 'test', action: 'log me' });
    await sys.tk.intents.transition(intentId, { status: 'in-progress' });

    const events = await eventually('every event to have a log_index', async () => {
      const page = await sys.tk.events(sid, { limit: 100 });
      return page.events.length === 6 && page.events.every((e) => e.log_index !== null) ? page.events : undefined;
    }, LOG);
    const transitions = await eventually('both transitions to have a log_index', async () => {
      const t = (await sys.tk.intents.get(intentId)).transitions;
      return t.every((x) => x.log_index !== null) ? t : undefined;
    }, LOG);
    const records = [...events.map((e) => ({ hash: e.hash, index: e.log_index! })), ...transitions.map((t) => ({ hash: t.hash, index: t.log_index! }))];
    // Each record once; a chain's records in seq order.
    expect(new Set(records.map((r) => r.index)).size).toBe(records.length);
    for (let i = 1; i < events.length; i++) expect(events[i].log_index!).toBeGreaterThan(events[i - 1].log_index!);

    const cp = await eventually('a checkpoint covering them', async () => {
      const c = await signedCheckpoint().catch(() => undefined);
      return c && c.size > Math.max(...records.map((r) => r.index)) ? c : undefined;
    }, LOG);
    expect(cp.origin).toMatch(/^timekeeper\//);
    const goChecks: Record<string, unknown>[] = [{ op: 'parse_checkpoint', note: cp.note, log_keys: [cp.key], origin: cp.origin }];
    for (const r of records) {
      const p = await sys.tk.log.inclusion({ leaf_index: r.index, tree_size: cp.size });
      const leaf = leafHash(Buffer.from(r.hash, 'hex'));
      expect(b64(p.leaf_hash)).toEqual(leaf);
      expect(verifyInclusion(r.index, cp.size, leaf, p.hashes.map(b64), cp.rootHash)).toBe(true);
      // The same proof does not prove another record at that index.
      expect(verifyInclusion(r.index, cp.size, leafHash(Buffer.alloc(32)), p.hashes.map(b64), cp.rootHash)).toBe(false);
      goChecks.push({ op: 'check_inclusion', leaf_hash: p.leaf_hash, index: r.index, size: cp.size, root: cp.rootHash.toString('base64'), hashes: p.hashes });
    }

    // The log is gapless: leaves 0 … size-1, each one record.
    const { rows } = await sys.ownerPool.query('SELECT count(*)::int AS n, min(log_index)::int AS lo, max(log_index)::int AS hi FROM tlog_leaves WHERE log_index < $1', [cp.size]);
    expect(rows[0]).toEqual({ n: cp.size, lo: 0, hi: cp.size - 1 });

    // A later checkpoint is consistent with this one.
    await sys.tk.append(sid, { type: 'USER_INPUT', content: { later: true } });
    const next = await eventually('a larger checkpoint', async () => {
      const c = await signedCheckpoint();
      return c.size > cp.size ? c : undefined;
    }, LOG);
    const cons = await sys.tk.log.consistency({ from: cp.size, to: next.size });
    expect(verifyConsistency(cp.size, next.size, cp.rootHash, next.rootHash, cons.hashes.map(b64))).toBe(true);
    expect(verifyConsistency(cp.size, next.size, next.rootHash, next.rootHash, cons.hashes.map(b64))).toBe(false);
    goChecks.push({ op: 'check_consistency', old_root: cp.rootHash.toString('base64'), from: cp.size, to: next.size, root: next.rootHash.toString('base64'), hashes: cons.hashes });
    // The independent check: Go's sumdb/note and sumdb/tlog accept the checkpoint and every proof.
    const go = await goTlog(goChecks);
    expect(go.filter((g) => !g.ok)).toEqual([]);
    expect(go[0]).toMatchObject({ origin: cp.origin, size: cp.size, root: cp.rootHash.toString('base64') });
    // … and refuse a proof against the wrong root.
    const [wrong] = await goTlog([{ ...goChecks[1], root: next.rootHash.toString('base64') }]);
    expect(wrong.ok).toBe(false);

    // Every checkpoint is stored, each signed.
    const stored = await sys.ownerPool.query('SELECT tree_size, note FROM tlog_checkpoints WHERE tree_size IN ($1, $2) ORDER BY tree_size', [cp.size, next.size]);
    expect(stored.rows.map((r) => r.note)).toEqual([cp.note, next.note]);

    // The session's verify checks its events against the latest checkpoint.
    const v = await eventually('verify to see every event in the checkpoint', async () => {
      const r = await sys.tk.verify(sid);
      return r.log.pending === 0 ? r : undefined;
    }, LOG);
    expect(v.ok).toBe(true);
    expect(v.log.ok).toBe(true);
    expect(v.log.proven).toBe(7);
  });

  test('GET /v1/log/key names the key the newest checkpoint is signed with, even after another key was recorded later', async () => {
    const before = await eventually('a signed checkpoint', () => signedCheckpoint().catch(() => undefined), LOG);
    // Another builder's key (a worker started once with another LOG_SIGNING_KEY_FILE) recorded after ours.
    const other = logSignerOf({ logSigningKeyFile: undefined, dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'tlog-other-key-')) }, before.origin);
    await new TlogStore(sys.ownerPool).recordKey(other.verifierKey);
    expect(other.verifierKey).not.toBe(before.key);
    expect(await sys.tk.log.key()).toBe(before.key);
    // And the checkpoint served still opens with the key served.
    expect((await signedCheckpoint()).size).toBeGreaterThanOrEqual(before.size);
  });

  test('a rewritten event hash is named by verify as not the record the log committed to', async () => {
    const sid = uniqueSessionId('tlog-rw');
    await sys.tk.createSession({ session_id: sid });
    await sys.tk.append(sid, { type: 'USER_INPUT', content: { n: 1 } });
    await eventually('the session to be in a checkpoint', async () => {
      const r = await sys.tk.verify(sid);
      return r.log.proven === 2 ? r : undefined;
    }, LOG);
    // The attacker: table owner, triggers off for one transaction, the last event's hash changed.
    const db = await sys.ownerPool.connect();
    try {
      await db.query('BEGIN');
      await db.query('ALTER TABLE timeline_events DISABLE TRIGGER timeline_events_no_update_delete');
      await db.query("UPDATE timeline_events SET hash = repeat('ab', 32) WHERE session_id = $1 AND seq = 2", [sid]);
      await db.query('ALTER TABLE timeline_events ENABLE ALWAYS TRIGGER timeline_events_no_update_delete');
      await db.query('COMMIT');
    } finally {
      db.release();
    }
    const v = await sys.tk.verify(sid);
    expect(v.ok).toBe(false);
    expect(v.log.ok).toBe(false);
    expect(v.log.first_bad_seq).toBe(2);
    expect(v.log.detail).toContain('is not the record the log committed to');
  });

  test('task history and run log rows are logged, shown with their log_index, proven, and a changed row is named by verify', async () => {
    const taskId = `tlog-task-${Date.now().toString(36)}`;
    await sys.tk.tasks.create({ task_id: taskId, name: 'logged', trigger: { type: 'cron', expression: '0 3 * * *', timezone: 'UTC' }, agent: { type: 'openai', base_url: 'https://llm.example/v1', model: 'm', prompt_template: 'hi' } });
    await sys.tk.tasks.pause(taskId);
    // Run log rows written by the application role: its column grant (schema/021) lets it insert without naming log_xid.
    const runId = `run/${taskId}/2026-01-01T03:00:00.000Z`;
    const tasks = new TaskStore(sys.pool);
    const nominalMs = Date.parse('2026-01-01T03:00:00.000Z');
    await tasks.recordRun({ runId, taskId, status: 'running', trigger: 'manual', nominalMs, startedMs: nominalMs + 5, attempt: 1 });
    await tasks.recordRun({ runId, taskId, status: 'success', trigger: 'manual', nominalMs, startedMs: nominalMs + 5, finishedMs: nominalMs + 905, attempt: 1, processed: 3, summary: 'ok' });
    // … but may not pick a log_xid of its own (a row behind the builder's horizon would never be logged).
    await expect(sys.pool.query("INSERT INTO task_run_log (run_id, task_id, status, trigger, nominal_at, log_xid) VALUES ($1, $2, 'skipped', 'manual', now(), '1')", [runId, taskId])).rejects.toThrow(/permission denied/);

    const history = await eventually('both history rows to have a log_index', async () => {
      const h = (await sys.tk.tasks.get(taskId)).history;
      return h.length === 2 && h.every((x) => x.log_index !== null) ? h : undefined;
    }, LOG);
    const log = await eventually('both run log rows to have a log_index', async () => {
      const l = (await sys.tk.runs.get(runId)).log;
      return l.length === 2 && l.every((x) => x.log_index !== null) ? l : undefined;
    }, LOG);
    expect(history[1].log_index!).toBeGreaterThan(history[0].log_index!);
    expect(log[1].log_index!).toBeGreaterThan(log[0].log_index!);
    // The leaves name the rows: source 2 = task_history (task_id, version), 3 = task_run_log (run_id, row id).
    const leaves = await sys.ownerPool.query('SELECT log_index::int AS i, source, chain_id, seq::int AS seq FROM tlog_leaves WHERE chain_id IN ($1, $2) ORDER BY log_index', [taskId, runId]);
    expect(leaves.rows.map((r) => [r.source, r.chain_id, r.seq])).toEqual([
      [2, taskId, 1],
      [2, taskId, 2],
      [3, runId, log[0].id],
      [3, runId, log[1].id],
    ]);

    const tv = await eventually('the task history to be in a checkpoint', async () => {
      const v = await sys.tk.tasks.verify(taskId);
      return v.log.proven === 2 ? v : undefined;
    }, LOG);
    expect(tv).toMatchObject({ task_id: taskId, ok: true, checked: 2, log: { ok: true, pending: 0 } });
    const rv = await eventually('the run log to be in a checkpoint', async () => {
      const v = await sys.tk.runs.verify(runId);
      return v.log.proven === 2 ? v : undefined;
    }, LOG);
    expect(rv).toMatchObject({ run_id: runId, ok: true, checked: 2 });

    // The inclusion proof the API serves proves the record hash (lib/tlog/record-leaf.ts) at that index.
    const cp = await signedCheckpoint();
    const leaf = (await new TlogStore(sys.ownerPool).chainLeaves(3, runId))[1];
    const p = await sys.tk.log.inclusion({ leaf_index: log[1].log_index!, tree_size: cp.size });
    expect(b64(p.leaf_hash)).toEqual(leafHash(Buffer.from(leaf.hash, 'hex')));
    expect(verifyInclusion(log[1].log_index!, cp.size, b64(p.leaf_hash), p.hashes.map(b64), cp.rootHash)).toBe(true);

    // The table owner rewrites a history row's reason and a run's summary after they were logged.
    const db = await sys.ownerPool.connect();
    try {
      await db.query('BEGIN');
      for (const t of ['task_history', 'task_run_log']) await db.query(`ALTER TABLE ${t} DISABLE TRIGGER ${t}_no_update_delete`);
      await db.query("UPDATE task_history SET reason = 'nothing happened' WHERE task_id = $1 AND version = 2", [taskId]);
      await db.query("UPDATE task_run_log SET summary = 'failed quietly' WHERE id = $1", [log[1].id]);
      for (const t of ['task_history', 'task_run_log']) await db.query(`ALTER TABLE ${t} ENABLE ALWAYS TRIGGER ${t}_no_update_delete`);
      await db.query('COMMIT');
    } finally {
      db.release();
    }
    const tBad = await sys.tk.tasks.verify(taskId);
    expect(tBad).toMatchObject({ ok: false, log: { ok: false, first_bad_seq: 2 } });
    expect(tBad.log.detail).toContain('is not the record the log committed to');
    const rBad = await sys.tk.runs.verify(runId);
    expect(rBad).toMatchObject({ ok: false, log: { ok: false, first_bad_seq: log[1].id } });
  });

  test('commit order: a record committed after a later transaction is neither skipped nor overtaken', async () => {
    const store = new TlogStore(sys.ownerPool);
    const origin = defaultLogOrigin(await databaseInstanceId(sys.ownerPool));
    const signer = logSignerOf({ logSigningKeyFile: testLogKeyFile(testEnv().ownerUrl), dataDir: os.tmpdir() }, origin);
    /** A session's first event, written straight into the tables (the guard checks the link, not the hash). */
    const create = async (db: { query: (sql: string, params: unknown[]) => Promise<unknown> }, sid: string) => {
      await db.query("INSERT INTO timeline_sessions (session_id, timeline_id, workflow_id, created_ts) VALUES ($1, gen_random_uuid(), 'wf', 0)", [sid]);
      await db.query(
        "INSERT INTO timeline_events (session_id, seq, event_id, event_type, ts, content, prev_hash, hash, workflow_id, run_id) VALUES ($1, 1, gen_random_uuid(), 'SESSION_CREATE', 0, '{}', NULL, $2, 'wf', 'run')",
        [sid, randomBytes(32).toString('hex')],
      );
    };
    const leafOf = async (sid: string) =>
      (await sys.ownerPool.query('SELECT log_index FROM tlog_leaves WHERE source = 0 AND chain_id = $1', [sid])).rows[0]?.log_index as number | undefined;
    const early = uniqueSessionId('tlog-early');
    const late = uniqueSessionId('tlog-late');
    const a = await sys.ownerPool.connect();
    try {
      // A takes its transaction id first and stays open; B, later, commits first.
      await a.query('BEGIN');
      await create(a, early);
      await create(sys.ownerPool, late);
      // A batch now (the running builder may take its own too): B is above the horizon, so not taken.
      await store.extendBatch(origin, signer, 1000);
      expect(await leafOf(late)).toBeUndefined();
      await a.query('COMMIT');
    } finally {
      a.release();
    }
    await store.extendBatch(origin, signer, 1000);
    const [ia, ib] = [await leafOf(early), await leafOf(late)];
    expect(ia).toBeDefined();
    expect(ib).toBeDefined();
    expect(ia!).toBeLessThan(ib!);
  });

  test('hostile proof parameters answer 400 naming the field', async () => {
    const cp = await eventually('a checkpoint', () => signedCheckpoint().catch(() => undefined), LOG);
    const cases: [Record<string, string | number>, 'inclusion' | 'consistency', string][] = [
      [{ leaf_index: 'abc', tree_size: 1 }, 'inclusion', 'leaf_index'],
      [{ leaf_index: -1, tree_size: 1 }, 'inclusion', 'leaf_index'],
      [{ leaf_index: 0, tree_size: '1e3' }, 'inclusion', 'tree_size'],
      [{ leaf_index: 0, tree_size: 0 }, 'inclusion', 'tree_size'],
      [{ leaf_index: cp.size, tree_size: cp.size }, 'inclusion', 'leaf_index'],
      [{ leaf_index: 0, tree_size: cp.size + 1_000_000 }, 'inclusion', 'tree_size'],
      [{ leaf_index: 0, tree_size: '99999999999999999' }, 'inclusion', 'tree_size'],
      [{ from: 2, to: 1 }, 'consistency', 'from'],
      [{ from: 0, to: cp.size + 1_000_000 }, 'consistency', 'to'],
      [{ from: 'x', to: 1 }, 'consistency', 'from'],
    ];
    for (const [query, kind, field] of cases) {
      const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]));
      const r = await sys.tk.raw('GET', `/v1/log/proof/${kind}?${qs}`);
      expect({ query, status: r.status, field: (r.body as { errors?: { field: string }[] }).errors?.[0]?.field }).toEqual({ query, status: 400, field });
    }
  });
});
