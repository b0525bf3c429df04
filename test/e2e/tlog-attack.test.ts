/**
 * The attack of issue 19, on the real system: the database superuser rewrites a session's
 * events and hashes consistently from some record on, and rebuilds the whole transparency log
 * from the rewritten records (the worker, holding the log key, signs the rebuilt tree). Every
 * hash and every proof the server now serves agree with each other, but:
 * - the witness, which cosigned a checkpoint before the rewrite, refuses the rebuilt log's
 *   checkpoint (no consistency proof from its checkpoint can verify);
 * - the export taken against the witnessed checkpoint still verifies offline, and
 *   `timekeeper verify-file <new export> --against <witnessed export>` names the session and
 *   the first record that differs;
 * - the new export's proofs carry no witness cosignature, so a verifier that requires one refuses it;
 * - the same witness is in LOG_WITNESSES, so the builder sends it the rebuilt log's next
 *   checkpoint itself: refused, the round stored unwitnessed, nothing witnessed for the new log.
 * The attacker also has Temporal access: the session workflow's recorded head (the anchor
 * verify compares with) first still names the honest chain, so verify says anchor_mismatch;
 * the attacker terminates the workflow, and the next append resumes it from the head the
 * database holds, so the anchor is rewritten consistently too and the server's own verify is
 * all green. Only the witness and the witnessed export still show the rewrite.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { computeEventHash, type UnhashedEvent } from '../../lib/hash-chain';
import { parseCheckpoint } from '../../lib/tlog/checkpoint';
import { generateCosignerKey } from '../../lib/tlog/cosignature';
import { noteVerifier, openNote, parseNote } from '../../lib/tlog/note';
import { Witness, WitnessStateStore } from '../../lib/tlog/witness';
import { startWitnessServer, type WitnessServer } from '../../lib/tlog/witness-server';
import { parseWitnessList, witnessCheckpoint, type WitnessEndpoint } from '../../lib/tlog/witnessing';
import { startTestSystem, uniqueSessionId, type TestSystem, eventually } from '../support';
import { cliAgainst, freePort, LOG_WAIT, sessionLogged } from '../support/tlog-e2e';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-attack-'));
let sys: TestSystem;
let witnessServer: WitnessServer;
let witnessStore: WitnessStateStore;
let endpoint: WitnessEndpoint;
let witnessPort: number;
/** Every refusal of a log-signed checkpoint the witness made, whoever sent it. */
const refusals: Array<{ status: number; size: number }> = [];
const witnessKey = generateCosignerKey('witness.test/attack');

beforeAll(async () => {
  witnessPort = await freePort();
  sys = await startTestSystem({
    tlog: true,
    // logTileCacheBytes 0: the attacker restarts the API after the edit (a superuser of the
    // database can), so no process serves tiles it read before the rewrite. A process that kept
    // them would answer proofs that fail against the rebuilt checkpoint, a tell this test does
    // not count on: it shows that only the witness stops a consistent rewrite.
    config: { logWitnessing: { witnesses: parseWitnessList(`http://127.0.0.1:${witnessPort} ${witnessKey.verifierKey}`), quorum: 1 }, logBatchIntervalMs: 200, logTileCacheBytes: 0 },
  });
});
afterAll(async () => {
  await witnessServer?.close();
  await sys?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const cli = cliAgainst(() => sys.baseUrl);

const consistency = async (from: number, to: number) => (await sys.tk.log.consistency({ from, to })).hashes.map((h) => Buffer.from(h, 'base64'));
const sizeOf = (note: string) => parseCheckpoint(parseNote(note).text).size;

test('a consistent rewrite of a session and of the whole log is refused by the witness and named by verify-file', async () => {
  const sid = uniqueSessionId('attack');
  await sys.tk.createSession({ session_id: sid });
  for (let i = 1; i <= 5; i++) await sys.tk.append(sid, { type: 'USER_INPUT', content: { said: `honest ${i}` } });
  await eventually('the session in a checkpoint', () => sessionLogged(sys, sid), LOG_WAIT);
  // The log's key is the one its newest checkpoint is signed with (GET /v1/log/key), taken once
  // this system's builder has signed: the suite's shared database was signed before by other
  // tests' processes with keys of their own (the compiled-runtime test's worker, in CI), so a key
  // taken before that could name another builder's key than the checkpoint below.
  const logKey = await sys.tk.log.key();

  // The witness trusts the log's key and cosigns its current checkpoint.
  const first = await sys.tk.log.checkpoint();
  const origin = parseCheckpoint(openNote(first, [noteVerifier(logKey)]).text).origin;
  const witness = new Witness({
    signerKey: witnessKey.signerKey,
    logs: [{ origin, verifierKeys: [logKey] }],
    store: (witnessStore = new WitnessStateStore(path.join(tmp, 'witness.json'))),
    onRefusal: (r) => refusals.push({ status: r.status, size: sizeOf(r.note) }),
  });
  witnessServer = await startWitnessServer(witness, { host: '127.0.0.1', port: witnessPort });
  [endpoint] = parseWitnessList(`${witnessServer.url} ${witnessKey.verifierKey}`);
  const witnessed = await witnessCheckpoint({ note: first, witnesses: [endpoint], quorum: 1, previousSize: 0, consistencyProof: consistency });
  expect(witnessed).toMatchObject({ quorumMet: true, failures: [] });
  const witnessedSize = sizeOf(witnessed.note);

  // The user's export, proven against the witnessed checkpoint, verifies offline.
  const cosignedFile = path.join(tmp, 'cosigned.note');
  fs.writeFileSync(cosignedFile, witnessed.note);
  const before = path.join(tmp, 'before.jsonl');
  const ex = await cli(['export', sid, '-o', before, '--checkpoint', cosignedFile]);
  expect(ex).toMatchObject({ code: 0, stderr: `6 events of ${sid} written to ${before}, 6 with log proofs\n` });
  const trust = ['--log-key', logKey, '--witness-key', witnessKey.verifierKey];
  const okBefore = await cli(['verify-file', before, ...trust]);
  expect(okBefore.code).toBe(0);
  expect(okBefore.stdout).toContain(`log     6 events in checkpoint ${witnessedSize} of ${origin}, cosigned by witness.test/attack`);

  // The attack, as the superuser, in one transaction holding the log builder's lock: seq 3…6
  // rewritten with every hash and link recomputed, and the whole log dropped so that the
  // builder rebuilds and re-signs it from the rewritten records.
  const db = await sys.ownerPool.connect();
  try {
    await db.query('BEGIN');
    await db.query("SELECT pg_advisory_xact_lock(hashtextextended('timekeeper:tlog-builder', 0))");
    // The builder's witnessing rounds go too (they name the old checkpoints): evidence the attacker removes.
    for (const t of ['timeline_events', 'tlog_leaves', 'tlog_tiles', 'tlog_checkpoints', 'log_cosigned_checkpoints']) await db.query(`ALTER TABLE ${t} DISABLE TRIGGER USER`);
    const { rows } = await db.query('SELECT session_id, seq, event_id, event_type, ts, content, prev_hash, hash FROM timeline_events WHERE session_id = $1 ORDER BY seq', [sid]);
    let prev: string | null = null;
    for (const r of rows) {
      const content = Number(r.seq) >= 3 ? { said: `forged ${r.seq}` } : r.content;
      const e: UnhashedEvent = { session_id: sid, seq: Number(r.seq), event_id: r.event_id, event_type: r.event_type, ts: Number(r.ts), content, prev_hash: prev };
      const hash = computeEventHash(e);
      await db.query('UPDATE timeline_events SET content = $3, prev_hash = $4, hash = $5 WHERE session_id = $1 AND seq = $2', [sid, e.seq, JSON.stringify(content), prev, hash]);
      prev = hash;
    }
    for (const t of ['log_cosigned_checkpoints', 'tlog_checkpoints', 'tlog_tiles', 'tlog_leaves']) await db.query(`DELETE FROM ${t}`);
    for (const t of ['tlog_leaves', 'tlog_tiles', 'tlog_checkpoints', 'log_cosigned_checkpoints']) {
      await db.query(`ALTER TABLE ${t} ENABLE ALWAYS TRIGGER ${t}_no_update_delete`);
      await db.query(`ALTER TABLE ${t} ENABLE ALWAYS TRIGGER ${t}_no_truncate`);
    }
    for (const g of ['timeline_events_guard', 'timeline_events_no_update_delete', 'timeline_events_no_truncate']) await db.query(`ALTER TABLE timeline_events ENABLE ALWAYS TRIGGER ${g}`);
    await db.query('COMMIT');
  } catch (err) {
    await db.query('ROLLBACK');
    throw err;
  } finally {
    db.release();
  }

  // Before the anchor is touched, the workflow's head still names the honest chain.
  const anchored = await sys.tk.verify(sid);
  expect(anchored).toMatchObject({ ok: false, reason: 'anchor_mismatch', first_bad_seq: 6, anchor: { seq: 6, ok: false } });
  // The attacker with Temporal access: terminate the session workflow, so that the next write
  // resumes it from the head the (rewritten) database holds.
  const { rows: wf } = await sys.ownerPool.query('SELECT workflow_id FROM timeline_sessions WHERE session_id = $1', [sid]);
  await sys.client.workflow.getHandle(wf[0].workflow_id as string).terminate('operator rewrites the recorded head');

  // The rebuilt log reaches the witnessed size again: a checkpoint signed with the log's own key.
  const forged = await eventually('the rebuilt log to reach the witnessed size', async () => {
    const n = await sys.tk.log.checkpoint();
    return sizeOf(n) >= witnessedSize ? n : undefined;
  }, LOG_WAIT);
  const forgedCp = parseCheckpoint(openNote(forged, [noteVerifier(logKey)]).text);
  expect(forgedCp.origin).toBe(origin);
  // Its proofs agree with its own checkpoints: nothing on the server shows the rewrite.
  const events = (await sys.tk.events(sid, { limit: 100 })).events;
  expect(events.map((e) => e.content)).toContainEqual({ said: 'forged 3' });

  // The witness refuses it: no consistency proof leads from what it cosigned to the rebuilt tree.
  const refused = await witnessCheckpoint({ note: forged, witnesses: [endpoint], quorum: 1, previousSize: witnessedSize, consistencyProof: consistency });
  expect(refused.quorumMet).toBe(false);
  expect(refused.cosigners).toEqual([]);
  expect(refused.failures).toHaveLength(1);
  expect([409, 422]).toContain(refused.failures[0].status);
  expect(witnessStore.read().logs[origin]).toMatchObject({ size: witnessedSize, root: parseCheckpoint(parseNote(witnessed.note).text).rootHash.toString('base64') });

  // The live wire: one more record, and the builder sends the rebuilt log's next checkpoint to
  // the configured witness itself, from the size the witness holds. Refused: the round is
  // stored unwitnessed, nothing is witnessed for the rebuilt log, the witness holds what it had.
  const resumed = await sys.tk.append(sid, { type: 'USER_INPUT', content: { said: 'after the rewrite' } });
  // The anchor now agrees with the forged chain: the server's own verify sees nothing wrong.
  const green = await sys.tk.verify(sid);
  expect(green).toMatchObject({ ok: true, checked: 7, anchor: { source: 'workflow', seq: 7, hash: resumed.hash, ok: true } });
  expect(resumed.prev_hash).toBe(events[5].hash); // built on the forged seq 6
  const round = await eventually('the builder to offer the rebuilt log to the witness', async () => {
    const { rows } = await sys.ownerPool.query('SELECT tree_size, note, witness_count, quorum_met FROM log_cosigned_checkpoints WHERE tree_size > $1 ORDER BY id LIMIT 1', [witnessedSize]);
    return rows[0] as { tree_size: string; note: string; witness_count: number; quorum_met: boolean } | undefined;
  }, LOG_WAIT);
  expect(round).toMatchObject({ witness_count: 0, quorum_met: false });
  expect(parseNote(round.note).signatures.map((s) => s.name)).toEqual([origin]);
  // Refused by the witness (not unanswered): a 409 or 422 for that checkpoint's size.
  expect(refusals.filter((r) => r.status === 409 || r.status === 422).map((r) => r.size)).toContain(Number(round.tree_size));
  expect((await fetch(`${sys.baseUrl}/v1/log/checkpoint?witnessed=true`)).status).toBe(404);
  expect(witnessStore.read().logs[origin]).toMatchObject({ size: witnessedSize });

  // A new export proves the forged records against the rebuilt log: signed by the log, but
  // with no witness cosignature, so a verifier that asks for one refuses it.
  const after = path.join(tmp, 'after.jsonl');
  expect((await cli(['export', sid, '-o', after])).code).toBe(0);
  const logOnly = await cli(['verify-file', after, '--log-key', logKey]);
  expect(logOnly.code).toBe(0); // chain and log agree with each other: the rewrite is consistent
  const withWitness = await cli(['verify-file', after, ...trust]);
  expect(withWitness.code).toBe(1);
  expect(withWitness.stdout).toContain(`BROKEN  ${sid}  at seq 1`);
  expect(withWitness.stdout).toContain('quorum: 0 of the required 1 witness cosignatures');

  // Against the witnessed export: the session and the first record that differs, by name.
  const against = await cli(['verify-file', after, ...trust, '--against', before]);
  expect(against.code).toBe(1);
  expect(against.stdout).toMatch(new RegExp(`^BROKEN  ${sid}  at seq 3 \\(log index \\d+\\): differs: its hash is [0-9a-f]{64}, the witnessed checkpoint ${witnessedSize} commits to [0-9a-f]{64}`));
  // The witnessed export itself still verifies: it is the history the log committed to.
  expect((await cli(['verify-file', before, ...trust])).code).toBe(0);
}, 300_000); // a dozen CLI runs, a workflow resumed and two log rebuild waits: longer than the default on a loaded machine
