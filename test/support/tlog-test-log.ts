/**
 * A stand-in log for witness tests: a MemoryTree with a signing key that publishes signed
 * checkpoints and serves consistency proofs, as the log's builder does.
 */
import { randomBytes } from 'node:crypto';
import { formatCheckpoint } from '../../lib/tlog/checkpoint';
import { generateNoteKey, noteSigner, signNote } from '../../lib/tlog/note';
import { MemoryTree } from './tlog-memory-tree';

export class TestLog {
  readonly tree = new MemoryTree();
  readonly key: { signerKey: string; verifierKey: string };
  readonly data: Buffer[] = [];

  constructor(
    readonly origin = 'timekeeper.test/log',
    key?: { signerKey: string; verifierKey: string },
  ) {
    this.key = key ?? generateNoteKey(origin);
  }

  /** Appends n random 32-byte leaves (stand-ins for records' chain hashes). */
  grow(n: number): this {
    for (let i = 0; i < n; i++) this.add(randomBytes(32));
    return this;
  }

  add(d: Buffer): void {
    this.data.push(d);
    this.tree.append(d);
  }

  /** The signed checkpoint note at `size` (default: the whole tree). */
  checkpoint(size = this.tree.size, extensions: string[] = []): string {
    return signNote(formatCheckpoint({ origin: this.origin, size, rootHash: this.tree.root(size), extensions }), noteSigner(this.key.signerKey));
  }

  consistency = (from: number, to: number): Promise<Buffer[]> => Promise.resolve(this.tree.consistency(from, to));

  /** A copy of this log's first `n` leaves with leaf `at` replaced: what a rewriter would publish. */
  fork(at: number, n = this.tree.size): TestLog {
    const f = new TestLog(this.origin, this.key);
    for (let i = 0; i < n; i++) f.add(i === at ? randomBytes(32) : this.data[i]);
    return f;
  }
}
