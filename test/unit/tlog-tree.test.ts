import { createHash } from 'node:crypto';
import {
  consistencyProof,
  EMPTY_ROOT,
  extend,
  frontierOf,
  HASH_SIZE,
  inclusionProof,
  leafHash,
  nodeHash,
  tileKey,
  tileStrips,
  treeHead,
  type TileId,
  type TileReader,
} from '../../lib/tlog/tree';
import { checkpointBody } from '../../lib/store/tlog';
import { signerKeyOf } from '../../lib/tlog/log-key';
import { formatSignerKey, noteSigner, SIG_ED25519, signNote } from '../../lib/tlog/note';

const hex = (b: Buffer): string => b.toString('hex');

/** MTH straight from RFC 9162 §2.1.1, the oracle. */
function mth(leaves: Buffer[]): Buffer {
  if (leaves.length === 0) return createHash('sha256').digest();
  if (leaves.length === 1) return leafHash(leaves[0]);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return nodeHash(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

/** RFC 9162 §2.1.3.2, written out independently of the generator. */
function verifyInclusion(index: number, size: number, leaf: Buffer, proof: Buffer[], root: Buffer): boolean {
  if (index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && r.equals(root);
}

/** RFC 9162 §2.1.4.2. */
function verifyConsistency(first: number, second: number, firstRoot: Buffer, secondRoot: Buffer, proof: Buffer[]): boolean {
  if (first === second) return proof.length === 0 && firstRoot.equals(secondRoot);
  if (first === 0) return proof.length === 0;
  let path = proof;
  if ((first & (first - 1)) === 0) path = [firstRoot, ...proof];
  let fn = first - 1;
  let sn = second - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return fr.equals(firstRoot) && sr.equals(secondRoot) && sn === 0;
}

/** An in-memory tile store fed through extend and tileStrips, as the database one is. */
class MemoryTiles {
  tiles = new Map<string, Buffer>();
  size = 0;
  frontier: Buffer[] = [];
  reads = 0;
  read: TileReader = async (ids: TileId[]) => {
    this.reads++;
    return new Map(ids.filter((t) => this.tiles.has(tileKey(t))).map((t) => [tileKey(t), this.tiles.get(tileKey(t))!]));
  };
  async append(leafHashes: Buffer[]): Promise<Buffer> {
    // The frontier comes back from the tiles each time, as the builder reads it.
    const frontier = await frontierOf(this.size, this.read);
    const r = extend(this.size, frontier, leafHashes);
    for (const s of tileStrips(r.stored)) {
      const key = tileKey({ level: s.level, index: s.tile });
      const have = this.tiles.get(key) ?? Buffer.alloc(0);
      expect(have.length).toBe(s.offset * HASH_SIZE); // strips are contiguous
      this.tiles.set(key, Buffer.concat([have, s.hashes]));
    }
    this.size = r.size;
    this.frontier = r.frontier;
    return r.root;
  }
}

// The RFC 6962 test leaves used by certificate-transparency and Go's tlog tests.
const CT_LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map((h) => Buffer.from(h, 'hex'));
const CT_ROOTS = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];

describe('tlog tree (RFC 6962 / 9162)', () => {
  test('leaf and node hashes carry the 0x00 / 0x01 prefixes', () => {
    expect(hex(leafHash(Buffer.alloc(0)))).toBe(CT_ROOTS[0]);
    expect(hex(EMPTY_ROOT)).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    const l = leafHash(Buffer.from('a')), r = leafHash(Buffer.from('b'));
    expect(nodeHash(l, r)).toEqual(createHash('sha256').update(Buffer.concat([Buffer.of(1), l, r])).digest());
  });

  test('golden roots of the RFC 6962 test tree, sizes 1 to 8', async () => {
    const t = new MemoryTiles();
    for (let i = 0; i < CT_LEAVES.length; i++) {
      const root = await t.append([leafHash(CT_LEAVES[i])]);
      expect(hex(root)).toBe(CT_ROOTS[i]);
      expect(hex(await treeHead(i + 1, t.read))).toBe(CT_ROOTS[i]);
    }
  });

  test('golden inclusion proof: leaf 0 in the 8-leaf tree', async () => {
    const t = new MemoryTiles();
    await t.append(CT_LEAVES.map(leafHash));
    expect((await inclusionProof(0, 8, t.read)).map(hex)).toEqual([
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ]);
  });

  test('roots, inclusion and consistency proofs for every size up to 70 match the oracle and verify', async () => {
    const leaves = Array.from({ length: 70 }, (_, i) => Buffer.from(`leaf-${i}`));
    const t = new MemoryTiles();
    const roots: Buffer[] = [EMPTY_ROOT];
    // Appended in uneven batches, so tile strips start mid-tile.
    for (let i = 0; i < leaves.length; ) {
      const n = Math.min(1 + (i % 5), leaves.length - i);
      await t.append(leaves.slice(i, i + n).map(leafHash));
      i += n;
    }
    for (let n = 1; n <= leaves.length; n++) {
      roots[n] = await treeHead(n, t.read);
      expect(roots[n]).toEqual(mth(leaves.slice(0, n)));
    }
    for (let n = 1; n <= leaves.length; n++) {
      for (let m = 0; m < n; m++) {
        const p = await inclusionProof(m, n, t.read);
        expect(verifyInclusion(m, n, leafHash(leaves[m]), p, roots[n])).toBe(true);
        // The same proof does not prove a neighbour.
        if (n > 1) expect(verifyInclusion(m, n, leafHash(leaves[(m + 1) % n]), p, roots[n])).toBe(false);
      }
      for (let m = 1; m <= n; m++) {
        const p = await consistencyProof(m, n, t.read);
        expect(verifyConsistency(m, n, roots[m], roots[n], p)).toBe(true);
        if (m < n) expect(verifyConsistency(m, n, roots[m], roots[n - 1] ?? EMPTY_ROOT, p)).toBe(false);
      }
    }
  });

  test('tiles of 256: proofs across tile levels in a tree of 70,000 leaves read one batch of tiles', async () => {
    const t = new MemoryTiles();
    const leaves = Array.from({ length: 70_000 }, (_, i) => leafHash(Buffer.from(String(i))));
    await t.append(leaves.slice(0, 65_537));
    await t.append(leaves.slice(65_537));
    // Tile levels 0, 1 and 2 exist; a level-2 hash is a 65,536-leaf subtree.
    expect(t.tiles.get('2/0')?.length).toBe(HASH_SIZE);
    expect(t.tiles.get('1/0')?.length).toBe(256 * HASH_SIZE);
    expect(t.tiles.get('0/273')?.length).toBe((70_000 - 273 * 256) * HASH_SIZE);
    const root = await treeHead(70_000, t.read);
    const before = t.reads;
    for (const m of [0, 255, 256, 65_535, 65_536, 69_999]) {
      expect(verifyInclusion(m, 70_000, leaves[m], await inclusionProof(m, 70_000, t.read), root)).toBe(true);
    }
    expect(t.reads - before).toBe(6);
    const r65537 = await treeHead(65_537, t.read);
    expect(verifyConsistency(65_537, 70_000, r65537, root, await consistencyProof(65_537, 70_000, t.read))).toBe(true);
  });

  test('the golden vectors of docs/hash-chain.md §10.6', async () => {
    const t = new MemoryTiles();
    await t.append([0, 1, 2, 3, 4].map((i) => leafHash(Buffer.alloc(32, i))));
    const leaf = (i: number) => hex(leafHash(Buffer.alloc(32, i)));
    expect(leaf(2)).toBe('cba8c596120bdb69debbd923d92cba948bde7c7d06a465a1bb7d98d3116038fa');
    expect(hex(await treeHead(2, t.read))).toBe('28fb81e496897e0ce886f08602392e9239b65c659041e5202163e58ad898f444');
    expect((await treeHead(5, t.read)).toString('base64')).toBe('heIMrB8C/ae82y/D+QhWjFcBjHeBXx+jYaytE5lPCL8=');
    expect((await inclusionProof(2, 5, t.read)).map(hex)).toEqual([leaf(3), '28fb81e496897e0ce886f08602392e9239b65c659041e5202163e58ad898f444', leaf(4)]);
    expect((await consistencyProof(3, 5, t.read)).map(hex)).toEqual([leaf(2), leaf(3), '28fb81e496897e0ce886f08602392e9239b65c659041e5202163e58ad898f444', leaf(4)]);
    const seed = Buffer.alloc(32, 7);
    const skey = formatSignerKey('example.com/timekeeper', SIG_ED25519, seed);
    expect(skey).toBe('PRIVATE+KEY+example.com/timekeeper+5929f48e+AQcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcH');
    expect(signerKeyOf(seed.toString('base64'), 'example.com/timekeeper', 'test')).toBe(skey);
    expect(signNote(checkpointBody('example.com/timekeeper', 5, await treeHead(5, t.read)), noteSigner(skey))).toBe(
      'example.com/timekeeper\n5\nheIMrB8C/ae82y/D+QhWjFcBjHeBXx+jYaytE5lPCL8=\n\n— example.com/timekeeper WSn0jobsVcRJ9WhlOIl+zDRlTufsMz+SXzyC5Sp3psbN914kmE93qggtHWn/Co4Nj4Zl1TdCaFx/2LBlRTBIJEH1YwE=\n',
    );
  });

  test('out-of-range arguments are refused', async () => {
    const t = new MemoryTiles();
    await t.append([leafHash(Buffer.from('x'))]);
    await expect(inclusionProof(1, 1, t.read)).rejects.toThrow('leaf_index must be less than tree_size');
    await expect(consistencyProof(2, 1, t.read)).rejects.toThrow('from must not be greater than to');
    await expect(inclusionProof(-1, 1, t.read)).rejects.toThrow('non-negative');
    await expect(treeHead(2, t.read)).rejects.toThrow('lacks the hashes');
  });
});
