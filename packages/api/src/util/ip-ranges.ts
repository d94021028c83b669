import ipaddr from 'ipaddr.js';

/** Whether an address is in a set of ranges. */
export type AddressTest = (address: string) => boolean;

/** An address or a CIDR range (as TRUST_PROXY lists them); an address alone is a range of one. */
export function isAddressOrRange(entry: string): boolean {
  return ipaddr.isValid(entry) || ipaddr.isValidCIDR(entry);
}

/**
 * The test for a list of addresses and CIDR ranges, IPv4 or IPv6. An IPv4-mapped
 * IPv6 address (`::ffff:10.0.0.1`, how a server listening on `::` sees an IPv4 peer) is compared
 * as the IPv4 address it is.
 */
export function addressRanges(entries: readonly string[]): AddressTest {
  const ranges = entries.map(rangeOf);
  return (address) => {
    // A socket already closed has no address (Node gives undefined, whatever the type says).
    if (typeof address !== 'string') return false;
    const bare = address.split('%')[0]!;
    if (!ipaddr.isValid(bare)) return false;
    const parsed = ipaddr.process(bare);
    return ranges.some((range) => within(parsed, range));
  };
}

type Range = readonly [ipaddr.IPv4 | ipaddr.IPv6, number];

function rangeOf(entry: string): Range {
  const [base, bits] = ipaddr.isValidCIDR(entry) ? ipaddr.parseCIDR(entry) : [ipaddr.parse(entry), ipaddr.parse(entry).kind() === 'ipv4' ? 32 : 128];
  // A range of IPv4-mapped addresses is the IPv4 range it maps.
  if (base.kind() === 'ipv6' && (base as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) return [(base as ipaddr.IPv6).toIPv4Address(), bits - 96];
  return [base, bits];
}

function within(address: ipaddr.IPv4 | ipaddr.IPv6, [base, bits]: Range): boolean {
  if (address.kind() === 'ipv4') return base.kind() === 'ipv4' && (address as ipaddr.IPv4).match(base as ipaddr.IPv4, bits);
  return base.kind() === 'ipv6' && (address as ipaddr.IPv6).match(base as ipaddr.IPv6, bits);
}
