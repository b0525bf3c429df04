/**
 * Outgoing HTTP for tasks (agents, deliveries, alerts) behind an SSRF guard: a request may
 * reach only public unicast addresses, judged by address and not by spelling
 * (lib/platform/ip-address.ts: loopback, private, link-local and metadata, CGNAT, unique- and
 * site-local, multicast, reserved, and IPv4 carried in IPv6 are refused) unless its host is
 * listed in OUTBOUND_ALLOW_HOSTS (lib/config.ts). The check runs on the IP literal of the URL,
 * on every address a name resolves to (at connect time, so a rebinding name gains nothing),
 * and again on every redirect hop. Node's http client is used directly (not fetch) because
 * only its `lookup` hook lets the guard see the addresses a connection will use.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import { LIMITS } from '../domain/limits';
import { canonicalAddress, judgeAddress } from './ip-address';

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

/** A host as OUTBOUND_ALLOW_HOSTS entries are compared: lower case, no brackets, no trailing dot. */
const hostKey = (host: string) => host.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();

/**
 * Whether the operator allowed this host although it is private or local: listed by name,
 * or (for an IP literal) the same address in any spelling (`::ffff:7f00:1` is 127.0.0.1).
 */
export function hostAllowed(host: string, allowHosts: readonly string[]): boolean {
  const key = hostKey(host);
  if (allowHosts.some((h) => hostKey(h) === key)) return true;
  const address = canonicalAddress(key);
  return address !== undefined && allowHosts.some((h) => canonicalAddress(hostKey(h)) === address);
}

/** Why an address may not be reached, or undefined when it may. */
function addressProblem(address: string, host: string): string | undefined {
  const v = judgeAddress(address);
  if (!v?.refused) return undefined;
  const what = `${v.address}${v.embedded ? ` (carrying ${v.embedded})` : ''}`;
  const kind = `a private or local address (${v.range}), not public unicast; list the host in OUTBOUND_ALLOW_HOSTS to allow it`;
  return host === address ? `${what} is ${kind}` : `${host} resolves to ${what}, ${kind}`;
}

/**
 * The early check a task definition gets (POST/PATCH /v1/tasks): an http(s) URL whose host is
 * an IP literal in a refused range, in any spelling Node's URL parser accepts (decimal
 * 2130706433, octal 0177.0.0.1, hex 0x7f.1, short 127.1, IPv4 in IPv6), is refused. Names are
 * resolved only when the request is made (a name's answer may change), so they pass here.
 */
export function urlProblem(url: string, allowHosts: readonly string[]): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'must be an http(s) URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'must be an http(s) URL';
  const host = hostKey(u.hostname);
  if (hostAllowed(host, allowHosts)) return undefined;
  return addressProblem(host, host);
}

/**
 * What a run's reason says about an answer outside 2xx: its status line with the standard
 * reason phrase (`HTTP 500 Internal Server Error`, not the server's own text), and the start
 * of its body only when the operator opted in (OUTBOUND_ECHO_BODIES): otherwise a URL that
 * reaches an internal service could read that service's answers back through the run.
 */
export function answerLine(res: Pick<OutboundResponse, 'status' | 'body'>, echoBodies: boolean): string {
  const phrase = http.STATUS_CODES[res.status];
  const line = `HTTP ${res.status}${phrase ? ` ${phrase}` : ''}`;
  return echoBodies && res.body ? `${line}: ${res.body.slice(0, 300)}` : line;
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
  let headers = opts.headers;
  for (let hop = 0; ; hop++) {
    const res = await once(current, method, body, { ...opts, headers });
    const loc = res.headers.location;
    if (res.status >= 300 && res.status < 400 && loc) {
      if (hop >= LIMITS.outboundMaxRedirects) throw new OutboundRefused(`more than ${LIMITS.outboundMaxRedirects} redirects`);
      const next = new URL(loc, current);
      // As fetch does: credentials (an agent's bearer token) never follow a redirect to another origin.
      if (next.origin !== current.origin && headers) headers = Object.fromEntries(Object.entries(headers).filter(([k]) => k.toLowerCase() !== 'authorization'));
      current = next;
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
  const host = hostKey(u.hostname);
  const allowed = hostAllowed(host, opts.allowHosts);
  // An IP literal never reaches `lookup` (net connects to it directly): it is judged here.
  const literal = allowed ? undefined : addressProblem(host, host);
  if (literal) return Promise.reject(new OutboundRefused(literal));
  // A name is judged by every address it resolves to, at connect time (so a rebinding name gains nothing).
  const lookup: net.LookupFunction = (hostname, options, cb) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return cb(err, '', 4);
      const list = addresses as dns.LookupAddress[];
      const problem = allowed ? undefined : list.map((a) => addressProblem(a.address, hostname)).find(Boolean);
      if (problem) return cb(new OutboundRefused(problem), '', 4);
      if ((options as { all?: boolean }).all) return (cb as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      cb(null, list[0].address, list[0].family);
    });
  };
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
