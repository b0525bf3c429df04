/**
 * The independent check of lib/tlog against Go's golang.org/x/mod/sumdb/note and sumdb/tlog
 * (and transparency-dev/formats for cosignature/v1), both ways: what TypeScript signs and
 * proves, Go accepts; what Go signs and proves, TypeScript accepts; tampering is refused by both.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatCheckpoint, parseCheckpoint } from '../../lib/tlog/checkpoint';
import { cosignatureSigner, cosignatureTimestamp, cosignatureVerifier, generateCosignerKey } from '../../lib/tlog/cosignature';
import { generateNoteKey, noteSigner, noteVerifier, openNote, signNote } from '../../lib/tlog/note';
import { leafHash, verifyConsistency, verifyInclusion } from '../../lib/tlog/verify';
import { goTlog, type GoResult } from '../support/go-tlog';
import { MemoryTree } from '../support/tlog-memory-tree';
import { makeVectors, type TlogVectors } from '../support/tlog-vectors';

const b64 = (b: Buffer): string => b.toString('base64');
const unb64 = (s: string): Buffer => Buffer.from(s, 'base64');
const ORIGIN = 'timekeeper.test/log';

async function go1(req: Record<string, unknown>): Promise<GoResult> {
  return (await goTlog([req]))[0];
}

describe('lib/tlog against Go (golang.org/x/mod/sumdb)', () => {
  jest.setTimeout(600_000);
  const log = generateNoteKey(ORIGIN);
  const witness = generateCosignerKey('witness.test/w1');
  const leafData = Array.from({ length: 70 }, () => randomBytes(32));
  const tree = new MemoryTree();
  for (const d of leafData) tree.append(d);
  const checkpoint = formatCheckpoint({ origin: ORIGIN, size: tree.size, rootHash: tree.root(), extensions: [] });

  test('a note TypeScript signs and cosigns opens in Go, as a checkpoint with the same fields', async () => {
    const note = signNote(checkpoint, noteSigner(log.signerKey), cosignatureSigner(witness.signerKey));
    const [opened, parsed, tampered, wrongWitness] = await goTlog([
      { op: 'open_note', note, log_keys: [log.verifierKey], cosigner_keys: [witness.verifierKey] },
      { op: 'parse_checkpoint', note, origin: ORIGIN, log_keys: [log.verifierKey], cosigner_keys: [witness.verifierKey] },
      { op: 'open_note', note: note.replace(`\n${tree.size}\n`, `\n${tree.size + 1}\n`), log_keys: [log.verifierKey] },
      { op: 'open_note', note, cosigner_keys: [generateCosignerKey('witness.test/w1').verifierKey] },
    ]);
    expect(opened).toMatchObject({ ok: true, text: checkpoint, unverified: 0 });
    const sigs = opened.sigs as Array<{ name: string; key_id: string; timestamp?: number }>;
    expect(sigs.map((s) => s.name)).toEqual([ORIGIN, 'witness.test/w1']);
    expect(sigs[0].key_id).toBe(log.verifierKey.split('+')[1]);
    expect(sigs[1].key_id).toBe(witness.verifierKey.split('+')[1]);
    const tsSig = openNote(note, [cosignatureVerifier(witness.verifierKey)]).verified[0];
    expect(sigs[1].timestamp).toBe(cosignatureTimestamp(tsSig.sig));
    expect(parsed).toMatchObject({ ok: true, origin: ORIGIN, size: tree.size, root: b64(tree.root()), rest: '' });
    expect(tampered.ok).toBe(false);
    expect(tampered.error).toMatch(/invalid signature/);
    // Same name, another key: Go ignores it like TypeScript does, and has nothing left.
    expect(wrongWitness.ok).toBe(false);
    expect(wrongWitness.error).toMatch(/no verifiable signatures/);
  });

  test('a note and a cosignature Go signs open in TypeScript', async () => {
    const [key] = await goTlog([{ op: 'generate_key', name: ORIGIN }]);
    const signed = await go1({ op: 'sign_note', text: checkpoint, skey: key.skey });
    const opened = openNote(signed.note as string, [noteVerifier(key.vkey as string)]);
    expect(opened.text).toBe(checkpoint);
    expect(parseCheckpoint(opened.text).rootHash).toEqual(tree.root());
    // Go's cosigner (transparency-dev/formats) with our cosigner key string.
    const cosigned = await go1({ op: 'cosign', text: checkpoint, skey: witness.signerKey });
    expect(cosigned.key_id).toBe(witness.verifierKey.split('+')[1]);
    const c = openNote(cosigned.note as string, [cosignatureVerifier(witness.verifierKey)]);
    expect(Math.abs(cosignatureTimestamp(c.verified[0].sig) * 1000 - Date.now())).toBeLessThan(3_600_000);
    expect(() => openNote((cosigned.note as string).replace(ORIGIN, `${ORIGIN}x`), [cosignatureVerifier(witness.verifierKey)])).toThrow(/does not verify/);
  });

  test('Go and TypeScript agree on leaf hashes, roots and proofs, and accept each other’s proofs', async () => {
    const sizes = Array.from({ length: tree.size }, (_, i) => i + 1);
    const inclusion: Array<{ index: number; size: number }> = [];
    const consistency: Array<{ from: number; to: number }> = [];
    for (const n of sizes) {
      for (let m = 0; m < n; m += n > 20 ? 7 : 1) inclusion.push({ index: m, size: n });
      for (let m = 1; m <= n; m += n > 20 ? 5 : 1) consistency.push({ from: m, to: n });
    }
    const leaves = tree.leaves.map((_, i) => i);
    const data = (await go1({ op: 'tree', leaves: leaves.map((i) => b64(leafData[i])), sizes, inclusion, consistency })) as GoResult & {
      leaf_hashes: string[];
      roots: Record<string, string>;
      inclusion: string[][];
      consistency: string[][];
    };
    expect(data.ok).toBe(true);
    expect(data.leaf_hashes).toEqual(tree.leaves.map(b64));
    for (const n of sizes) expect(data.roots[String(n)]).toBe(b64(tree.root(n)));
    inclusion.forEach((q, i) => {
      expect(data.inclusion[i]).toEqual(tree.inclusion(q.index, q.size).map(b64));
      expect(verifyInclusion(q.index, q.size, tree.leaves[q.index], data.inclusion[i].map(unb64), tree.root(q.size))).toBe(true);
    });
    consistency.forEach((q, i) => {
      expect(data.consistency[i]).toEqual(tree.consistency(q.from, q.to).map(b64));
      expect(verifyConsistency(q.from, q.to, tree.root(q.from), tree.root(q.to), data.consistency[i].map(unb64))).toBe(true);
    });

    // TypeScript's proofs checked by Go, and a changed hash refused by Go.
    const checks: Array<Record<string, unknown>> = [];
    for (const q of inclusion.filter((_, i) => i % 3 === 0)) {
      const hashes = tree.inclusion(q.index, q.size).map(b64);
      checks.push({ op: 'check_inclusion', leaf_hash: b64(tree.leaves[q.index]), index: q.index, size: q.size, root: b64(tree.root(q.size)), hashes });
      if (hashes.length) checks.push({ op: 'check_inclusion', leaf_hash: b64(tree.leaves[q.index]), index: q.index, size: q.size, root: b64(tree.root(q.size)), hashes: [b64(leafHash(unb64(hashes[0]))), ...hashes.slice(1)], expectFail: true });
    }
    for (const q of consistency.filter((c, i) => i % 3 === 0 && c.from < c.to)) {
      const hashes = tree.consistency(q.from, q.to).map(b64);
      checks.push({ op: 'check_consistency', from: q.from, to: q.to, old_root: b64(tree.root(q.from)), root: b64(tree.root(q.to)), hashes });
      checks.push({ op: 'check_consistency', from: q.from, to: q.to, old_root: b64(tree.root(q.from)), root: b64(tree.root(q.to)), hashes: hashes.slice(0, -1), expectFail: true });
    }
    const results = await goTlog(checks);
    results.forEach((r, i) => expect({ i, ok: r.ok }).toEqual({ i, ok: !checks[i].expectFail }));
  });

  test('the golden vectors (test/vectors/tlog.json) are what the code makes, and Go accepts them', async () => {
    const file = JSON.parse(readFileSync(join(__dirname, '../vectors/tlog.json'), 'utf8')) as TlogVectors;
    expect(makeVectors()).toEqual(file);
    const [opened, inc, cons, tree8] = await goTlog([
      { op: 'open_note', note: file.cosigned_checkpoint_8, log_keys: [file.keys.log_verifier], cosigner_keys: [file.keys.witness_verifier] },
      { op: 'check_inclusion', leaf_hash: file.leaf_hashes_b64[5], index: 5, size: 8, root: file.roots_b64['8'], hashes: file.inclusion.hashes },
      { op: 'check_consistency', from: 3, to: 8, old_root: file.roots_b64['3'], root: file.roots_b64['8'], hashes: file.consistency.hashes },
      { op: 'tree', leaves: file.leaf_data_hex.map((h) => b64(Buffer.from(h, 'hex'))), sizes: [3, 7, 8] },
    ]);
    expect(opened).toMatchObject({ ok: true, text: file.checkpoint_8 });
    expect((opened.sigs as Array<{ timestamp?: number }>)[1].timestamp).toBe(file.cosignature_time);
    expect(inc.ok).toBe(true);
    expect(cons.ok).toBe(true);
    expect(tree8.roots).toEqual({ '3': file.roots_b64['3'], '7': file.roots_b64['7'], '8': file.roots_b64['8'] });
  });

});
