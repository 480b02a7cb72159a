/**
 * Who a client is, for the limit of failed cancels per client (docs/decisions.md 10.34): its
 * address, as one string whatever its spelling. Behind a proxy TRUST_PROXY names, the address is
 * whatever the proxy passed in X-Forwarded-For, and Express passes any token on as it is: each
 * spelling of one address (`[2001:db8::5]`, a zone id, capitals, a mapped IPv4 address in hex) and
 * each token that is no address at all would be a client of its own, with failures of its own.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** The one client everything that is no IP address counts as. */
const UNKNOWN_CLIENT = 'unknown';

/**
 * An IPv4 address in its dotted form, an IPv6 one by its /64 (the block one host is usually given
 * whole) as `2001:db8:0:7::/64`, an IPv4 address mapped into IPv6 as the IPv4 address; brackets,
 * zone ids and a port after an IPv4 address or a bracketed IPv6 one are dropped. Anything else is UNKNOWN_CLIENT.
 */
export function clientOfAddress(address: string | undefined): string {
  if (address === undefined) return UNKNOWN_CLIENT;
  // A port some proxies append (`203.0.113.7:443`, `[2001:db8::5]:443`) is no part of who it is.
  const withoutPort = address.replace(/^(\d+\.\d+\.\d+\.\d+):\d+$/, '$1');
  const bracketed = /^\[(.*)\](?::\d+)?$/s.exec(withoutPort);
  const bare = (bracketed ? (bracketed[1] as string) : withoutPort).replace(/%.*$/s, '');
  // Node takes only the plain dotted form (no leading zeros, no hex or octal parts).
  if (isIPv4(bare)) return bare;
  if (!isIPv6(bare)) return UNKNOWN_CLIENT;
  const groups = ipv6Groups(bare);
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    const [high = 0, low = 0] = groups.slice(6);
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`;
}

/** The eight groups of a valid IPv6 address (without zone id), as numbers. */
function ipv6Groups(address: string): number[] {
  const [head = '', tail] = address.split('::');
  const groupsOf = (part: string | undefined): number[] =>
    part
      ? part.split(':').flatMap((group) => {
          if (!group.includes('.')) return [Number.parseInt(group, 16)];
          // An IPv4 tail (`::ffff:10.0.0.1`) holds the last two groups.
          const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
          return [(a << 8) | b, (c << 8) | d];
        })
      : [];
  const first = groupsOf(head);
  if (tail === undefined) return first;
  const last = groupsOf(tail);
  return [...first, ...new Array<number>(8 - first.length - last.length).fill(0), ...last];
}
