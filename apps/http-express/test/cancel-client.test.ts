/**
 * Who a client is for the limit of failed cancels (docs/decisions.md 10.34): one bucket per
 * address whatever its spelling, an IPv6 client by its /64, and one shared bucket for anything a
 * proxy passes that is no address.
 */
import type { Request } from 'express';
import { clientOf } from '../src/cancel-endpoint';

const clientAt = (ip: string | undefined): string =>
  clientOf({ ip, socket: { remoteAddress: undefined } } as unknown as Request);

describe('the client a cancel counts against', () => {
  it.each([
    ['an IPv4 address', '203.0.113.7', '203.0.113.7'],
    ['an IPv4 address mapped into IPv6', '::ffff:203.0.113.7', '203.0.113.7'],
    ['the same, its last groups in hex', '::ffff:cb00:7107', '203.0.113.7'],
    ['the same, written out', '0:0:0:0:0:FFFF:203.0.113.7', '203.0.113.7'],
    ['an IPv6 address', '2001:db8:0:7::1', '2001:db8:0:7::/64'],
    [
      'another of its /64, in capitals and with zeros',
      '2001:0DB8:0000:0007:ffff::',
      '2001:db8:0:7::/64',
    ],
    ['one in brackets', '[2001:db8:0:7::5]', '2001:db8:0:7::/64'],
    ['one with a zone id', '2001:db8:0:7::4%eth0', '2001:db8:0:7::/64'],
    ['one in brackets with a zone id', '[fe80::1%25eth0]', 'fe80:0:0:0::/64'],
    ['an IPv4 address in brackets', '[203.0.113.7]', '203.0.113.7'],
    ['an IPv4 address with the port a proxy appended', '203.0.113.7:443', '203.0.113.7'],
    ['an IPv6 address in brackets with a port', '[2001:db8:0:7::5]:443', '2001:db8:0:7::/64'],
  ])('counts %s as its address', (_what, address, client) => {
    expect(clientAt(address)).toBe(client);
  });

  it.each([
    ['a name', 'hello'],
    ['a proxy’s own word for it', 'unknown'],
    ['an obfuscated identifier (RFC 7239)', '_hidden'],
    ['an unbracketed IPv6 address with what may be a port', '2001:db8::5:443:1:2:3:4:5'],
    ['an IPv4 address with leading zeros', '203.0.113.007'],
    ['empty brackets', '[]'],
    ['nothing at all', undefined],
  ])('counts %s as the one unknown client', (_what, address) => {
    expect(clientAt(address)).toBe('unknown');
  });
});
