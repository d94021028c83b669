import { isIP } from 'node:net';
import { isLoopback } from '../exposure.js';

/** What every loopback client counts as: one machine, whichever source address it picked. */
export const LOOPBACK_CLIENT = 'loopback';

/**
 * The address per-address limits count against. Every local user can connect from any address
 * in 127.0.0.0/8, so counting each separately let one user hold thousands of connections (the
 * service's file descriptors) or spread key guesses over them: loopback counts as one address.
 * An IPv4-mapped IPv6 address counts as its IPv4 address.
 */
export function limitedAddress(address: string | undefined): string {
  if (address === undefined) return 'unknown';
  const mapped = address.toLowerCase().startsWith('::ffff:') ? address.slice(7) : address;
  const bare = isIP(mapped) === 4 ? mapped : address;
  return isLoopback(bare) ? LOOPBACK_CLIENT : bare;
}
