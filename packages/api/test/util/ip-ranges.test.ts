import { describe, expect, it } from 'vitest';
import { addressRanges, isAddressOrRange } from '../../src/util/ip-ranges.js';

describe('address ranges (TRUST_PROXY)', () => {
  const inRanges = addressRanges(['10.0.0.0/8', '192.0.2.1', '2001:db8::/32', '::ffff:198.51.100.0/120']);

  it('hold the addresses of their ranges, IPv4 and IPv6, and no others', () => {
    expect(['10.200.3.4', '192.0.2.1', '2001:db8:1::5', '198.51.100.77'].map(inRanges)).toEqual([true, true, true, true]);
    expect(['11.0.0.1', '192.0.2.2', '2001:db9::1', '198.51.101.1', '::1', 'not an address', ''].map(inRanges)).toEqual([
      false, false, false, false, false, false, false,
    ]);
  });

  it('compare an IPv4-mapped address, as a server on :: sees an IPv4 peer, as its IPv4 address', () => {
    expect(inRanges('::ffff:10.9.9.9')).toBe(true);
    expect(inRanges('::ffff:192.0.2.1')).toBe(true);
    expect(inRanges('::ffff:11.0.0.1')).toBe(false);
  });

  it('take addresses and CIDR ranges, nothing else', () => {
    expect(['10.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8'].every(isAddressOrRange)).toBe(true);
    expect(['proxy.internal', '10.0.0.0/33', '', '10.0.0.1-10.0.0.9'].some(isAddressOrRange)).toBe(false);
  });
});
