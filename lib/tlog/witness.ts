/**
 * A C2SP tlog-witness (https://c2sp.org/tlog-witness): the `add-checkpoint` logic and the
 * witness's state. For each log it knows (origin → the log's verifier keys) it keeps the latest
 * checkpoint it cosigned; a new checkpoint is cosigned only when the log signed it and a
 * consistency proof from that checkpoint verifies. Status codes as the spec gives them:
 *   400 malformed request, or old size > checkpoint size;
 *   403 no signature from a key the witness trusts for the origin;
 *   404 unknown origin;
 *   409 old size is not the size the witness has (body: that size, text/x.tlog.size), or
 *       same size with another root hash (a fork);
 *   422 the consistency proof does not verify.
 * Requests run one at a time and the new state is on disk (written to a temporary file,
 * fsynced and renamed over the old one) before the cosignature is returned, so a witness that
 * crashes never signs a size below one it already signed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseCheckpoint, type Checkpoint } from './checkpoint';
import { cosignatureSigner, cosignatureVerifier, cosignerVerifierKey } from './cosignature';
import { decodeBase64, NoteError, noteVerifier, openNote, parseNote, signatureLine, type NoteSigner, type NoteVerifier } from './note';
import { MAX_PROOF_HASHES, verifyConsistency } from './verify';

/** The longest add-checkpoint body accepted (63 proof lines and a checkpoint with signatures fit easily). */
export const MAX_ADD_CHECKPOINT_BYTES = 64 * 1024;

export const TLOG_SIZE_CONTENT_TYPE = 'text/x.tlog.size';

export interface WitnessedLog {
  origin: string;
  /** Verifier key strings (Ed25519, type 0x01) the witness trusts for this origin. */
  verifierKeys: string[];
}

/** What the witness remembers per origin: the latest checkpoint it cosigned. */
export interface LogState {
  size: number;
  /** Base64 root hash. */
  root: string;
  /** The cosigned checkpoint note as received (log signature included), for inspection. */
  checkpoint: string;
  /** When it was cosigned (POSIX ms). */
  cosigned_at: number;
}

export interface WitnessStateFile {
  version: 1;
  logs: Record<string, LogState>;
}

export interface WitnessAnswer {
  status: number;
  contentType: string;
  body: string;
}

export class WitnessStateError extends Error {}

/** The witness state on disk: read at start, replaced atomically on every cosignature. */
export class WitnessStateStore {
  constructor(readonly file: string) {}

  read(): WitnessStateFile {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, logs: {} };
      throw err;
    }
    const parsed = JSON.parse(text) as WitnessStateFile;
    if (parsed?.version !== 1 || typeof parsed.logs !== 'object' || parsed.logs === null) throw new WitnessStateError(`${this.file} is not a witness state file (version 1)`);
    for (const [origin, s] of Object.entries(parsed.logs)) {
      if (!Number.isSafeInteger(s.size) || s.size < 0 || decodeBase64(s.root)?.length !== 32) throw new WitnessStateError(`${this.file}: the state of ${origin} is damaged`);
    }
    return parsed;
  }

  /** Writes `state` durably: temporary file, fsync, rename over the old file, fsync the folder. */
  write(state: WitnessStateFile): void {
    const dir = path.dirname(this.file);
    fs.mkdirSync(dir, { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    const fd = fs.openSync(tmp, 'w', 0o600);
    try {
      fs.writeSync(fd, JSON.stringify(state, null, 2) + '\n');
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, this.file);
    const dfd = fs.openSync(dir, 'r');
    try {
      fs.fsyncSync(dfd);
    } finally {
      fs.closeSync(dfd);
    }
  }
}

/** An add-checkpoint request body, parsed: `old <size>\n`, proof lines, a blank line, the checkpoint note. */
export interface AddCheckpointRequest {
  oldSize: number;
  proof: Buffer[];
  note: string;
}

export class RequestError extends Error {}

export function parseAddCheckpoint(body: string): AddCheckpointRequest {
  const blank = body.indexOf('\n\n');
  if (blank < 0) throw new RequestError('the body is "old <size>", proof lines, a blank line and the checkpoint');
  const head = body.slice(0, blank).split('\n');
  const note = body.slice(blank + 2);
  const m = /^old (0|[1-9][0-9]*)$/.exec(head[0]);
  if (!m) throw new RequestError('the first line is "old <size>" (decimal, no leading zeroes)');
  const oldSize = Number(m[1]);
  if (!Number.isSafeInteger(oldSize)) throw new RequestError('the old size is too large');
  const lines = head.slice(1);
  if (lines.length > 63) throw new RequestError('at most 63 consistency proof lines');
  const proof = lines.map((l) => {
    const h = decodeBase64(l);
    if (!h || h.length !== 32) throw new RequestError('each consistency proof line is the base64 of a 32-byte hash');
    return h;
  });
  return { oldSize, proof, note };
}

/** The request body for `add-checkpoint`. */
export function formatAddCheckpoint(oldSize: number, proof: readonly Buffer[], note: string): string {
  return `old ${oldSize}\n${proof.map((h) => `${h.toString('base64')}\n`).join('')}\n${note}`;
}

export interface WitnessOptions {
  /** The witness's cosigner key string (type 0x04). */
  signerKey: string;
  logs: WitnessedLog[];
  store: WitnessStateStore;
  now?: () => number;
  /** Told about every refusal of a checkpoint the log did sign: it may be evidence of a fork. */
  onRefusal?: (r: { origin: string; status: number; reason: string; note: string }) => void;
}

export class Witness {
  private readonly signer: NoteSigner;
  /** The witness's verifier key string (type 0x04), for the logs' LOG_WITNESSES. */
  readonly verifierKey: string;
  private readonly logs = new Map<string, NoteVerifier[]>();
  private state: WitnessStateFile;
  /** Requests run one at a time: the size check and the persisted update are one step. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: WitnessOptions) {
    this.signer = cosignatureSigner(opts.signerKey, opts.now);
    for (const l of opts.logs) this.logs.set(l.origin, l.verifierKeys.map(noteVerifier));
    this.state = opts.store.read();
    this.verifierKey = cosignerVerifierKey(opts.signerKey);
  }

  get name(): string {
    return this.signer.name;
  }

  /** The state of one origin (size and root it last cosigned), or undefined. */
  logState(origin: string): LogState | undefined {
    return this.state.logs[origin];
  }

  addCheckpoint(body: string): Promise<WitnessAnswer> {
    const run = this.queue.then(() => this.handle(body));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private handle(body: string): WitnessAnswer {
    let req: AddCheckpointRequest;
    let cp: Checkpoint;
    try {
      req = parseAddCheckpoint(body);
      cp = parseCheckpoint(parseNote(req.note).text);
    } catch (err) {
      if (err instanceof RequestError || err instanceof NoteError || (err as Error).name === 'CheckpointError') return text(400, `${(err as Error).message}\n`);
      throw err;
    }
    const known = this.logs.get(cp.origin);
    if (!known) return text(404, `unknown log origin ${JSON.stringify(cp.origin)}\n`);
    try {
      openNote(req.note, known);
    } catch (err) {
      if (err instanceof NoteError) return text(err.kind === 'malformed' ? 400 : 403, `${err.message}\n`);
      throw err;
    }
    const refuse = (status: number, reason: string, extra?: WitnessAnswer): WitnessAnswer => {
      this.opts.onRefusal?.({ origin: cp.origin, status, reason, note: req.note });
      return extra ?? text(status, `${reason}\n`);
    };
    if (req.oldSize > cp.size) return refuse(400, `old size ${req.oldSize} is larger than the checkpoint size ${cp.size}`);
    const have = this.state.logs[cp.origin];
    const haveSize = have?.size ?? 0;
    if (req.oldSize !== haveSize) {
      return refuse(409, `old size ${req.oldSize} is not the size ${haveSize} this witness has`, { status: 409, contentType: TLOG_SIZE_CONTENT_TYPE, body: `${haveSize}\n` });
    }
    if (req.proof.length > MAX_PROOF_HASHES) return text(400, 'proof too long\n');
    if (have && req.oldSize === cp.size) {
      if (have.root !== cp.rootHash.toString('base64')) return refuse(409, `same size ${cp.size} with another root hash: a fork`);
      if (req.proof.length !== 0) return refuse(422, 'the consistency proof between equal sizes is empty');
    } else if (haveSize === 0) {
      if (req.proof.length !== 0) return refuse(422, 'the consistency proof from size 0 is empty');
    } else if (!verifyConsistency(haveSize, cp.size, Buffer.from(have!.root, 'base64'), cp.rootHash, req.proof)) {
      return refuse(422, `the consistency proof from ${haveSize} to ${cp.size} does not verify`);
    }
    const textBytes = Buffer.from(parseNote(req.note).text, 'utf8');
    const sig = this.signer.sign(textBytes);
    const next: WitnessStateFile = {
      version: 1,
      logs: { ...this.state.logs, [cp.origin]: { size: cp.size, root: cp.rootHash.toString('base64'), checkpoint: req.note, cosigned_at: (this.opts.now ?? Date.now)() } },
    };
    this.opts.store.write(next); // durable before the answer
    this.state = next;
    return text(200, signatureLine(this.signer.name, this.signer.keyId, sig));
  }
}

function text(status: number, body: string): WitnessAnswer {
  return { status, contentType: 'text/plain; charset=utf-8', body };
}

/** The verifier of a witness's cosignatures, from its verifier key string (type 0x04). */
export const witnessVerifier = cosignatureVerifier;
