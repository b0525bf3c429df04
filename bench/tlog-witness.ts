/**
 * `npm run bench:witness`: what witnessing costs. One in-process `timekeeper witness` (loopback
 * node:http, state file in a temp folder) cosigns a growing log's checkpoints one after the
 * other (each: parse, check the log's signature, verify the consistency proof, write and fsync
 * the state file, sign), beside its floor: the same server answering the same bodies on an
 * unknown path (404, no work). Then the offline check: records' tlog-proofs verified per second
 * (bundle.ts, the `verify-file --log-key` path), against plain SHA-256 leaf hashing as floor.
 *
 *   npm run bench:witness -- [--rounds 300] [--leaves 4] [--records 2000]
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { formatCheckpoint } from '../lib/tlog/checkpoint';
import { generateCosignerKey } from '../lib/tlog/cosignature';
import { generateNoteKey, noteSigner, signNote } from '../lib/tlog/note';
import { formatTlogProof } from '../lib/tlog/proof';
import { verifyExportProofs } from '../lib/tlog/bundle';
import { leafHash } from '../lib/tlog/verify';
import { formatAddCheckpoint, Witness, WitnessStateStore } from '../lib/tlog/witness';
import { startWitnessServer } from '../lib/tlog/witness-server';
import { MemoryTree } from '../test/support/tlog-memory-tree';
import { LATENCY_HEADER, latencyRow, Series } from './measure';

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
}

async function main(): Promise<void> {
  const rounds = arg('rounds', 300);
  const perRound = arg('leaves', 4);
  const records = arg('records', 2000);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tk-bench-witness-'));
  const origin = 'bench.test/log';
  const log = generateNoteKey(origin);
  const w = generateCosignerKey('bench.test/witness');
  const witness = new Witness({ signerKey: w.signerKey, logs: [{ origin, verifierKeys: [log.verifierKey] }], store: new WitnessStateStore(path.join(tmp, 'state.json')) });
  const server = await startWitnessServer(witness, { host: '127.0.0.1', port: 0 });

  // Every request body up front, so only the round trips are timed.
  const tree = new MemoryTree();
  const bodies: string[] = [];
  let prev = 0;
  const signer = noteSigner(log.signerKey);
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < perRound; i++) tree.append(randomBytes(32));
    const note = signNote(formatCheckpoint({ origin, size: tree.size, rootHash: tree.root(), extensions: [] }), signer);
    bodies.push(formatAddCheckpoint(prev, prev === 0 ? [] : tree.consistency(prev, tree.size), note));
    prev = tree.size;
  }
  const post = async (url: string, body: string, want: number, s: Series) => {
    const t0 = performance.now();
    const res = await fetch(url, { method: 'POST', body });
    await res.text();
    if (res.status === want) s.ok(performance.now() - t0);
    else s.fail(`HTTP ${res.status}`, url);
  };
  const floor = new Series();
  const add = new Series();
  // Interleaved, so load on the machine hits both alike.
  const t0 = performance.now();
  for (const b of bodies) {
    await post(`${server.url}/floor`, b, 404, floor);
    await post(`${server.url}/add-checkpoint`, b, 200, add);
  }
  const wall = performance.now() - t0;
  await server.close();

  // Offline: one checkpoint note (signed), many records with proofs against it.
  const leaves = Array.from({ length: records }, () => randomBytes(32));
  const t2 = new MemoryTree();
  for (const l of leaves) t2.append(l);
  const note = signNote(formatCheckpoint({ origin, size: t2.size, rootHash: t2.root(), extensions: [] }), signer);
  const exported = leaves.map((l, i) => ({ seq: i + 1, hash: l.toString('hex'), log_index: i, tlog_proof: formatTlogProof({ index: i, hashes: t2.inclusion(i), checkpoint: note }) }));
  const t3 = performance.now();
  const v = verifyExportProofs(exported, { logKeys: [log.verifierKey], witnessKeys: [], quorum: 0 });
  const verifyMs = performance.now() - t3;
  const t4 = performance.now();
  for (const l of leaves) leafHash(l);
  const hashMs = performance.now() - t4;

  const load = os.loadavg().map((x) => x.toFixed(2)).join(' ');
  console.log(`witness add-checkpoint, ${rounds} checkpoints of +${perRound} leaves (load average ${load}, ${os.cpus().length} cores)`);
  console.log(LATENCY_HEADER);
  console.log(latencyRow('floor', floor, wall));
  console.log(latencyRow('add', add, wall));
  console.log(`  add / floor: p50 ${(add.pct(50) / floor.pct(50)).toFixed(1)}x, p99 ${(add.pct(99) / floor.pct(99)).toFixed(1)}x`);
  console.log(`offline: ${records} records' tlog-proofs (tree of ${records}) verified in ${verifyMs.toFixed(0)} ms = ${((records / verifyMs) * 1000).toFixed(0)}/s (ok ${v.ok}); floor, leaf hashes only: ${hashMs.toFixed(1)} ms`);
  fs.rmSync(tmp, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
