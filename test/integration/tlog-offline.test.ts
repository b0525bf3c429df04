/**
 * Offline proofs: a session's records exported with C2SP tlog-proof bundles against a
 * witnessed checkpoint (lib/tlog/bundle.ts), then checked by `timekeeper verify-file` with
 * no server: chain, inclusion, the log's signature and the witnesses' cosignatures. A chain
 * rewritten consistently (every hash recomputed) still passes the chain rule, but not the
 * log: verify-file names the session and the first record that differs.
 */
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { computeEventHash, type UnhashedEvent } from '../../lib/hash-chain';
import { attachProofs, verifyExportProofs, type LoggedRecord } from '../../lib/tlog/bundle';
import { generateCosignerKey } from '../../lib/tlog/cosignature';
import { generateNoteKey } from '../../lib/tlog/note';
import { formatTlogProof, parseTlogProof } from '../../lib/tlog/proof';
import { Witness, WitnessStateStore } from '../../lib/tlog/witness';
import { startWitnessServer, type WitnessServer } from '../../lib/tlog/witness-server';
import { parseWitnessList, witnessCheckpoint } from '../../lib/tlog/witnessing';
import { TestLog } from '../support/tlog-test-log';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-offline-'));
const BIN = path.join(__dirname, '../../bin/timekeeper');
const SID = 'offline-session';

type Exported = LoggedRecord & { session_id: string; event_id: string; type: string; ts: number; content: unknown; prev_hash: string | null; log_index: number | null };

/** A chain of `n` events as the API exports them (`type`, not `event_type`). */
function chain(n: number, content = (seq: number) => ({ text: `message ${seq}` })): Exported[] {
  const out: Exported[] = [];
  for (let seq = 1; seq <= n; seq++) {
    const e: UnhashedEvent = { session_id: SID, seq, event_id: randomUUID(), event_type: seq === 1 ? 'SESSION_CREATE' : 'USER_INPUT', ts: 1_767_225_600_000 + seq, content: content(seq), prev_hash: seq === 1 ? null : out[seq - 2].hash };
    const { event_type, ...rest } = e;
    out.push({ ...rest, type: event_type, hash: computeEventHash(e), log_index: null });
  }
  return out;
}

/** The same events with content changed from `from` on and every hash recomputed: what a superuser could write. */
function rewrite(events: Exported[], from: number): Exported[] {
  const out: Exported[] = [];
  for (const e of events) {
    const prev = out.length ? out[out.length - 1].hash : null;
    const content = e.seq >= from ? { text: `forged ${e.seq}` } : e.content;
    const u = { session_id: e.session_id, seq: e.seq, event_id: e.event_id, event_type: e.type, ts: e.ts, content, prev_hash: prev } as UnhashedEvent;
    out.push({ ...e, content, prev_hash: prev, hash: computeEventHash(u) });
  }
  return out;
}

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(BIN, args, (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }));
  });
}

const writeJsonl = (name: string, records: unknown[]): string => {
  const f = path.join(tmp, name);
  fs.writeFileSync(f, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return f;
};

let witnessServer: WitnessServer;
const log = new TestLog('timekeeper.test/offline', generateNoteKey('timekeeper.test/offline'));
const witnessKey = generateCosignerKey('witness.test/offline');
let events: Exported[];
let exported: Exported[];
let cosigned: string;

beforeAll(async () => {
  const witness = new Witness({ signerKey: witnessKey.signerKey, logs: [{ origin: log.origin, verifierKeys: [log.key.verifierKey] }], store: new WitnessStateStore(path.join(tmp, 'w.json')) });
  witnessServer = await startWitnessServer(witness, { host: '127.0.0.1', port: 0 });
  // Other chains' records interleave with this session's in the one log.
  events = chain(6);
  log.grow(3);
  for (const e of events) {
    e.log_index = log.tree.size;
    log.add(Buffer.from(e.hash, 'hex'));
    log.grow(2);
  }
  const r = await witnessCheckpoint({ note: log.checkpoint(), witnesses: parseWitnessList(`${witnessServer.url} ${witnessKey.verifierKey}`), quorum: 1, previousSize: 0, consistencyProof: log.consistency });
  expect(r.quorumMet).toBe(true);
  cosigned = r.note;
  // One event appended after the checkpoint: no proof yet.
  const late = chain(7)[6];
  const last = events[events.length - 1];
  const lateEvent = { ...late, prev_hash: last.hash } as Exported;
  lateEvent.hash = computeEventHash({ session_id: SID, seq: 7, event_id: lateEvent.event_id, event_type: lateEvent.type, ts: lateEvent.ts, content: lateEvent.content, prev_hash: last.hash } as UnhashedEvent);
  lateEvent.log_index = log.tree.size;
  events.push(lateEvent);
  const attached = await attachProofs(events, { checkpoint: () => Promise.resolve(cosigned), inclusion: (i, n) => Promise.resolve(log.tree.inclusion(i, n)) });
  expect(attached).toMatchObject({ proven: 6, pending: 1 });
  exported = attached.records;
});

afterAll(async () => {
  await witnessServer.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const keys = () => ['--log-key', log.key.verifierKey, '--witness-key', witnessKey.verifierKey];

describe('offline proofs', () => {
  test('each record carries a C2SP tlog-proof with its index, its inclusion proof and the cosigned checkpoint', () => {
    const p = parseTlogProof(exported[2].tlog_proof!);
    expect(p.index).toBe(exported[2].log_index);
    expect(p.checkpoint).toBe(cosigned);
    expect(exported[2].tlog_proof!.startsWith(`c2sp.org/tlog-proof@v1\nindex ${p.index}\n`)).toBe(true);
    expect(formatTlogProof(p)).toBe(exported[2].tlog_proof);
    expect(exported[6].tlog_proof).toBeUndefined();
  });

  test('verify-file checks chain, inclusion, signature and cosignature with no server', async () => {
    const file = writeJsonl('good.jsonl', exported);
    const r = await run(['verify-file', file, ...keys()]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`ok      ${SID}  7 events`);
    expect(r.stdout).toContain(`log     6 events in checkpoint ${log.tree.size} of ${log.origin}, cosigned by witness.test/offline; 1 without a proof`);
    const j = await run(['--json', 'verify-file', file, ...keys()]);
    expect(JSON.parse(j.stdout).log).toMatchObject({ ok: true, proven: 6, unproven: 1, checkpoint: { size: log.tree.size, cosigners: [{ name: 'witness.test/offline' }] } });
    // Without keys the chain is still checked, and the proofs are said to be unchecked.
    expect((await run(['verify-file', file])).stdout).toContain('proofs present but not checked');
  });

  test('a chain rewritten consistently passes the chain rule but not the log: verify-file names the first record that differs', async () => {
    const forged = rewrite(exported, 4);
    const file = writeJsonl('forged.jsonl', forged);
    const r = await run(['verify-file', file, ...keys()]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`BROKEN  ${SID}  at seq 4 (log index ${exported[3].log_index}): not the record the log committed to: inclusion`);
    expect(verifyExportProofs(forged, { logKeys: [log.key.verifierKey], witnessKeys: [], quorum: 0 }).first_bad).toMatchObject({ seq: 4, reason: 'inclusion' });
  });

  test('a checkpoint the log did not sign, or without the witness quorum, is refused', async () => {
    const file = writeJsonl('good2.jsonl', exported);
    const otherLog = generateNoteKey(log.origin).verifierKey;
    const r1 = await run(['verify-file', file, '--log-key', otherLog]);
    expect(r1.code).toBe(1);
    expect(r1.stdout).toMatch(/at seq 1 .*signature/);
    const r2 = await run(['verify-file', file, '--log-key', log.key.verifierKey, '--witness-key', generateCosignerKey('witness.test/other').verifierKey]);
    expect(r2.code).toBe(1);
    expect(r2.stdout).toMatch(/quorum: 0 of the required 1/);
    // A proof moved to another record, and a swapped checkpoint root, are refused.
    const moved = exported.map((e, i) => (i === 1 ? { ...e, tlog_proof: exported[2].tlog_proof } : e));
    expect(verifyExportProofs(moved, { logKeys: [log.key.verifierKey], witnessKeys: [], quorum: 0 }).first_bad).toMatchObject({ seq: 2 });
    const r3 = await run(['verify-file', file, '--log-key', 'not a key']);
    expect(r3.code).toBe(2);
  });

  test('random leaves never verify against a real proof', () => {
    const p = exported[0];
    const fake = { ...p, hash: randomBytes(32).toString('hex') };
    expect(verifyExportProofs([fake], { logKeys: [log.key.verifierKey], witnessKeys: [], quorum: 0 }).ok).toBe(false);
  });
});
