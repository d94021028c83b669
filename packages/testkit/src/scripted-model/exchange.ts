import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerFor, type Answer } from './answer.js';
import type { Frame, ProtocolWriter, WriteContext } from './protocols.js';
import type { ExchangeOutcome } from './recording.js';
import type { ScriptedTurn } from './turns.js';

/**
 * One request/response pair: plays a turn onto the response and settles the outcome the
 * recorded request exposes. Stops writing as soon as the client goes away.
 */
export class Exchange {
  readonly outcome: Promise<ExchangeOutcome>;
  private settle!: (outcome: ExchangeOutcome) => void;
  private readonly gone = new AbortController();
  private dropped = false;

  constructor(
    private readonly request: IncomingMessage,
    private readonly response: ServerResponse,
    private readonly writer: ProtocolWriter,
    private readonly options: { zeroLatency: boolean; serverClosing: () => boolean },
  ) {
    this.outcome = new Promise((resolve) => (this.settle = resolve));
    response.on('finish', () => this.settle('answered'));
    response.on('close', () => {
      this.gone.abort();
      if (this.dropped) this.settle('dropped');
      else this.settle(options.serverClosing() ? 'server-closed' : 'client-closed');
    });
  }

  private get closed(): boolean {
    return this.gone.signal.aborted;
  }

  sendJson(status: number, body: unknown): void {
    if (this.closed) return;
    const text = JSON.stringify(body);
    this.response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
    this.response.end(text);
  }

  async play(turn: ScriptedTurn, context: WriteContext, stream: boolean): Promise<void> {
    switch (turn.kind) {
      case 'http-error':
        return this.sendJson(turn.status, this.writer.errorBody(turn.status, turn.message ?? `scripted HTTP ${turn.status}`));
      case 'stall':
        return;
      case 'delayed':
        await this.wait({ pauseMs: turn.delayMs });
        return this.closed ? undefined : this.play(turn.then, context, stream);
      case 'drop':
        return this.drop(turn.chunks, context, stream);
      case 'stream-error':
        if (!stream) return this.sendJson(500, this.writer.errorBody(500, turn.message));
        return this.stream([...this.writer.partialFrames(turn.chunks, context), this.writer.streamErrorFrame(turn.message)]);
      default: {
        const answer = answerFor(turn, context.requestIndex);
        return stream ? this.stream(this.writer.frames(answer, context)) : this.answerWhole(answer, context);
      }
    }
  }

  private async answerWhole(answer: Answer, context: WriteContext): Promise<void> {
    for (const chunk of answer.chunks) if (typeof chunk !== 'string') await this.wait(chunk);
    this.sendJson(200, this.writer.json(answer, context));
  }

  private startStream(): void {
    this.response.writeHead(200, { 'content-type': this.writer.streamContentType, 'cache-control': 'no-cache' });
    this.response.flushHeaders();
  }

  private async stream(frames: readonly Frame[]): Promise<void> {
    if (this.closed) return;
    this.startStream();
    if (this.options.zeroLatency && frames.every((f) => typeof f === 'string')) {
      this.response.end(frames.join(''));
      return;
    }
    for (const frame of frames) {
      if (this.closed) return;
      if (typeof frame !== 'string') await this.wait(frame);
      else await this.write(frame);
    }
    if (!this.closed) this.response.end();
  }

  /** Resolves once the data is handed to the socket, so a later destroy cannot discard it. */
  private async write(data: string): Promise<void> {
    await new Promise<void>((resolve) => this.response.write(data, () => resolve()));
    // Separate writes reach the client as separate reads, like a model producing tokens.
    if (!this.options.zeroLatency) await new Promise((resolve) => setImmediate(resolve));
  }

  /**
   * Waits for the pause or the hold, or until the client goes away. The abort listener is removed
   * when the wait ends: a stream of many pauses would otherwise leave one behind per pause on the
   * same signal (Node warned past ten, and each add walks the listeners already there).
   */
  private async wait(frame: Exclude<Frame, string>): Promise<void> {
    const signal = this.gone.signal;
    if (signal.aborted) return;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const closed = new Promise<void>((resolve) => {
      onAbort = resolve;
      signal.addEventListener('abort', onAbort, { once: true });
    });
    const waited = 'until' in frame ? frame.until.then(noop, noop) : new Promise<void>((resolve) => (timer = setTimeout(resolve, frame.pauseMs)));
    try {
      await Promise.race([waited, closed]);
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort!);
    }
  }

  private async drop(chunks: readonly string[], context: WriteContext, stream: boolean): Promise<void> {
    if (this.closed) return;
    if (chunks.length > 0 && stream) {
      this.startStream();
      for (const frame of this.writer.partialFrames(chunks, context)) if (typeof frame === 'string') await this.write(frame);
    } else if (chunks.length > 0) {
      const whole = JSON.stringify(this.writer.json({ chunks: [...chunks], toolCalls: [] }, context));
      this.response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(whole) });
      await this.write(whole.slice(0, Math.ceil(whole.length / 2)));
    }
    this.dropped = true;
    this.request.socket.destroy();
  }
}

const noop = (): void => undefined;
