import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { ServerProcess } from './server-process.js';

const NEWLINE = 0x0a;

/** The server broke the stdio protocol in a way the connection cannot survive. */
export class ServerProtocolError extends Error {
  override readonly name = 'ServerProtocolError';
}

/**
 * MCP's stdio transport (one JSON-RPC message per line) over a server process the service started
 * in the sandbox, for the SDK's Client. Unlike the SDK's own, a line may be at most `maxBytes`: a
 * server sending more (a 50 MB result, or a stdout with no newline) ends the connection with a
 * clear error instead of filling the service's memory and stalling its event loop on the parse.
 * Lines that are not JSON-RPC (a server logging to stdout) are skipped and counted.
 */
export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  /** Why the server's side ended the connection (it exited, or broke the protocol); undefined when the service closed it. */
  closeReason: string | undefined;
  private stopping = false;
  skippedLines = 0;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private closed = false;

  constructor(
    private readonly server: ServerProcess,
    private readonly maxBytes: number,
  ) {}

  async start(): Promise<void> {
    const { stdout } = this.server.child;
    stdout.on('data', (chunk: Buffer) => this.receive(chunk));
    void this.server.exited.then(({ code, signal }) => {
      if (!this.stopping) this.closeReason ??= `the server exited (${signal ?? `code ${code ?? 'unknown'}`})`;
      this.finish();
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) throw new Error('the connection is closed');
    const { stdin } = this.server.child;
    const ok = stdin.write(`${JSON.stringify(message)}\n`);
    if (!ok) await new Promise<void>((resolve) => stdin.once('drain', resolve));
  }

  async close(): Promise<void> {
    this.stopping = true;
    await this.server.stop();
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.pending = [];
    this.onclose?.();
  }

  private receive(chunk: Buffer): void {
    let start = 0;
    for (let at = chunk.indexOf(NEWLINE); at !== -1 && !this.closed; at = chunk.indexOf(NEWLINE, start)) {
      if (this.pendingBytes + at - start > this.maxBytes) return this.tooLarge();
      const line = this.pendingBytes === 0 ? chunk.subarray(start, at) : Buffer.concat([...this.pending, chunk.subarray(start, at)]);
      this.pending = [];
      this.pendingBytes = 0;
      this.deliver(line);
      start = at + 1;
    }
    if (this.closed || start >= chunk.length) return;
    this.pendingBytes += chunk.length - start;
    if (this.pendingBytes > this.maxBytes) return this.tooLarge();
    this.pending.push(chunk.subarray(start));
  }

  private deliver(line: Buffer): void {
    const text = line.toString('utf8').trim();
    if (text === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      this.skippedLines++;
      return;
    }
    const message = JSONRPCMessageSchema.safeParse(parsed);
    if (!message.success) {
      this.skippedLines++;
      return;
    }
    this.onmessage?.(message.data);
  }

  private tooLarge(): void {
    this.closeReason = `the server sent a message over ${Math.round(this.maxBytes / 1024)} KiB, so it was stopped`;
    this.onerror?.(new ServerProtocolError(this.closeReason));
    void this.close();
  }
}
