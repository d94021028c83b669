import { readFileSync } from 'node:fs';
import { isIPv4 } from 'node:net';
import ipaddr from 'ipaddr.js';

/** What of a connection identifies its client's socket: its address and port as the client sees them. */
export interface LoopbackPeer {
  remoteAddress?: string | undefined;
  remotePort?: number | undefined;
  localAddress?: string | undefined;
  localPort?: number | undefined;
}

/**
 * The user id owning the client end of a loopback connection, from the kernel's socket tables
 * (`/proc/net/tcp`, `/proc/net/tcp6`: each socket's local and remote address, and its owner's
 * uid); undefined when it cannot be told (not Linux, the client's socket already gone). Every
 * local account connects from the same loopback addresses, so the uid is what tells them apart.
 */
export function loopbackOwner(peer: LoopbackPeer, tables: (file: string) => string = readTable): number | undefined {
  return loopbackOwners(tables)(peer);
}

/**
 * What loopbackOwner tells, for many connections from one reading of the socket tables: the
 * tables are read once, when this is called, and each connection is then looked up in memory.
 */
export function loopbackOwners(tables: (file: string) => string = readTable): (peer: LoopbackPeer) => number | undefined {
  const owners = TABLES.map(([file, form]) => [ownersIn(tableText(tables, file)), form] as const);
  return ({ remoteAddress, remotePort, localAddress, localPort }) => {
    if (remoteAddress === undefined || remotePort === undefined || localAddress === undefined || localPort === undefined) return undefined;
    // The client's socket is the one whose local end is this connection's remote end, and back. A
    // server listening on `::` sees an IPv4 client as `::ffff:a.b.c.d`: its socket is in the IPv4 table.
    for (const [table, form] of owners) {
      const client = form(remoteAddress);
      const server = form(localAddress);
      if (client === undefined || server === undefined) continue;
      const uid = table.get(`${client}:${hexPort(remotePort)} ${server}:${hexPort(localPort)}`);
      if (uid !== undefined) return uid;
    }
    return undefined;
  };
}

/** Each socket's owner by its `local remote` ends, as the table writes them. */
function ownersIn(text: string): Map<string, number> {
  const owners = new Map<string, number>();
  for (const line of text.split('\n')) {
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid ...
    const fields = line.trim().split(/\s+/);
    if (fields.length > 7) owners.set(`${fields[1]} ${fields[2]}`, Number(fields[7]));
  }
  return owners;
}

function tableText(tables: (file: string) => string, file: string): string {
  try {
    return tables(file);
  } catch {
    return '';
  }
}

const TABLES = [
  ['/proc/net/tcp', asIPv4],
  ['/proc/net/tcp6', asIPv6],
] as const;

const readTable = (file: string): string => readFileSync(file, 'utf8');

const hexPort = (port: number): string => port.toString(16).toUpperCase().padStart(4, '0');

/** An address as the IPv4 table writes it (one 32-bit word), if it is IPv4 or mapped IPv4. */
function asIPv4(address: string): string | undefined {
  const plain = address.toLowerCase().startsWith('::ffff:') ? address.slice(7) : address;
  return isIPv4(plain) ? word(ipaddr.IPv4.parse(plain).toByteArray()) : undefined;
}

/** An address as the IPv6 table writes it (four 32-bit words), IPv4 ones as mapped. */
function asIPv6(address: string): string | undefined {
  const bare = address.split('%')[0]!;
  const parsed = isIPv4(bare) ? ipaddr.IPv4.parse(bare).toIPv4MappedAddress() : ipaddr.IPv6.isValid(bare) ? ipaddr.IPv6.parse(bare) : undefined;
  if (parsed === undefined) return undefined;
  const bytes = parsed.toByteArray();
  const words: string[] = [];
  for (let index = 0; index < bytes.length; index += 4) words.push(word(bytes.slice(index, index + 4)));
  return words.join('');
}

/**
 * Four bytes in network order as the tables write a 32-bit word: in the machine's byte order
 * (little-endian on the machines this runs on), upper-case hex.
 */
const word = (bytes: number[]): string => [...bytes].reverse().map((b) => b.toString(16).toUpperCase().padStart(2, '0')).join('');
