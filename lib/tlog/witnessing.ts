/**
 * The log's side of witnessing (C2SP tlog-witness, client): send a new checkpoint to every
 * configured witness with `add-checkpoint`, retry once per witness on 409 with the size the
 * witness says it has (fetching the consistency proof from that size), check each returned
 * cosignature with the witness's configured key, and return the checkpoint note with the valid
 * cosignatures added and whether the quorum is met.
 *
 * Inputs only: the signed note, what size each witness had last time, and a function that
 * gives consistency proofs, so the checkpoint activity (or a test) can call it anywhere.
 * Requests go through lib/platform/outbound.ts; a configured witness's own host is allowed (the
 * operator named it), redirects elsewhere are guarded as any outbound request.
 */
import { parseCheckpoint } from './checkpoint';
import { cosignatureVerifier } from './cosignature';
import { NoteError, openNote, parseNote, parseVerifierKey, SIG_COSIGNATURE_V1 } from './note';
import { formatAddCheckpoint, TLOG_SIZE_CONTENT_TYPE } from './witness';
import { outboundRequest, type OutboundResponse } from '../platform/outbound';

export interface WitnessEndpoint {
  /** The submission prefix: add-checkpoint is POSTed to `<url>/add-checkpoint`. */
  url: string;
  /** The witness's cosigner verifier key string (type 0x04). */
  verifierKey: string;
  /** The key name (from verifierKey). */
  name: string;
}

export interface WitnessingSettings {
  witnesses: WitnessEndpoint[];
  /** Cosignatures needed for a checkpoint to count as witnessed. */
  quorum: number;
}

/**
 * LOG_WITNESSES (`raw`): entries separated by commas or newlines, each `<url> <verifier key>`;
 * LOG_WITNESS_QUORUM (`rawQuorum`): 0 to the number of witnesses (default: a majority).
 * lib/config.ts reads the variables; this parses them.
 */
export function witnessingSettings(raw: string | undefined, rawQuorum: string | undefined): WitnessingSettings {
  const witnesses = parseWitnessList(raw ?? '');
  const quorum = rawQuorum === undefined || rawQuorum === '' ? (witnesses.length === 0 ? 0 : Math.floor(witnesses.length / 2) + 1) : Number(rawQuorum);
  if (!Number.isInteger(quorum) || quorum < 0 || quorum > witnesses.length) {
    throw new Error(`LOG_WITNESS_QUORUM must be a whole number from 0 to the number of LOG_WITNESSES (${witnesses.length}), got "${rawQuorum}"`);
  }
  return { witnesses, quorum };
}

export function parseWitnessList(raw: string): WitnessEndpoint[] {
  const out: WitnessEndpoint[] = [];
  for (const entry of raw.split(/[,\n]/).map((e) => e.trim()).filter(Boolean)) {
    const parts = entry.split(/\s+/);
    if (parts.length !== 2) throw new Error(`LOG_WITNESSES: each entry is "<url> <verifier key>", got "${entry}"`);
    const [url, verifierKey] = parts;
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new Error(`LOG_WITNESSES: "${url}" is not a URL`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`LOG_WITNESSES: "${url}" is not an http(s) URL`);
    let k;
    try {
      k = parseVerifierKey(verifierKey);
    } catch (err) {
      throw new Error(`LOG_WITNESSES: the key of ${url} is not a verifier key: ${(err as Error).message}`);
    }
    if (k.type !== SIG_COSIGNATURE_V1) throw new Error(`LOG_WITNESSES: the key of ${url} is not a cosignature/v1 key (type 0x04)`);
    if (out.some((w) => w.name === k.name)) throw new Error(`LOG_WITNESSES: two witnesses named ${k.name}`);
    out.push({ url: url.replace(/\/$/, ''), verifierKey, name: k.name });
  }
  return out;
}

export type WitnessRequest = (url: string, body: string) => Promise<Pick<OutboundResponse, 'status' | 'headers' | 'body'>>;

export interface WitnessingInput {
  /** The new checkpoint, signed by the log. */
  note: string;
  witnesses: readonly WitnessEndpoint[];
  quorum: number;
  /** The size each witness (by name) had after the last round; a witness not listed is sent `previousSize`. */
  knownSizes?: Readonly<Record<string, number>>;
  /** The size of the previous checkpoint sent to the witnesses (0 for the first). */
  previousSize: number;
  /** The RFC 9162 consistency proof from tree size `from` to `to` (the log's /v1/log/proof/consistency). */
  consistencyProof: (from: number, to: number) => Promise<Buffer[]>;
  /** Sends one add-checkpoint; default: lib/platform/outbound.ts with the witness's host allowed. */
  request?: WitnessRequest;
  /** Extra hosts outbound requests may reach (OUTBOUND_ALLOW_HOSTS). */
  allowHosts?: readonly string[];
  timeoutMs?: number;
}

export interface WitnessFailure {
  witness: string;
  status?: number;
  reason: string;
}

export interface WitnessingResult {
  /** The checkpoint note with every valid cosignature added. */
  note: string;
  quorumMet: boolean;
  /** Names of the witnesses that cosigned. */
  cosigners: string[];
  /** The size each witness has now, as far as the log knows (pass it back next time). */
  sizes: Record<string, number>;
  failures: WitnessFailure[];
}

const defaultRequest =
  (allowHosts: readonly string[], timeoutMs: number | undefined): WitnessRequest =>
  (url, body) =>
    outboundRequest(url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      allowHosts: [...allowHosts, new URL(url).hostname],
      timeoutMs,
    });

/** At most this many add-checkpoint calls per witness per round (the first, and one per 409). */
const MAX_ATTEMPTS = 3;

export async function witnessCheckpoint(input: WitnessingInput): Promise<WitnessingResult> {
  const { text } = parseNote(input.note);
  const cp = parseCheckpoint(text);
  const send = input.request ?? defaultRequest(input.allowHosts ?? [], input.timeoutMs);
  const sizes: Record<string, number> = {};
  const failures: WitnessFailure[] = [];
  const lines: string[] = [];
  const cosigners: string[] = [];

  await Promise.all(
    input.witnesses.map(async (w) => {
      let old = input.knownSizes?.[w.name] ?? input.previousSize;
      if (old > cp.size) old = input.previousSize <= cp.size ? input.previousSize : 0;
      for (let attempt = 1; ; attempt++) {
        let res: Pick<OutboundResponse, 'status' | 'headers' | 'body'>;
        try {
          const proof = old === 0 || old === cp.size ? [] : await input.consistencyProof(old, cp.size);
          res = await send(`${w.url}/add-checkpoint`, formatAddCheckpoint(old, proof, input.note));
        } catch (err) {
          failures.push({ witness: w.name, reason: (err as Error).message });
          return;
        }
        const contentType = String(res.headers['content-type'] ?? '').split(';')[0].trim();
        if (res.status === 409 && contentType === TLOG_SIZE_CONTENT_TYPE) {
          const m = /^(0|[1-9][0-9]*)\n$/.exec(res.body);
          const has = m ? Number(m[1]) : NaN;
          if (!Number.isSafeInteger(has)) {
            failures.push({ witness: w.name, status: 409, reason: 'a 409 without a valid size' });
            return;
          }
          sizes[w.name] = has;
          if (has > cp.size) {
            failures.push({ witness: w.name, status: 409, reason: `the witness has size ${has}, larger than this checkpoint's ${cp.size}` });
            return;
          }
          if (attempt >= MAX_ATTEMPTS || has === old) {
            failures.push({ witness: w.name, status: 409, reason: `the witness keeps answering 409 (size ${has})` });
            return;
          }
          old = has;
          continue;
        }
        if (res.status !== 200) {
          failures.push({ witness: w.name, status: res.status, reason: res.body.trim().slice(0, 300) || `HTTP ${res.status}` });
          return;
        }
        const got = validCosignatures(input.note, res.body, w);
        if (typeof got === 'string') {
          failures.push({ witness: w.name, status: 200, reason: got });
          return;
        }
        sizes[w.name] = cp.size;
        lines.push(...got);
        cosigners.push(w.name);
        return;
      }
    }),
  );

  // Keep the configured order of witnesses in the note, whatever order they answered in.
  const order = new Map(input.witnesses.map((w, i) => [w.name, i]));
  cosigners.sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
  lines.sort((a, b) => (order.get(lineName(a)) ?? 0) - (order.get(lineName(b)) ?? 0));
  const already = new Set(input.note.slice(input.note.lastIndexOf('\n\n') + 2).split('\n'));
  const added = lines.filter((l) => !already.has(l.slice(0, -1)));
  return { note: input.note + added.join(''), quorumMet: cosigners.length >= input.quorum, cosigners, sizes, failures };
}

const lineName = (line: string): string => line.slice(2).split(' ')[0];

/** The witness's valid cosignature lines in an add-checkpoint answer, or why there are none. */
function validCosignatures(note: string, body: string, w: WitnessEndpoint): string[] | string {
  if (body.length === 0 || !body.endsWith('\n') || !body.split('\n').slice(0, -1).every((l) => l.startsWith('\u2014 '))) {
    return 'the answer is not signature lines';
  }
  try {
    const opened = openNote(note + body, [cosignatureVerifier(w.verifierKey)]);
    return opened.verified.map((s) => `\u2014 ${s.name} ${s.base64}\n`);
  } catch (err) {
    if (err instanceof NoteError) return `no valid cosignature from ${w.name}: ${err.message}`;
    throw err;
  }
}
