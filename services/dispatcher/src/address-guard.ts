/**
 * The SSRF range check: which IP addresses a webhook may never reach unless private
 * networks are explicitly allowed. Pure; the HTTP edge calls it on the address the
 * connector actually connects to (inside its DNS lookup) and on IP-literal hosts, which
 * Node connects to without calling the lookup.
 */
import { BlockList, isIP } from 'node:net';

const IPV4_RANGES: Array<[string, number]> = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, including 255.255.255.255
];

const IPV6_RANGES: Array<[string, number]> = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
];

const blocked = new BlockList();
for (const [network, prefix] of IPV4_RANGES) blocked.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of IPV6_RANGES) blocked.addSubnet(network, prefix, 'ipv6');

/** The eight 16-bit groups of an IPv6 address (with or without an embedded dotted quad). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const front = parse(head);
  if (tail === undefined) return front;
  const back = parse(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

/**
 * The IPv4 address an IPv6 address carries in its low 32 bits when it is an IPv4-mapped
 * (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) or NAT64 (64:ff9b::a.b.c.d) form — those
 * reach the IPv4 host, so they are judged by the IPv4 ranges.
 */
function embeddedIpv4(address: string): string | undefined {
  const groups = ipv6Groups(address);
  if (groups.length !== 8) return undefined;
  const prefix = groups.slice(0, 6);
  const isCompatible = prefix.every((group) => group === 0);
  const isMapped = prefix.slice(0, 5).every((group) => group === 0) && prefix[5] === 0xffff;
  const isNat64 = prefix[0] === 0x64 && prefix[1] === 0xff9b && prefix.slice(2).every((group) => group === 0);
  if (!isCompatible && !isMapped && !isNat64) return undefined;
  const high = groups[6]!;
  const low = groups[7]!;
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/** Whether a webhook may not connect to `address` (an IP literal; anything else counts as blocked). */
export function isBlockedAddress(address: string): boolean {
  const literal = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = isIP(literal);
  if (family === 4) return blocked.check(literal, 'ipv4');
  if (family !== 6) return true;
  if (blocked.check(literal, 'ipv6')) return true;
  const ipv4 = embeddedIpv4(literal);
  return ipv4 !== undefined && blocked.check(ipv4, 'ipv4');
}
