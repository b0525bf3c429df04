/**
 * What an IP address really is, whatever its spelling: the SSRF guard's (lib/platform/outbound.ts)
 * judgement of one address. Parsing and the special-purpose range tables are ipaddr.js's (a
 * maintained library, the one Express's proxy-addr uses); the only hand-written part is the
 * unwrapping of IPv4 addresses carried inside IPv6 ones (mapped `::ffff:a.b.c.d`, the RFC 6145
 * translated form, IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16` and
 * Teredo's client address), because ipaddr.js names those ranges but does not judge what they
 * carry: `::ffff:7f00:1` is 127.0.0.1, and is refused as loopback.
 *
 * Only globally routable unicast is public. Everything ipaddr.js names otherwise is refused:
 * loopback, link-local (with the cloud metadata address 169.254.169.254), private, CGNAT
 * 100.64/10, unique-local (with AWS's fd00:ec2::254), site-local fec0::/10, multicast,
 * unspecified, broadcast, and the reserved, benchmarking and documentation ranges.
 * Host names are not addresses: the caller resolves them and judges every answer.
 */
import ipaddr from 'ipaddr.js';

export interface AddressVerdict {
  /** The address in canonical form (IPv4 dotted quad, IPv6 RFC 5952), as given. */
  address: string;
  /** The IPv4 address an IPv6 one carries (mapped, compatible, NAT64, 6to4, Teredo), if any. */
  embedded?: string;
  /** The range the judged address falls in (ipaddr.js's names: unicast, loopback, private, …). */
  range: string;
  /** True unless the address (and whatever it carries) is globally routable unicast. */
  refused: boolean;
}

/** Strips URL brackets; an IPv6 zone (`fe80::1%eth0`) stays for ipaddr.js to parse. */
const bare = (host: string) => host.replace(/^\[(.*)\]$/, '$1');

/** True when `host` is an IP address literal (any form ipaddr.js takes strictly: four-part IPv4 or IPv6). */
export function isIpLiteral(host: string): boolean {
  const h = bare(host);
  return ipaddr.IPv4.isValidFourPartDecimal(h) || ipaddr.IPv6.isValid(h);
}

const v4 = (bytes: number[]) => new ipaddr.IPv4(bytes);

/** The IPv4 address an IPv6 address carries, or undefined. */
function embeddedV4(a: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const p = a.parts;
  const b = a.toByteArray();
  const low32 = () => v4(b.slice(12, 16));
  const range = a.range();
  if (range === 'ipv4Mapped' || range === 'rfc6145') return low32();
  // NAT64 well-known prefix 64:ff9b::/96 (RFC 6052); the local-use 64:ff9b:1::/48 is refused as a whole below.
  if (p[0] === 0x64 && p[1] === 0xff9b && p.slice(2, 6).every((x) => x === 0)) return low32();
  // IPv4-compatible ::a.b.c.d (deprecated, RFC 4291), except :: and ::1 themselves.
  if (p.slice(0, 6).every((x) => x === 0) && !(p[6] === 0 && (p[7] === 0 || p[7] === 1))) return low32();
  // 6to4 2002:AABB:CCDD::/48 (RFC 3056).
  if (range === '6to4') return v4(b.slice(2, 6));
  // Teredo 2001:0::/32 (RFC 4380): the client's address, bit-inverted, in the last 32 bits.
  if (range === 'teredo') return v4(b.slice(12, 16).map((x) => x ^ 0xff));
  return undefined;
}

/** IPv6 ranges that are not themselves refused but carry an IPv4 address to judge. */
const CARRIERS = new Set(['ipv4Mapped', 'rfc6145', 'rfc6052', '6to4', 'teredo']);

/** Judges an IP literal (undefined when `host` is none); brackets, zones and IPv4 spellings Node's URL left are handled. */
export function judgeAddress(host: string): AddressVerdict | undefined {
  const h = bare(host);
  if (!isIpLiteral(h)) return undefined;
  const parsed = ipaddr.parse(h);
  if (parsed.kind() === 'ipv4') {
    const range = parsed.range();
    return { address: parsed.toString(), range, refused: range !== 'unicast' };
  }
  const a = parsed as ipaddr.IPv6;
  const address = a.toRFC5952String();
  const inner = embeddedV4(a);
  if (inner) {
    const range = inner.range();
    return { address, embedded: inner.toString(), range, refused: range !== 'unicast' };
  }
  const range = a.range();
  // 64:ff9b:1::/48 (local-use NAT64) carries no address at a fixed place: refused.
  return { address, range, refused: range !== 'unicast' || CARRIERS.has(range) };
}

/** The address two spellings share (for OUTBOUND_ALLOW_HOSTS entries): IPv4, or what an IPv6 address carries. */
export function canonicalAddress(host: string): string | undefined {
  const v = judgeAddress(host);
  return v ? (v.embedded ?? v.address) : undefined;
}
