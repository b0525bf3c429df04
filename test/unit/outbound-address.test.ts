/**
 * The SSRF guard's judgement of one address (lib/platform/ip-address.ts) and of a task URL at create
 * time (lib/platform/outbound.ts urlProblem): by address, whatever the spelling. Every spelling Node's
 * URL parser accepts for loopback is tried through `new URL` first, as a task's URL would be.
 */
import { canonicalAddress, judgeAddress } from '../../lib/platform/ip-address';
import { hostAllowed, urlProblem } from '../../lib/platform/outbound';

const refused: [string, string][] = [
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['::1', 'loopback'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:0:7f00:1', 'loopback'],
  ['::127.0.0.1', 'loopback'],
  ['64:ff9b::7f00:1', 'loopback'],
  ['2002:7f00:1::', 'loopback'],
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback'],
  ['169.254.169.254', 'linkLocal'],
  ['::ffff:a9fe:a9fe', 'linkLocal'],
  ['fe80::1', 'linkLocal'],
  ['10.0.0.1', 'private'],
  ['::ffff:a00:1', 'private'],
  ['172.16.0.1', 'private'],
  ['192.168.1.1', 'private'],
  ['100.64.0.1', 'carrierGradeNat'],
  ['fd00:ec2::254', 'uniqueLocal'],
  ['fc00::1', 'uniqueLocal'],
  ['fec0::1', 'deprecatedSiteLocal'],
  ['224.0.0.1', 'multicast'],
  ['ff02::1', 'multicast'],
  ['0.0.0.0', 'unspecified'],
  ['::', 'unspecified'],
  ['255.255.255.255', 'broadcast'],
  ['198.18.0.1', 'reserved'],
  ['192.0.2.1', 'reserved'],
  ['240.0.0.1', 'reserved'],
  ['2001:db8::1', 'reserved'],
  ['2001:2::1', 'benchmarking'],
  ['64:ff9b:1::1', 'rfc6052'],
];

test.each(refused)('%s is refused as %s', (address, range) => {
  expect(judgeAddress(address)).toMatchObject({ range, refused: true });
});

test.each(['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'])('%s is public', (address) => {
  expect(judgeAddress(address)).toMatchObject({ refused: false });
});

test('an IPv6 address carrying IPv4 is judged by what it carries, and names it', () => {
  expect(judgeAddress('[::ffff:7f00:1]')).toEqual({ address: '::ffff:7f00:1', embedded: '127.0.0.1', range: 'loopback', refused: true });
  expect(canonicalAddress('::ffff:127.0.0.1')).toBe('127.0.0.1');
  expect(canonicalAddress('127.0.0.1')).toBe('127.0.0.1');
});

test('host names are not addresses', () => {
  expect(judgeAddress('localhost')).toBeUndefined();
  expect(judgeAddress('example.com')).toBeUndefined();
});

// Every spelling of loopback (and metadata) a task URL may use, through the WHATWG URL parser.
const spellings = [
  'http://127.0.0.1:18901/x',
  'http://2130706433/', // decimal
  'http://0x7f000001/', // hex
  'http://0x7f.1/', // hex, short
  'http://0177.0.0.1/', // octal
  'http://0177.1/', // octal, short
  'http://127.1/', // short
  'http://127.0.0.1./', // trailing dot
  'http://%31%32%37.0.0.1/', // percent-encoded
  'http://[::ffff:127.0.0.1]:18901/mapped', // mapped (URL makes it ::ffff:7f00:1)
  'http://[::ffff:7f00:1]/',
  'http://[::127.0.0.1]/', // compatible
  'http://[64:ff9b::127.0.0.1]/', // NAT64
  'http://[2002:7f00:1::]/', // 6to4
  'http://[::1]/',
  'http://0/', // 0.0.0.0
  'http://[::]/',
  'http://169.254.169.254/latest/meta-data/',
  'http://[::ffff:169.254.169.254]/',
  'http://2852039166/', // 169.254.169.254, decimal
  'http://[fd00:ec2::254]/',
  'http://[fec0::1]/',
  'https://10.1.2.3/',
  'http://100.100.100.200/', // a metadata service in CGNAT space
];

test.each(spellings)('urlProblem refuses %s', (url) => {
  expect(urlProblem(url, [])).toMatch(/private or local address .*OUTBOUND_ALLOW_HOSTS/);
});

test('urlProblem lets names and public addresses through; an allowed host in any spelling of its address', () => {
  expect(urlProblem('https://hooks.example.com/x', [])).toBeUndefined();
  expect(urlProblem('http://localhost:1/', [])).toBeUndefined(); // a name: judged by its answers when the request is made
  expect(urlProblem('http://8.8.8.8/', [])).toBeUndefined();
  expect(urlProblem('http://127.0.0.1:9/', ['127.0.0.1'])).toBeUndefined();
  expect(urlProblem('http://[::ffff:127.0.0.1]:9/', ['127.0.0.1'])).toBeUndefined();
  expect(urlProblem('http://2130706433/', ['127.0.0.1'])).toBeUndefined();
  expect(urlProblem('http://127.0.0.2/', ['127.0.0.1'])).toMatch(/loopback/);
  expect(urlProblem('ftp://8.8.8.8/', [])).toBe('must be an http(s) URL');
});

test('hostAllowed compares names case-insensitively without the trailing dot, and addresses canonically', () => {
  expect(hostAllowed('Hooks.Internal.', ['hooks.internal'])).toBe(true);
  expect(hostAllowed('::ffff:7f00:1', ['127.0.0.1'])).toBe(true);
  expect(hostAllowed('127.0.0.1', ['[::ffff:127.0.0.1]'])).toBe(true);
  expect(hostAllowed('127.0.0.1', ['localhost'])).toBe(false);
});
