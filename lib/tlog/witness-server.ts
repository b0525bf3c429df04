/**
 * The witness's HTTP face (`timekeeper witness`): POST <prefix>/add-checkpoint per C2SP
 * tlog-witness, answered by lib/tlog/witness.ts, plus GET <prefix>/key (the verifier key, a
 * convenience for operators). A plain node:http server: one route, a bounded text body, no
 * framework needed. Bodies over MAX_ADD_CHECKPOINT_BYTES get 413 before they are read in full.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { cosignerVerifierKey, generateCosignerKey } from './cosignature';
import { parseSignerKey, SIG_COSIGNATURE_V1 } from './note';
import { MAX_ADD_CHECKPOINT_BYTES, type Witness } from './witness';

export interface WitnessServer {
  url: string;
  close(): Promise<void>;
}

export function startWitnessServer(witness: Witness, opts: { host: string; port: number; prefix?: string }): Promise<WitnessServer> {
  const prefix = (opts.prefix ?? '').replace(/\/$/, '');
  const server = http.createServer((req, res) => {
    const send = (status: number, contentType: string, body: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body).toString(), ...headers });
      res.end(body);
    };
    const url = new URL(req.url ?? '/', 'http://witness');
    if (url.pathname === `${prefix}/key` && req.method === 'GET') return send(200, 'text/plain; charset=utf-8', `${witness.verifierKey}\n`);
    if (url.pathname !== `${prefix}/add-checkpoint`) return send(404, 'text/plain; charset=utf-8', 'not found\n');
    if (req.method !== 'POST') return send(405, 'text/plain; charset=utf-8', 'add-checkpoint is POST\n', { allow: 'POST' });
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > MAX_ADD_CHECKPOINT_BYTES) {
      send(413, 'text/plain; charset=utf-8', `body larger than ${MAX_ADD_CHECKPOINT_BYTES} bytes\n`, { connection: 'close' });
      req.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_ADD_CHECKPOINT_BYTES && !refused) {
        refused = true;
        send(413, 'text/plain; charset=utf-8', `body larger than ${MAX_ADD_CHECKPOINT_BYTES} bytes\n`, { connection: 'close' });
        req.destroy();
      } else if (!refused) chunks.push(c);
    });
    req.on('end', () => {
      if (refused) return;
      const raw = Buffer.concat(chunks);
      const body = raw.toString('utf8');
      if (!Buffer.from(body, 'utf8').equals(raw)) return send(400, 'text/plain; charset=utf-8', 'the body is not UTF-8\n');
      witness.addCheckpoint(body).then(
        (a) => send(a.status, a.contentType, a.body),
        (err: Error) => send(500, 'text/plain; charset=utf-8', `witness error: ${err.message}\n`),
      );
    });
  });
  server.keepAliveTimeout = 30_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      const a = server.address() as AddressInfo;
      const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
      resolve({
        url: `http://${host}:${a.port}${prefix}`,
        close: () =>
          new Promise<void>((r) => {
            server.close(() => r());
            server.closeAllConnections();
          }),
      });
    });
  });
}

/**
 * The witness's cosigner key: read from `file` (a signer key string of type 0x04), or created
 * there on first start for `name` (mode 0600, exclusive create, so two starts never make two keys).
 */
export function loadOrCreateWitnessKey(file: string, name: string): { signerKey: string; verifierKey: string; created: boolean } {
  let created = false;
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    try {
      fs.writeFileSync(file, `${generateCosignerKey(name).signerKey}\n`, { mode: 0o600, flag: 'wx' });
      created = true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  const signerKey = fs.readFileSync(file, 'utf8').trim();
  const k = parseSignerKey(signerKey);
  if (k.type !== SIG_COSIGNATURE_V1) throw new Error(`${file}: not a cosignature/v1 signer key (type 0x04)`);
  return { signerKey, verifierKey: cosignerVerifierKey(signerKey), created };
}
