import { describe, expect, it } from 'vitest';
import { LOOPBACK_CLIENT, limitedAddress } from '../../src/http/client-address.js';

describe('the address a client is limited by', () => {
  it('is one for every loopback address, however it is written', () => {
    for (const address of ['127.0.0.1', '127.255.0.9', '::1', '::ffff:127.0.0.2', '::FFFF:127.1.2.3']) {
      expect(limitedAddress(address), address).toBe(LOOPBACK_CLIENT);
    }
  });

  it('is the address itself otherwise, an IPv4-mapped one as IPv4', () => {
    expect(limitedAddress('10.0.0.7')).toBe('10.0.0.7');
    expect(limitedAddress('::ffff:10.0.0.7')).toBe('10.0.0.7');
    expect(limitedAddress(undefined)).toBe('unknown');
  });

  it('is the /64 network for IPv6, whose every address one client may use', () => {
    const sameNetwork = ['2001:db8:1:2::1', '2001:db8:1:2:ffff:ffff:ffff:fffe', '2001:DB8:1:2:a:b:c:d', '2001:0db8:0001:0002::9'];
    for (const address of sameNetwork) expect(limitedAddress(address), address).toBe('2001:db8:1:2::/64');
    expect(limitedAddress('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(limitedAddress('fe80::1%eth0')).toBe(limitedAddress('fe80::2%eth1'));
  });
});
