import type { FastifyReply } from 'fastify';

export const PING_INTERVAL_MS = 15_000;

/** One frame: `data: <JSON>` and a blank line, with null and absent fields left out. */
export function encodeFrame(frame: object): string {
  return `data: ${JSON.stringify(frame, (_key, value: unknown) => (value === null ? undefined : value))}\n\n`;
}

/**
 * A Server-Sent Events response. Fastify hands over the raw socket (hijack); the stream sends a
 * `: ping` comment on an interval so proxies keep it open, and `signal` aborts when the client
 * goes away, which is how a run learns to stop.
 */
export class SseStream {
  private readonly controller = new AbortController();
  private readonly ping: NodeJS.Timeout;
  private ended = false;

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
    raw.flushHeaders();
    raw.on('close', () => {
      if (!this.ended) this.controller.abort(new Error('client disconnected'));
      this.stop();
    });
    this.ping = setInterval(() => this.write(': ping\n\n'), pingIntervalMs);
    this.ping.unref();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get closed(): boolean {
    return this.ended || this.reply.raw.destroyed;
  }

  send(frame: object): void {
    this.write(encodeFrame(frame));
  }

  end(): void {
    if (this.ended) return;
    this.stop();
    this.reply.raw.end();
  }

  private stop(): void {
    this.ended = true;
    clearInterval(this.ping);
  }

  private write(text: string): void {
    if (!this.ended && !this.reply.raw.destroyed) this.reply.raw.write(text);
  }
}
