/**
 * Outgoing HTTP for tasks (agents, deliveries, alerts) behind an SSRF guard: a request may
 * not reach loopback, link-local, private, unique-local or unspecified addresses — checked
 * on the address the connection actually uses (the DNS answer, at connect time, so a
 * rebinding name gains nothing) and again on every redirect — unless its host is listed in
 * OUTBOUND_ALLOW_HOSTS (lib/config.ts).
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { LIMITS } from './domain/limits';

export class OutboundRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboundRefused';
  }
}

export interface OutboundResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Addresses a task must not reach unless allowed. */
export function isPrivateAddress(address: string): boolean {
  const v4 = net.isIPv4(address) ? address : /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (v4) {
    const [a, b] = v4.split('.').map(Number);
    return (
      a === 0 || a === 10 || a === 127 || (a === 100 && b >= 64 && b <= 127) || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || a >= 224
    );
  }
  const x = address.toLowerCase();
  return x === '::' || x === '::1' || x.startsWith('fe8') || x.startsWith('fe9') || x.startsWith('fea') || x.startsWith('feb') || x.startsWith('fc') || x.startsWith('fd') || x.startsWith('ff');
}

export interface OutboundOptions {
  method?: 'POST' | 'GET';
  headers?: Record<string, string>;
  body?: string;
  allowHosts: readonly string[];
  timeoutMs?: number;
}

/** One request, following up to LIMITS.outboundMaxRedirects redirects, each hop guarded. */
export async function outboundRequest(url: string, opts: OutboundOptions): Promise<OutboundResponse> {
  let current = new URL(url);
  let method = opts.method ?? 'POST';
  let body = opts.body;
  for (let hop = 0; ; hop++) {
    const res = await once(current, method, body, opts);
    const loc = res.headers.location;
    if (res.status >= 300 && res.status < 400 && loc) {
      if (hop >= LIMITS.outboundMaxRedirects) throw new OutboundRefused(`more than ${LIMITS.outboundMaxRedirects} redirects`);
      current = new URL(loc, current);
      // 303 (and, as browsers do, 301/302 after POST) continue as GET without a body.
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
      }
      continue;
    }
    return res;
  }
}

function once(u: URL, method: string, body: string | undefined, opts: OutboundOptions): Promise<OutboundResponse> {
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return Promise.reject(new OutboundRefused(`${u.protocol} URLs are not allowed`));
  const host = u.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const allowed = opts.allowHosts.includes(host);
  const lookup: net.LookupFunction = (hostname, options, cb) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return cb(err, '', 4);
      const list = addresses as dns.LookupAddress[];
      const bad = list.find((a) => isPrivateAddress(a.address));
      if (bad && !allowed) return cb(new OutboundRefused(`${hostname} resolves to ${bad.address}, a private or local address; list the host in OUTBOUND_ALLOW_HOSTS to allow it`), '', 4);
      if ((options as { all?: boolean }).all) return (cb as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      cb(null, list[0].address, list[0].family);
    });
  };
  if (net.isIP(host) && isPrivateAddress(host) && !allowed) {
    return Promise.reject(new OutboundRefused(`${host} is a private or local address; list it in OUTBOUND_ALLOW_HOSTS to allow it`));
  }
  const mod = u.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(
      u,
      {
        method,
        headers: { ...(body !== undefined ? { 'content-length': Buffer.byteLength(body).toString() } : {}), ...opts.headers },
        lookup,
        timeout: opts.timeoutMs ?? LIMITS.outboundTimeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > LIMITS.outboundMaxResponseBytes) {
            req.destroy(new Error(`answer larger than ${LIMITS.outboundMaxResponseBytes} bytes`));
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${opts.timeoutMs ?? LIMITS.outboundTimeoutMs} ms`)));
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}
