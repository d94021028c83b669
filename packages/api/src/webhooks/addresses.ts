import ipaddr from 'ipaddr.js';
import type { HostResolver } from './host-resolver.js';

/**
 * Whether an address is on the public internet: ipaddr.js names every special range (loopback,
 * private, link-local with the cloud metadata address, unique-local fd00::/8, carrier-grade NAT,
 * multicast, unspecified, documentation...), and only plain unicast passes. IPv4-mapped IPv6 is
 * judged as the IPv4 address it carries; NAT64 and 6to4 addresses, which carry one too, are
 * refused whole rather than unwrapped.
 */
export function isPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').split('%')[0]!;
  if (!ipaddr.isValid(bare)) return false;
  const parsed = ipaddr.process(bare);
  if (parsed.range() !== 'unicast') return false;
  // Of IPv6 only 2000::/3 is allotted for global unicast. ipaddr.js calls the rest of the space
  // `unicast` too, among it the deprecated IPv4-compatible ::/96 (`[::127.0.0.1]`, which URL
  // parsing writes `[::7f00:1]`), which a host with an automatic tunnel or a translating gateway
  // still carries to the IPv4 address inside.
  return parsed.kind() === 'ipv4' || parsed.match(GLOBAL_UNICAST);
}

const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

export type Resolution = { ok: true; address: string; family: 4 | 6 } | { ok: false; reason: 'dns' | 'address_refused' };

/**
 * The one address a delivery connects to: every address the name resolves to must be public
 * (unless `allowPrivate`), so a name that answers with one public and one private address is
 * refused rather than raced. The caller connects to exactly this address: a second lookup, which
 * a rebinding DNS server could answer differently, never happens.
 */
export async function resolveTarget(hostname: string, allowPrivate: boolean, resolver: HostResolver): Promise<Resolution> {
  const bare = hostname.replace(/^\[|\]$/g, '');
  let found: { address: string; family: number }[];
  try {
    found = ipaddr.isValid(bare) ? [{ address: bare, family: bare.includes(':') ? 6 : 4 }] : await resolver.resolve(bare);
  } catch {
    return { ok: false, reason: 'dns' };
  }
  if (found.length === 0) return { ok: false, reason: 'dns' };
  if (!allowPrivate && !found.every((entry) => isPublicAddress(entry.address))) return { ok: false, reason: 'address_refused' };
  const first = found[0]!;
  return { ok: true, address: first.address, family: first.family === 6 ? 6 : 4 };
}
