import type { FastifyReply } from 'fastify';
import { watchCredential } from './credential-watch.js';

export const PING_INTERVAL_MS = 15_000;

/** A stream whose client leaves this much unread is closed rather than buffered further. */
export const MAX_UNSENT_BYTES = 1_048_576;

/**
 * A Server-Sent Events response. Fastify hands over the raw socket (hijack); the stream sends a
 * `: ping` comment on an interval so proxies keep it open, and `signal` aborts when the client
 * goes away, which is how a run learns to stop. It sends a run's events (the protocol's RunEvent)
 * as they were encoded once, when stored. A client that stops reading is treated as gone once its
 * unread bytes would pass MAX_UNSENT_BYTES: memory per stream stays bounded.
 */
export class SseStream {
  private readonly controller = new AbortController();
  private readonly ping: NodeJS.Timeout;
  private readonly stopWatching: () => void;
  private ended = false;
  /** The last text sent ended inside a frame (sendRaw `open`). */
  private open = false;
  /** Sends the headers alone unless a frame took them along first. */
  private headers: NodeJS.Immediate | undefined;

  constructor(
    private readonly reply: FastifyReply,
    pingIntervalMs = PING_INTERVAL_MS,
  ) {
    reply.hijack();
    const raw = reply.raw;
    // Headers plugins already set on the reply (CORS) survive the hijack.
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) raw.setHeader(name, value);
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    // Stored frames written in this turn of the event loop carry the headers with them, in one
    // write; a stream with nothing to send yet gets its headers on their own right after.
    this.headers = setImmediate(() => raw.flushHeaders());
    raw.on('close', () => {
      if (!this.ended) this.controller.abort(new Error('client disconnected'));
      this.stop();
    });
    // Never inside a frame sent in pieces.
    this.ping = setInterval(() => this.open || this.write(': ping\n\n'), pingIntervalMs);
    this.ping.unref();
    // A key revoked, a user disabled or a console session signed out meanwhile ends the stream, as
    // it would refuse the next request.
    this.stopWatching = watchCredential(reply.request, () => {
      if (this.ended) return;
      this.controller.abort(new Error('credential no longer valid'));
      this.end();
    });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get closed(): boolean {
    return this.ended || this.reply.raw.destroyed;
  }

  /**
   * Writes an encoded frame and resolves once the socket has taken it (or the client is gone), so
   * a caller that awaits each frame never holds more than one unsent. `open`: the text ends inside
   * a frame, which the next call goes on with.
   */
  sendRaw(text: string | Buffer, open = false): Promise<void> {
    const raw = this.reply.raw;
    if (this.ended || raw.destroyed) return Promise.resolve();
    this.open = open;
    this.sendingHeaders();
    if (raw.write(text)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        raw.off('drain', done);
        raw.off('close', done);
        resolve();
      };
      raw.once('drain', done);
      raw.once('close', done);
    });
  }

  end(): void {
    if (this.ended) return;
    this.stop();
    this.reply.raw.end();
  }

  /** The first write carries the headers: nothing more to flush. */
  private sendingHeaders(): void {
    clearImmediate(this.headers);
    this.headers = undefined;
  }

  private stop(): void {
    this.sendingHeaders();
    this.ended = true;
    clearInterval(this.ping);
    this.stopWatching();
  }

  private write(text: string): void {
    const raw = this.reply.raw;
    if (this.ended || raw.destroyed) return;
    // writableLength counts what the response and its socket still hold, not yet taken by the kernel.
    if (raw.writableLength + Buffer.byteLength(text) > MAX_UNSENT_BYTES) {
      this.controller.abort(new Error('client stopped reading'));
      raw.destroy();
      return;
    }
    this.sendingHeaders();
    raw.write(text);
  }
}
