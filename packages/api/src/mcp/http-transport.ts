import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { HttpServerConfig } from './config.js';
import { ServerProtocolError } from './line-transport.js';

const LF = 0x0a;
const CR = 0x0d;

/**
 * Bytes since the last end of an event in a server-sent event stream (a blank line: two line
 * ends, each `\n`, `\r` or `\r\n`), counted across chunks in one pass. A stream a server keeps
 * open for notifications may carry any number of events over its life; what must stay bounded is
 * the one event the SDK's parser holds until it is complete.
 */
class EventBytes {
  private sinceBoundary = 0;
  private atLineStart = true;
  private lastWasCr = false;

  /** The largest count reached within `chunk`. */
  add(chunk: Uint8Array): number {
    let largest = this.sinceBoundary;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i] as number;
      const crlf = byte === LF && this.lastWasCr;
      this.lastWasCr = byte === CR;
      if (crlf) continue;
      if (byte === LF || byte === CR) {
        if (this.atLineStart) this.sinceBoundary = 0;
        else this.sinceBoundary++;
        this.atLineStart = true;
      } else {
        this.sinceBoundary++;
        this.atLineStart = false;
        if (this.sinceBoundary > largest) largest = this.sinceBoundary;
      }
    }
    return largest;
  }
}

/**
 * A response body cut off with an error past `maxBytes`: no server's answer fills the service's
 * memory. A JSON answer is one message and counts whole; an event stream counts each event.
 */
function limitedBody(response: Response, maxBytes: number, onOverflow: (what: string) => void): Response {
  if (response.body === null) return response;
  const eventStream = response.headers.get('content-type')?.toLowerCase().startsWith('text/event-stream') ?? false;
  const events = new EventBytes();
  let seen = 0;
  const limit = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      seen = eventStream ? events.add(chunk) : seen + chunk.byteLength;
      if (seen > maxBytes) {
        const what = `${eventStream ? 'an event' : 'a response'} over ${Math.round(maxBytes / 1024)} KiB`;
        controller.error(new ServerProtocolError(`the server sent ${what}`));
        onOverflow(what);
      } else controller.enqueue(chunk);
    },
  });
  return new Response(response.body.pipeThrough(limit), { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** A remote server's transport, and why it was closed when the service closed it for what it sent. */
export interface RemoteTransport {
  transport: StreamableHTTPClientTransport;
  closeReason: () => string | undefined;
}

/**
 * The SDK's Streamable HTTP transport to a remote server, with the config's headers. Every fetch
 * leaves redirects to the SDK, which follows one only within the server's origin (scheme, host and
 * port): a redirect to another host never receives the user's headers, and fails the request with
 * the SDK's "Redirect to ... not followed". Each JSON answer, and each event of a stream, is
 * capped at `maxBytes`. Past it the connection is closed: the SDK only reports a broken stream on
 * the side, and the call waiting for that answer would wait out its whole timeout.
 */
export function httpTransport(server: HttpServerConfig, maxBytes: number): RemoteTransport {
  let reason: string | undefined;
  const overflow = (what: string): void => {
    if (reason !== undefined) return;
    reason = `the server sent ${what}, so the connection was closed`;
    void transport.close();
  };
  const fetchLimited: FetchLike = async (url, init) => limitedBody(await fetch(url, { ...init, redirect: 'manual' }), maxBytes, overflow);
  const transport = new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { ...server.headers } }, fetch: fetchLimited });
  return { transport, closeReason: () => reason };
}
