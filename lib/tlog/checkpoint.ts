/**
 * C2SP tlog-checkpoint (https://c2sp.org/tlog-checkpoint): the note text of a signed tree head.
 *
 *   <origin>\n<tree size, decimal, no leading zeroes>\n<base64 root hash>\n[<extension line>\n]*
 *
 * Parsing is strict: every line non-empty, the size canonical decimal within JavaScript's safe
 * integers, the root canonical base64 of exactly 32 bytes (SHA-256). Hand-written (a handful of
 * lines; no maintained npm package for it).
 */

export interface Checkpoint {
  origin: string;
  size: number;
  /** The RFC 6962 root hash (32 bytes). */
  rootHash: Buffer;
  /** Extension lines, opaque, without their newlines. */
  extensions: string[];
}

export class CheckpointError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckpointError';
  }
}

/** The note text of a checkpoint (ends in a newline). */
export function formatCheckpoint(c: Checkpoint): string {
  if (c.origin.length === 0 || c.origin.includes('\n')) throw new CheckpointError('the origin is one non-empty line');
  if (!Number.isSafeInteger(c.size) || c.size < 0) throw new CheckpointError('the size is a non-negative safe integer');
  if (c.rootHash.length !== 32) throw new CheckpointError('the root hash is 32 bytes');
  for (const e of c.extensions) if (e.length === 0 || e.includes('\n')) throw new CheckpointError('an extension line is one non-empty line');
  return [c.origin, String(c.size), c.rootHash.toString('base64'), ...c.extensions].map((l) => `${l}\n`).join('');
}

/** Parses a checkpoint note text (not a signed note: open the note first, then parse its text). */
export function parseCheckpoint(text: string): Checkpoint {
  if (!text.endsWith('\n')) throw new CheckpointError('a checkpoint text ends in a newline');
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3) throw new CheckpointError('a checkpoint has an origin, a size and a root hash line');
  if (lines.some((l) => l.length === 0)) throw new CheckpointError('checkpoint lines are non-empty');
  const [origin, sizeLine, rootLine, ...extensions] = lines;
  if (!/^(0|[1-9][0-9]*)$/.test(sizeLine)) throw new CheckpointError('the size line is a decimal number without leading zeroes');
  const size = Number(sizeLine);
  if (!Number.isSafeInteger(size)) throw new CheckpointError('the tree size is too large');
  const rootHash = Buffer.from(rootLine, 'base64');
  if (rootLine.length !== 44 || rootHash.length !== 32 || rootHash.toString('base64') !== rootLine) throw new CheckpointError('the root hash line is the base64 of 32 bytes');
  return { origin, size, rootHash, extensions };
}
