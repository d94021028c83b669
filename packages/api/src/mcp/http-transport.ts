import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { HttpServerConfig } from './config.js';
import { ServerProtocolError } from './line-transport.js';

/** A response body cut off with an error past `maxBytes`: no server's answer fills the service's memory. */
function limitedBody(response: Response, maxBytes: number): Response {
  if (response.body === null) return response;
  let seen = 0;
  const limit = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      seen += chunk.byteLength;
      if (seen > maxBytes) controller.error(new ServerProtocolError(`the server sent a response over ${Math.round(maxBytes / 1024)} KiB`));
      else controller.enqueue(chunk);
    },
  });
  return new Response(response.body.pipeThrough(limit), { status: response.status, statusText: response.statusText, headers: response.headers });
}

/**
 * The SDK's Streamable HTTP transport to a remote server, with the config's headers. Every fetch
 * leaves redirects to the SDK, which follows one only within the server's origin (scheme, host and
 * port): a redirect to another host never receives the user's headers, and fails the request with
 * the SDK's "Redirect to ... not followed". Each response body is capped at `maxBytes`.
 */
export function httpTransport(server: HttpServerConfig, maxBytes: number): StreamableHTTPClientTransport {
  const fetchLimited: FetchLike = async (url, init) => limitedBody(await fetch(url, { ...init, redirect: 'manual' }), maxBytes);
  return new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { ...server.headers } }, fetch: fetchLimited });
}
