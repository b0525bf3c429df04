/**
 * The wire between the log builder and its witnesses (issue 19, docs/hash-chain.md §11.5), on
 * the real system: a witness (the `timekeeper witness` server, in process) configured in
 * LOG_WITNESSES before it is even up. While it is down the log keeps publishing log-signed
 * checkpoints; once it is up the builder's checkpoints get cosigned (the note opens with Go's
 * sumdb/note), GET /v1/log/checkpoint serves them with the cosignature and ?witnessed=true the
 * newest witnessed one, verify names the witnessed checkpoint it used, and `timekeeper export`
 * proves against it by default so that verify-file with --witness-key/--quorum needs no
 * --checkpoint. The witness down again: the log still publishes, nothing witnessed moves; back
 * up (same key, same state): cosigning resumes from the size it holds.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseCheckpoint } from '../../lib/tlog/checkpoint';
import { cosignatureSigner, generateCosignerKey } from '../../lib/tlog/cosignature';
import { noteVerifier, openNote, parseNote, signNote } from '../../lib/tlog/note';
import { Witness, WitnessStateStore } from '../../lib/tlog/witness';
import { startWitnessServer, type WitnessServer } from '../../lib/tlog/witness-server';
import { parseWitnessList } from '../../lib/tlog/witnessing';
import { goTlog } from '../support/go-tlog';
import { startTestSystem, uniqueSessionId, type TestSystem, eventually } from '../support';
import { cliAgainst, freePort, LOG_WAIT, sessionLogged } from '../support/tlog-e2e';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-witnessing-'));
const witnessKey = generateCosignerKey('witness.test/wire');
let sys: TestSystem;
let port: number;
let server: WitnessServer | undefined;


beforeAll(async () => {
  port = await freePort();
  sys = await startTestSystem({
    tlog: true,
    config: { logWitnessing: { witnesses: parseWitnessList(`http://127.0.0.1:${port} ${witnessKey.verifierKey}`), quorum: 1 }, logBatchIntervalMs: 200 },
  });
});
afterAll(async () => {
  await server?.close();
  await sys?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const cli = cliAgainst(() => sys.baseUrl);

/** GET /v1/log/checkpoint as a client sees it: status, the headers saying what it is, the note. */
async function served(witnessed = false) {
  const res = await fetch(`${sys.baseUrl}/v1/log/checkpoint${witnessed ? '?witnessed=true' : ''}`);
  const note = await res.text();
  return { status: res.status, witnessed: res.headers.get('x-log-witnessed'), cosignatures: res.headers.get('x-log-cosignatures'), note, size: res.status === 200 ? sizeOf(note) : 0 };
}
const sizeOf = (note: string) => parseCheckpoint(parseNote(note).text).size;
let logKey = '';

async function appendSome(sid: string, n: number, tag: string) {
  for (let i = 1; i <= n; i++) await sys.tk.append(sid, { type: 'USER_INPUT', content: { said: `${tag} ${i}` } });
}

test('checkpoints are cosigned by the configured witness, survive it being down, and feed verify and export', async () => {
  logKey = await eventually('the log key', () => sys.tk.log.key(), LOG_WAIT);
  // Other test files of the run may have left witnessing rounds (their own witnesses) behind.
  const before = await served(true);
  const baseline = Number((await sys.ownerPool.query('SELECT coalesce(max(id), 0) AS id FROM log_cosigned_checkpoints')).rows[0].id);
  const sid = uniqueSessionId('wire');
  await sys.tk.createSession({ session_id: sid });
  await appendSome(sid, 3, 'before the witness');

  // The witness is down: the log still publishes, log-signed, and nothing is witnessed yet.
  const early = await eventually('a checkpoint covering the session', async () => ((await sessionLogged(sys, sid)) ? served() : undefined), LOG_WAIT);
  expect(early).toMatchObject({ status: 200, witnessed: 'false', cosignatures: '0' });
  expect(parseNote(early.note).signatures).toHaveLength(1); // the log's own, nothing else
  expect((await served(true)).size).toBe(before.size); // 0: none (404)
  const rounds = await eventually('a round with the witness down', async () => {
    const r = await sys.ownerPool.query('SELECT witness_count, quorum_met FROM log_cosigned_checkpoints WHERE id > $1', [baseline]);
    return r.rows.length > 0 ? r : undefined;
  }, LOG_WAIT);
  expect(rounds.rows.length).toBeGreaterThan(0);
  expect(rounds.rows.every((r) => r.witness_count === 0 && r.quorum_met === false)).toBe(true);

  // The witness comes up on the configured address, trusting the log's key.
  const origin = parseCheckpoint(openNote(early.note, [noteVerifier(logKey)]).text).origin;
  const state = new WitnessStateStore(path.join(tmp, 'witness.json'));
  const start = async () => {
    server = await startWitnessServer(new Witness({ signerKey: witnessKey.signerKey, logs: [{ origin, verifierKeys: [logKey] }], store: state }), { host: '127.0.0.1', port });
  };
  await start();

  // Within the builder's retry the newest checkpoint is cosigned, and served with it.
  const witnessed = await eventually('the checkpoint cosigned', async () => {
    const w = await served(true);
    return w.status === 200 && w.size >= early.size ? w : undefined;
  }, LOG_WAIT);
  expect(witnessed).toMatchObject({ witnessed: 'true', cosignatures: '1' });
  expect(state.read().logs[origin]).toMatchObject({ size: witnessed.size });
  const latest = await served();
  if (latest.size === witnessed.size) expect(latest).toMatchObject({ witnessed: 'true', note: witnessed.note });

  // Go's sumdb/note opens the cosigned note with the log key and the witness's cosigner key.
  const [opened] = await goTlog([{ op: 'open_note', note: witnessed.note, log_keys: [logKey], cosigner_keys: [witnessKey.verifierKey] }]);
  expect(opened).toMatchObject({ ok: true, unverified: 0 });
  expect((opened.sigs as Array<{ name: string }>).map((s) => s.name)).toEqual([origin, 'witness.test/wire']);

  // verify checks against the witnessed checkpoint and says so.
  const v = await sys.tk.verify(sid);
  expect(v.log).toMatchObject({ ok: true, pending: 0, proven: 4, checkpoint: { tree_size: witnessed.size, witnessed: true } });

  expect((await cli(['verify', sid])).stdout).toContain(`in log checkpoint ${witnessed.size} (witnessed)`);

  // export proves against the witnessed checkpoint by default: verify-file needs no --checkpoint.
  const file = path.join(tmp, 'export.jsonl');
  expect((await cli(['export', sid, '-o', file])).code).toBe(0);
  const checked = await cli(['verify-file', file, '--log-key', logKey, '--witness-key', witnessKey.verifierKey, '--quorum', '1']);
  expect(checked.stdout).toContain(`in checkpoint ${witnessed.size} of ${origin}, cosigned by witness.test/wire`);
  expect(checked.code).toBe(0);

  // The witness goes down: the log keeps publishing; what is witnessed stays where it was.
  await server!.close();
  server = undefined;
  await appendSome(sid, 3, 'witness down');
  const whileDown = await eventually('a checkpoint with the new records', async () => {
    const s = await served();
    return s.size >= witnessed.size + 3 ? s : undefined;
  }, LOG_WAIT);
  expect(whileDown).toMatchObject({ witnessed: 'false', cosignatures: '0' });
  expect((await served(true)).size).toBe(witnessed.size);
  // verify still uses the newest witnessed checkpoint: the new records are pending there.
  expect((await sys.tk.verify(sid)).log).toMatchObject({ ok: true, proven: 4, pending: 3, checkpoint: { tree_size: witnessed.size, witnessed: true } });

  // Back up, same key and state: cosigning resumes, from the size the witness holds.
  await start();
  const resumed = await eventually('cosigning to resume', async () => {
    const w = await served(true);
    return w.size >= whileDown.size ? w : undefined;
  }, LOG_WAIT);
  expect(resumed).toMatchObject({ status: 200, witnessed: 'true' });
  expect(state.read().logs[origin].size).toBe(resumed.size);
  expect((await sys.tk.verify(sid)).log).toMatchObject({ ok: true, proven: 7, pending: 0, checkpoint: { tree_size: resumed.size, witnessed: true } });
  const [again] = await goTlog([{ op: 'open_note', note: resumed.note, log_keys: [logKey], cosigner_keys: [witnessKey.verifierKey] }]);
  expect(again).toMatchObject({ ok: true, unverified: 0 });
});

test('verify counts the cosignatures itself: a round stored as witnessed whose cosignature is not the configured witness\'s fails verify', async () => {
  // The witness is down, so the newest checkpoint stays log-signed only.
  await server?.close();
  server = undefined;
  const sid = uniqueSessionId('wire-forged');
  await sys.tk.createSession({ session_id: sid });
  const fresh = await eventually('a checkpoint past the witnessed one', async () => {
    const [s, w] = [await served(), await served(true)];
    return (await sessionLogged(sys, sid)) && s.size > w.size ? s : undefined;
  }, LOG_WAIT);
  expect((await sys.tk.verify(sid)).log).toMatchObject({ ok: true, checkpoint: { witnessed: true } });
  // The database owner "witnesses" it: a cosignature under the witness's name by a key of its
  // own (so the configured key's id does not match), stored as a round that met the quorum.
  const forger = cosignatureSigner(generateCosignerKey('witness.test/wire').signerKey);
  const text = parseNote(fresh.note).text;
  const forgedLine = signNote(text, forger).slice(text.length + 1);
  await sys.ownerPool.query(
    "INSERT INTO log_cosigned_checkpoints (tree_size, note, witness_count, quorum, quorum_met, witness_sizes) VALUES ($1, $2, 1, 1, true, '{}'::jsonb)",
    [fresh.size, fresh.note + forgedLine],
  );
  expect((await served(true)).size).toBe(fresh.size); // the API serves what the database says …
  const v = await sys.tk.verify(sid);
  // … but verify checks the cosignatures against LOG_WITNESSES' key and the quorum itself.
  expect(v.ok).toBe(false);
  expect(v.log).toMatchObject({ ok: false, checkpoint: { tree_size: fresh.size, witnessed: false, cosignatures: 0 } });
  expect(v.log.detail).toContain('only 0 of the required 1 cosignatures verify');
});
