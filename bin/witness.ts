/**
 * `timekeeper witness`: a C2SP tlog-witness anyone can run (lib/tlog/witness.ts behind
 * lib/tlog/witness-server.ts), with its own cosigner key file and state file. Options fall
 * back to WITNESS_* environment variables; see docs/operations.md#witness.
 */
import os from 'node:os';
import path from 'node:path';
import { parseVerifierKey, SIG_ED25519 } from '../lib/tlog/note';
import { Witness, WitnessStateStore, type WitnessedLog } from '../lib/tlog/witness';
import { loadOrCreateWitnessKey, startWitnessServer } from '../lib/tlog/witness-server';

export interface WitnessCliOptions {
  keyFile?: string;
  stateFile?: string;
  name?: string;
  log?: string[];
  listen?: string;
  prefix?: string;
  printKey?: boolean;
}

/** `<verifier key>` (origin = key name) or `<origin> <verifier key>`, comma- or newline-separated in WITNESS_LOGS. */
export function parseWitnessedLogs(entries: readonly string[]): WitnessedLog[] {
  const byOrigin = new Map<string, string[]>();
  for (const entry of entries.flatMap((e) => e.split(/[,\n]/)).map((e) => e.trim()).filter(Boolean)) {
    const parts = entry.split(/\s+/);
    if (parts.length > 2) throw new Error(`a witnessed log is "<verifier key>" or "<origin> <verifier key>", got "${entry}"`);
    const vkey = parts[parts.length - 1];
    const k = parseVerifierKey(vkey);
    if (k.type !== SIG_ED25519) throw new Error(`the log key ${vkey} is not an Ed25519 note key (type 0x01)`);
    const origin = parts.length === 2 ? parts[0] : k.name;
    byOrigin.set(origin, [...(byOrigin.get(origin) ?? []), vkey]);
  }
  return [...byOrigin].map(([origin, verifierKeys]) => ({ origin, verifierKeys }));
}

export function parseListen(s: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(s);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new Error(`--listen is <host>:<port>, got "${s}"`);
  return { host: m[1] ?? m[2], port };
}

export async function runWitness(o: WitnessCliOptions, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const dir = path.join(env.TIMEKEEPER_DATA_DIR || 'data', 'witness');
  const keyFile = o.keyFile ?? env.WITNESS_KEY_FILE ?? path.join(dir, 'witness.key');
  const key = loadOrCreateWitnessKey(keyFile, o.name ?? env.WITNESS_NAME ?? `witness/${os.hostname()}`);
  if (o.printKey) {
    process.stdout.write(`${key.verifierKey}\n`);
    return;
  }
  const logs = parseWitnessedLogs(o.log?.length ? o.log : [env.WITNESS_LOGS ?? '']);
  if (logs.length === 0) throw new Error('name at least one log to witness: --log "<verifier key>" (or WITNESS_LOGS)');
  const store = new WitnessStateStore(o.stateFile ?? env.WITNESS_STATE_FILE ?? path.join(dir, 'state.json'));
  const say = (m: string) => void process.stderr.write(`[witness] ${m}\n`);
  const witness = new Witness({
    signerKey: key.signerKey,
    logs,
    store,
    onRefusal: (r) => say(`refused a checkpoint of ${r.origin} (${r.status}): ${r.reason}`),
  });
  const server = await startWitnessServer(witness, { ...parseListen(o.listen ?? env.WITNESS_LISTEN ?? '127.0.0.1:8010'), prefix: o.prefix ?? env.WITNESS_PREFIX });
  if (key.created) say(`created a new witness key in ${keyFile}`);
  say(`${witness.name} listening on ${server.url}/add-checkpoint; state in ${store.file}`);
  say(`witnessing ${logs.map((l) => l.origin).join(', ')}`);
  // The line a log operator copies into LOG_WITNESSES.
  process.stdout.write(`${server.url} ${key.verifierKey}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => void server.close().then(resolve);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
