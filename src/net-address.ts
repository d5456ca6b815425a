/**
 * IP address classification, shared by the egress proxy (is a resolved address internal?) and the
 * primitives (is a URL's host this machine?). ipaddr.js does the parsing so every notation of one
 * address is classified alike: an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`, `::ffff:7f00:1`,
 * `0:0:0:0:0:ffff:7f00:0001`, bracketed or not) is its IPv4 address, and so are the short and
 * octal IPv4 spellings (`127.1`, `0177.0.0.1`) that resolvers and URL parsers also accept.
 */
import ipaddr from 'ipaddr.js';

/** The address a literal denotes (IPv4-mapped IPv6 unwrapped, brackets and zone ids allowed), or null. */
export function parseAddress(literal: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const s = literal.trim().replace(/^\[(.*)\]$/, '$1');
  if (!ipaddr.isValid(s)) return null;
  const a = ipaddr.parse(s);
  return a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress() ? (a as ipaddr.IPv6).toIPv4Address() : a;
}

/** The canonical text of an address literal (`::ffff:7f00:1` → `127.0.0.1`), or the input as given. */
export function canonicalAddress(literal: string): string {
  return parseAddress(literal)?.toString() ?? literal;
}

/**
 * Anything but a global unicast address: loopback, private (RFC 1918), CGNAT, unique-local,
 * link-local, unspecified, broadcast, multicast, reserved and documentation ranges, and the IPv6
 * transition prefixes (6to4, Teredo, NAT64) that embed an IPv4 address we could not vouch for —
 * or one of `own` (this host's addresses). A string that is no address is not internal.
 */
export function isInternalAddress(ip: string, own: ReadonlySet<string> = new Set()): boolean {
  const a = parseAddress(ip);
  if (!a) return false;
  if (own.has(a.toString())) return true;
  return a.range() !== 'unicast';
}

/** A URL hostname that means this machine: `localhost`, any loopback or unspecified address in any notation. */
export function isLoopbackHost(hostname: string, extra: readonly string[] = []): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  if (h === 'localhost' || h.endsWith('.localhost') || extra.includes(h)) return true;
  const r = parseAddress(h)?.range();
  return r === 'loopback' || r === 'unspecified';
}
