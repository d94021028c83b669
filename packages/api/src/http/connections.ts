import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { limitedAddress } from './client-address.js';
import { answerClientError, MAX_HEADER_BYTES, writeRawError } from './server-errors.js';

/**
 * Per-connection bookkeeping on the raw HTTP server: at most `maxPerAddress` open connections
 * from one client address (one client cannot hold every socket), at most `maxTotal` in all (many
 * addresses together cannot exhaust the process's memory and descriptors, which its own work
 * needs too), and whether a connection's first request line is too long or unfinished (so a
 * header overflow can be told apart from a long URL).
 */
export class ConnectionGuard {
  private readonly open = new Map<string, number>();
  private total = 0;
  private readonly longFirstLine = new WeakSet<Socket>();

  constructor(
    private readonly maxPerAddress: number,
    private readonly maxTotal: number,
  ) {}

  attach(server: Server): void {
    server.on('connection', (socket: Socket) => this.accept(socket));
  }

  /** Fastify's clientErrorHandler. */
  readonly onClientError = (error: NodeJS.ErrnoException, socket: Socket): void => {
    answerClientError(error, socket, this.longFirstLine.has(socket));
  };

  private accept(socket: Socket): void {
    const address = limitedAddress(socket.remoteAddress);
    const count = (this.open.get(address) ?? 0) + 1;
    this.open.set(address, count);
    this.total += 1;
    socket.once('close', () => this.release(address));
    if (count > this.maxPerAddress) {
      writeRawError(socket, 429, `Too many open connections from this address (max ${this.maxPerAddress})`);
      return;
    }
    if (this.total > this.maxTotal) {
      writeRawError(socket, 503, `Too many open connections (max ${this.maxTotal})`);
      return;
    }
    this.watchFirstLine(socket);
  }

  private release(address: string): void {
    this.total -= 1;
    const count = (this.open.get(address) ?? 1) - 1;
    if (count <= 0) this.open.delete(address);
    else this.open.set(address, count);
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
