import { createHash } from 'node:crypto';
import { formatCheckpoint, parseCheckpoint } from '../../lib/tlog/checkpoint';
import { cosignatureSigner, cosignatureTimestamp, cosignatureVerifier, cosignedMessage, generateCosignerKey } from '../../lib/tlog/cosignature';
import {
  formatSignerKey,
  formatVerifierKey,
  generateNoteKey,
  keyId,
  noteSigner,
  noteVerifier,
  openNote,
  parseVerifierKey,
  signatureLine,
  signNote,
  SIG_COSIGNATURE_V1,
  SIG_ED25519,
  ed25519RawPublic,
  ed25519PrivateKey,
  type NoteError,
} from '../../lib/tlog/note';
import { EMPTY_ROOT, leafHash, nodeHash, verifyConsistency, verifyInclusion } from '../../lib/tlog/verify';
import { MemoryTree } from '../support/tlog-memory-tree';

const seed = (label: string): Buffer => createHash('sha256').update(label).digest();
const logSeed = seed('timekeeper test log key');
const LOG = 'example.com/log';
const logSkey = formatSignerKey(LOG, SIG_ED25519, logSeed);
const logVkey = formatVerifierKey(LOG, SIG_ED25519, ed25519RawPublic(ed25519PrivateKey(logSeed)));

function noteErrorKind(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return (e as NoteError).kind ?? (e as Error).name;
  }
  return 'no error';
}

describe('signed notes', () => {
  const text = 'hello\nworld\n';

  test('the key id is SHA-256(name ‖ 0x0A ‖ type ‖ key)[:4], in both key strings', () => {
    const pub = ed25519RawPublic(ed25519PrivateKey(logSeed));
    const expected = createHash('sha256').update(Buffer.concat([Buffer.from(`${LOG}\n`), Buffer.from([1]), pub])).digest().subarray(0, 4).toString('hex');
    expect(keyId(LOG, SIG_ED25519, pub).toString(16).padStart(8, '0')).toBe(expected);
    expect(logVkey).toBe(`${LOG}+${expected}+${Buffer.concat([Buffer.from([1]), pub]).toString('base64')}`);
    expect(logSkey).toBe(`PRIVATE+KEY+${LOG}+${expected}+${Buffer.concat([Buffer.from([1]), logSeed]).toString('base64')}`);
    // The same key as a cosigner key (type 0x04) has another id.
    expect(keyId(LOG, SIG_COSIGNATURE_V1, pub)).not.toBe(keyId(LOG, SIG_ED25519, pub));
  });

  test('a signed note opens with its key and carries the text', () => {
    const note = signNote(text, noteSigner(logSkey));
    expect(note.startsWith(`${text}\n\u2014 ${LOG} `)).toBe(true);
    const opened = openNote(note, [noteVerifier(logVkey)]);
    expect(opened.text).toBe(text);
    expect(opened.verified.map((s) => s.name)).toEqual([LOG]);
  });

  test('unknown signatures are ignored; with no known signature the note is refused', () => {
    const other = generateNoteKey('other.example/key');
    const note = signNote(text, noteSigner(other.signerKey), noteSigner(logSkey));
    const opened = openNote(note, [noteVerifier(logVkey)]);
    expect(opened.verified.map((s) => s.name)).toEqual([LOG]);
    expect(opened.unknown.map((s) => s.name)).toEqual(['other.example/key']);
    expect(noteErrorKind(() => openNote(signNote(text, noteSigner(other.signerKey)), [noteVerifier(logVkey)]))).toBe('unverified');
    // Same name, other key: unknown, not a failure.
    const sameName = generateNoteKey(LOG);
    expect(openNote(signNote(text, noteSigner(sameName.signerKey), noteSigner(logSkey)), [noteVerifier(logVkey)]).unknown).toHaveLength(1);
  });

  test('a known key whose signature does not verify rejects the note', () => {
    const note = signNote(text, noteSigner(logSkey));
    const tamperedText = note.replace('world', 'w0rld');
    expect(noteErrorKind(() => openNote(tamperedText, [noteVerifier(logVkey)]))).toBe('invalid-signature');
    const v = noteVerifier(logVkey);
    const badSig = signatureLine(LOG, v.keyId, Buffer.alloc(64, 7));
    expect(noteErrorKind(() => openNote(`${note}${badSig}`, [v]))).toBe('invalid-signature');
  });

  test('duplicate signatures by one key count once', () => {
    const note = signNote(text, noteSigner(logSkey), noteSigner(logSkey));
    expect(openNote(note, [noteVerifier(logVkey)]).verified).toHaveLength(1);
  });

  test('malformed notes are refused', () => {
    const good = signNote(text, noteSigner(logSkey));
    const v = [noteVerifier(logVkey)];
    const sigLine = good.slice(text.length + 1);
    for (const bad of [
      good.slice(0, -1), // no final newline
      `${text}${sigLine}`, // no blank line
      good.replace('hello', 'hel\tlo'), // control character
      good.replace('hello', 'hel\rlo'),
      `${text}\n- ${LOG} ${sigLine.split(' ')[2]}`, // not an em dash
      `${text}\n\u2014 ${LOG}  ${sigLine.split(' ')[2]}`, // two spaces
      `${text}\n\u2014 bad+name ${sigLine.split(' ')[2]}`,
      `${text}\n\u2014 ${LOG} AAAA\n`, // too short
      `${text}\n\u2014 ${LOG} not-base64!\n`,
      `${text}\n${sigLine.repeat(101)}`, // too many signatures
      `${text}\n`,
    ]) {
      expect(noteErrorKind(() => openNote(bad, v))).toBe('malformed');
    }
    expect(noteErrorKind(() => signNote('no newline', noteSigner(logSkey)))).toBe('malformed');
  });

  test('key strings with a wrong id, type or length are refused', () => {
    const [name, id, key] = logVkey.split('+');
    const flipped = ((parseInt(id, 16) ^ 1) >>> 0).toString(16).padStart(8, '0');
    expect(noteErrorKind(() => parseVerifierKey(`${name}+${flipped}+${key}`))).toBe('bad-key');
    expect(noteErrorKind(() => parseVerifierKey(`${name}+${id}+${key}AA==`))).toBe('bad-key');
    expect(noteErrorKind(() => parseVerifierKey(`${name} x+${id}+${key}`))).toBe('bad-key');
    expect(noteErrorKind(() => noteVerifier(generateCosignerKey('w.example').verifierKey))).toBe('bad-key');
  });
});

describe('checkpoints', () => {
  const root = seed('root');
  const body = `${LOG}\n42\n${root.toString('base64')}\n`;

  test('format and parse round-trip, with extension lines', () => {
    expect(formatCheckpoint({ origin: LOG, size: 42, rootHash: root, extensions: [] })).toBe(body);
    expect(parseCheckpoint(body)).toEqual({ origin: LOG, size: 42, rootHash: root, extensions: [] });
    expect(parseCheckpoint(`${body}ext one\n`).extensions).toEqual(['ext one']);
  });

  test.each([
    ['no final newline', body.slice(0, -1)],
    ['leading zero', body.replace('\n42\n', '\n042\n')],
    ['signed size', body.replace('\n42\n', '\n+42\n')],
    ['too large', body.replace('\n42\n', '\n9007199254740993\n')],
    ['short hash', body.replace(root.toString('base64'), root.subarray(1).toString('base64'))],
    ['unpadded hash', body.replace(root.toString('base64'), root.toString('base64').replace(/=$/, ''))],
    ['empty origin', body.replace(LOG, '')],
    ['empty extension line', `${body}\n`],
    ['two lines', `${LOG}\n42\n`],
  ])('refuses %s', (_label, text) => {
    expect(() => parseCheckpoint(text)).toThrow();
  });
});

describe('RFC 9162 proofs', () => {
  const tree = new MemoryTree();
  for (let i = 0; i < 40; i++) tree.append(seed(`leaf ${i}`));

  test('hashes: leaf 0x00, node 0x01, empty tree', () => {
    const d = Buffer.from('abc');
    expect(leafHash(d)).toEqual(createHash('sha256').update(Buffer.from([0, 0x61, 0x62, 0x63])).digest());
    expect(nodeHash(d, d)).toEqual(createHash('sha256').update(Buffer.concat([Buffer.from([1]), d, d])).digest());
    expect(EMPTY_ROOT.toString('hex')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  test('every inclusion proof verifies, and fails with a wrong leaf, index, size or hash', () => {
    for (let n = 1; n <= 40; n++) {
      const root = tree.root(n);
      for (let m = 0; m < n; m++) {
        const proof = tree.inclusion(m, n);
        expect(verifyInclusion(m, n, tree.leaves[m], proof, root)).toBe(true);
        expect(verifyInclusion(m, n, tree.leaves[(m + 1) % 40], proof, root)).toBe(false);
        if (n > 1) expect(verifyInclusion((m + 1) % n, n, tree.leaves[m], proof, root)).toBe(false);
        if (n < 40) expect(verifyInclusion(m, n + 1, tree.leaves[m], proof, tree.root(n + 1))).toBe(false);
        if (proof.length > 0) {
          expect(verifyInclusion(m, n, tree.leaves[m], proof.slice(1), root)).toBe(false);
          const bad = proof.map((h, i) => (i === proof.length - 1 ? leafHash(h) : h));
          expect(verifyInclusion(m, n, tree.leaves[m], bad, root)).toBe(false);
        }
        expect(verifyInclusion(m, n, tree.leaves[m], [...proof, root], root)).toBe(false);
      }
    }
  });

  test('every consistency proof verifies, and fails for another tree or a changed proof', () => {
    const forked = new MemoryTree();
    for (let i = 0; i < 40; i++) forked.append(seed(i === 5 ? 'forked' : `leaf ${i}`));
    for (let n = 1; n <= 40; n++) {
      for (let m = 1; m <= n; m++) {
        const proof = tree.consistency(m, n);
        expect(verifyConsistency(m, n, tree.root(m), tree.root(n), proof)).toBe(true);
        if (m !== n) {
          expect(verifyConsistency(m, n, tree.root(m), tree.root(n), proof.slice(0, -1))).toBe(false);
          expect(verifyConsistency(m, n, tree.root(m), tree.root(n), [...proof, tree.root(m)])).toBe(false);
          expect(verifyConsistency(m, n, tree.root(m), leafHash(tree.root(n)), proof)).toBe(false);
        }
        // A log that changed leaf 5 cannot prove consistency with the old root.
        if (n > 5) expect(verifyConsistency(m, n, m > 5 ? tree.root(m) : forked.root(m), forked.root(n), forked.consistency(m, n))).toBe(m <= 5 ? true : false);
      }
    }
    expect(verifyConsistency(0, 7, EMPTY_ROOT, tree.root(7), [])).toBe(true);
    expect(verifyConsistency(7, 7, tree.root(7), tree.root(6), [])).toBe(false);
    expect(verifyConsistency(8, 7, tree.root(8), tree.root(7), tree.consistency(7, 8))).toBe(false);
  });
});

describe('cosignature/v1', () => {
  const w = generateCosignerKey('witness.example/w1');
  const body = formatCheckpoint({ origin: LOG, size: 3, rootHash: seed('r'), extensions: [] });

  test('signs cosignature/v1 ‖ time ‖ the checkpoint text with a timestamp', () => {
    const signer = cosignatureSigner(w.signerKey, () => 1_700_000_000_999);
    const sig = signer.sign(Buffer.from(body));
    expect(cosignatureTimestamp(sig)).toBe(1_700_000_000);
    expect(cosignedMessage(1_700_000_000n, body).toString()).toBe(`cosignature/v1\ntime 1700000000\n${body}`);
    const note = signNote(body, noteSigner(logSkey), signer);
    const opened = openNote(note, [noteVerifier(logVkey), cosignatureVerifier(w.verifierKey)]);
    expect(opened.verified.map((s) => s.name)).toEqual([LOG, 'witness.example/w1']);
    // A cosignature does not verify as a plain note signature, nor for another body.
    expect(noteErrorKind(() => openNote(note.replace('\n3\n', '\n4\n'), [cosignatureVerifier(w.verifierKey)]))).toBe('invalid-signature');
  });
});
