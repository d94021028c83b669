import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { isLoopback } from '../exposure.js';

/** What every loopback client counts as: one machine, whichever source address it picked. */
export const LOOPBACK_CLIENT = 'loopback';

/** IPv6 clients count by their /64: the network one subscriber is given, every address of it theirs. */
const IPV6_NETWORK_BITS = 64;

/**
 * The address per-address limits count against. Every local user can connect from any address
 * in 127.0.0.0/8, so counting each separately let one user hold thousands of connections (the
 * service's file descriptors) or spread key guesses over them: loopback counts as one address
 * (which the connection and failed-key limits then split by local account where they can:
 * connections.ts, credential-failures.ts).
 * For the same reason an IPv6 client counts as its /64 (a host with privacy addresses, or one
 * that picks a new address per connection, has 2^64 to choose from). An IPv4-mapped IPv6 address
 * counts as its IPv4 address.
 */
export function limitedAddress(address: string | undefined): string {
  if (address === undefined) return 'unknown';
  const mapped = address.toLowerCase().startsWith('::ffff:') ? address.slice(7) : address;
  if (isIP(mapped) === 4) return isLoopback(mapped) ? LOOPBACK_CLIENT : mapped;
  if (isLoopback(address)) return LOOPBACK_CLIENT;
  // A zone (`fe80::1%eth0`) names the interface, not the client.
  const bare = address.split('%')[0]!;
  if (!ipaddr.IPv6.isValid(bare)) return address;
  const network = ipaddr.IPv6.networkAddressFromCIDR(`${bare}/${IPV6_NETWORK_BITS}`);
  return `${network.toString()}/${IPV6_NETWORK_BITS}`;
}
