import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { AddressTest } from '../util/ip-ranges.js';
import { LOOPBACK_CLIENT, limitedAddress } from './client-address.js';
import { loopbackOwners } from './loopback-owner.js';
import { answerClientError, MAX_HEADER_BYTES, writeRawError } from './server-errors.js';

/**
 * The time between two readings of the socket tables. The kernel walks its whole connection table
 * for each (about 2 ms of system time here), so a flood of connections each read for would hold
 * the event loop. A loopback connection that arrives sooner is let in unjudged and judged by the
 * next reading with every other one waiting: refusing it instead would let one account, opening
 * connections faster than the readings, lock every other account out.
 */
const READING_INTERVAL_MS = 50;

/**
 * The loopback connections let in before their account is looked up: counted together, under
 * the per-address limit, so a flood between two readings holds at most that many.
 */
const UNJUDGED = `${LOOPBACK_CLIENT} unjudged`;

/** At most one reading every `intervalMs`. */
class ReadingBudget {
  private last = -Infinity;

  constructor(private readonly intervalMs: number) {}

  take(): boolean {
    const now = performance.now();
    if (now - this.last < this.intervalMs) return false;
    this.last = now;
    return true;
  }

  /** Milliseconds until the next reading may be taken. */
  wait(): number {
    return Math.max(0, this.last + this.intervalMs - performance.now());
  }
}

/**
 * Per-connection bookkeeping on the raw HTTP server: at most `maxPerAddress` open connections
 * from one client (one client cannot hold every socket), at most `maxTotal` in all (many
 * addresses together cannot exhaust the process's memory and descriptors, which its own work
 * needs too), and whether a connection's first request line is too long or unfinished (so a
 * header overflow can be told apart from a long URL).
 *
 * A client is its address, and on loopback its local account: every account connects from
 * loopback, so with loopback one address any process of the machine, keyless, could hold the 256
 * connections and lock every user out. The accounts are told apart (by the owners in the kernel's
 * socket tables, one reading for all the connections) only once loopback as a whole holds more
 * than the limit, so the many connections of the usual local client cost nothing, and at most
 * once every READING_INTERVAL_MS (between two readings a connection waits, unjudged, for the
 * next, which closes it if over its account's limit); where the owner cannot be told, loopback
 * counts as one address as before. A trusted proxy's connections count only toward `maxTotal`:
 * they carry many clients' requests, and the proxy is where a client's connections can be counted.
 */
export class ConnectionGuard {
  /** Open connections per client. */
  private readonly open = new Map<string, number>();
  /** The client each open connection counts for (none: a trusted proxy's). */
  private readonly clients = new Map<Socket, string>();
  /** Loopback connections counted for loopback as a whole, their account not yet looked up. */
  private readonly unattributed = new Set<Socket>();
  /** Loopback connections let in over the limit, waiting for the next reading to judge them. */
  private readonly unjudged = new Set<Socket>();
  private judging: NodeJS.Timeout | undefined;
  private loopbackOpen = 0;
  private total = 0;
  private readonly longFirstLine = new WeakSet<Socket>();
  private readonly readings = new ReadingBudget(READING_INTERVAL_MS);

  constructor(
    private readonly maxPerAddress: number,
    private readonly maxTotal: number,
    private readonly trustedProxy: AddressTest = () => false,
  ) {}

  attach(server: Server): void {
    server.on('connection', (socket: Socket) => this.accept(socket));
  }

  /** Fastify's clientErrorHandler. */
  readonly onClientError = (error: NodeJS.ErrnoException, socket: Socket): void => {
    answerClientError(error, socket, this.longFirstLine.has(socket));
  };

  private accept(socket: Socket): void {
    this.total += 1;
    const client = this.clientOf(socket);
    socket.once('close', () => this.release(socket));
    const over = client !== undefined && this.add(client, 1) > this.maxPerAddress;
    if (over) {
      writeRawError(socket, 429, `Too many open connections from this address (max ${this.maxPerAddress})`);
      return;
    }
    if (this.total > this.maxTotal) {
      writeRawError(socket, 503, `Too many open connections (max ${this.maxTotal})`);
      return;
    }
    this.watchFirstLine(socket);
  }

  /** What `socket` counts for; records it. */
  private clientOf(socket: Socket): string | undefined {
    const remote = socket.remoteAddress;
    if (remote !== undefined && this.trustedProxy(remote)) return undefined;
    const address = limitedAddress(remote);
    let client = address;
    if (address === LOOPBACK_CLIENT) {
      this.loopbackOpen += 1;
      if (this.loopbackOpen <= this.maxPerAddress) this.unattributed.add(socket);
      else if (this.readings.take()) client = this.attribute(socket);
      else client = this.judgeLater(socket);
    }
    this.clients.set(socket, client);
    return client;
  }

  /**
   * The local account of `socket`, and of every loopback connection not yet attributed, moved
   * from loopback's count to its account's; loopback's own for a connection whose owner cannot
   * be told.
   */
  private attribute(socket: Socket): string {
    const accountOf = this.accounts();
    for (const open of this.unattributed) {
      const account = accountOf(open);
      if (account === LOOPBACK_CLIENT) continue;
      this.add(LOOPBACK_CLIENT, -1);
      this.add(account, 1);
      this.clients.set(open, account);
    }
    this.unattributed.clear();
    this.judgeWaiting(accountOf);
    return accountOf(socket);
  }

  /** One reading of the socket tables: the client each loopback connection counts for. */
  private accounts(): (socket: Socket) => string {
    const ownerOf = loopbackOwners();
    return (open) => {
      const uid = ownerOf(open);
      return uid === undefined ? LOOPBACK_CLIENT : `${LOOPBACK_CLIENT} uid ${uid}`;
    };
  }

  private judgeLater(socket: Socket): string {
    this.unjudged.add(socket);
    this.scheduleJudging();
    return UNJUDGED;
  }

  /** One timer for all the waiting connections, at the next reading the interval allows. */
  private scheduleJudging(): void {
    this.judging ??= setTimeout(() => {
      this.judging = undefined;
      if (this.unjudged.size === 0) return;
      if (this.readings.take()) this.judgeWaiting(this.accounts());
      else this.scheduleJudging();
    }, this.readings.wait() + 1);
    this.judging.unref();
  }

  /**
   * Each waiting connection counted for its account; one over its account's limit is closed
   * (its requests may have begun, so no answer can be written into it).
   */
  private judgeWaiting(accountOf: (socket: Socket) => string): void {
    for (const socket of this.unjudged) {
      const account = accountOf(socket);
      this.add(UNJUDGED, -1);
      this.clients.set(socket, account);
      if (this.add(account, 1) > this.maxPerAddress) socket.destroy();
    }
    this.unjudged.clear();
  }

  /** Changes a client's count by `delta`; its new count. */
  private add(client: string, delta: number): number {
    const count = (this.open.get(client) ?? 0) + delta;
    if (count <= 0) this.open.delete(client);
    else this.open.set(client, count);
    return count;
  }

  private release(socket: Socket): void {
    this.total -= 1;
    const client = this.clients.get(socket);
    this.clients.delete(socket);
    this.unattributed.delete(socket);
    if (client === undefined) return;
    if (client.startsWith(LOOPBACK_CLIENT)) this.loopbackOpen -= 1;
    this.unjudged.delete(socket);
    this.add(client, -1);
  }

  /** Removing the listener once the first line ended hands the socket back to Node's parser alone. */
  private watchFirstLine(socket: Socket): void {
    this.longFirstLine.add(socket);
    let seen = 0;
    const onData = (chunk: Buffer): void => {
      const end = chunk.indexOf(0x0a);
      if (end < 0) {
        seen += chunk.length;
        return;
      }
      if (seen + end <= MAX_HEADER_BYTES) this.longFirstLine.delete(socket);
      socket.off('data', onData);
    };
    // Ahead of Node's parser, so the flag is current when the parser reports an overflow in this chunk.
    socket.prependListener('data', onData);
  }
}
