import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { setFramingHeaders } from './frame-guard.js';

/** The request line and headers together may take this many bytes (Node's own default). */
export const MAX_HEADER_BYTES = 16_384;

/** Writes a whole `{"detail"}` response on a raw socket and closes it. */
export function writeRawError(socket: Socket, status: number, detail: string): void {
  if (!socket.writable) return void socket.destroy();
  const body = JSON.stringify({ detail });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function clientErrorResponse(error: NodeJS.ErrnoException, longFirstLine: boolean): [number, string] {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return [408, 'Request timed out: it did not arrive whole in time'];
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return longFirstLine ? [414, 'Request line is too long'] : [431, 'Request headers are too large'];
  }
  return [400, 'Malformed HTTP request'];
}

/**
 * Node's HTTP server answers requests it cannot parse before Fastify sees them; this gives those
 * answers the service's `{"detail": ...}` body. `longFirstLine`: the connection's request line
 * alone passes the limit (or never ended), so the URL is what is too long.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket, longFirstLine: boolean): void {
  // A reset connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, detail] = clientErrorResponse(error, longFirstLine);
  writeRawError(socket, status, detail);
}

/**
 * Node hands a CONNECT request (a proxy tunnel, which this service is not) to a `connect`
 * listener and, without one, drops the connection unanswered.
 */
export function refuseTunnel(_request: IncomingMessage, socket: Duplex): void {
  writeRawError(socket as Socket, 405, 'Method not allowed: this service is not a proxy');
}

/**
 * Node answers an `Expect` other than 100-continue itself, with a bare 417 and no body, before
 * Fastify sees the request; this gives that answer the service's `{"detail": ...}` and closes
 * the connection, which would otherwise wait for a body the client holds back until the timeout.
 */
export function refuseExpectation(_request: IncomingMessage, response: ServerResponse): void {
  const body = JSON.stringify({ detail: 'Expectation failed: only 100-continue is supported' });
  response.writeHead(417, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close' });
  response.end(body);
}

/**
 * Errors Fastify's router raises before any route runs (bad percent-encoding in the URL): before
 * the onRequest hooks too, so the headers every other answer gets are set here, and a policy
 * under which the error loads nothing (whatever path it was, `/app/` included).
 */
export function answerFrameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  setFramingHeaders(reply);
  reply.header('content-security-policy', "default-src 'none'; frame-ancestors 'none'");
  if (error.code === 'FST_ERR_BAD_URL') return void reply.code(400).send({ detail: 'Malformed URL: bad percent-encoding' });
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return void reply.code(414).send({ detail: 'Request line is too long' });
  reply.code(error.statusCode ?? 500).send({ detail: error.statusCode !== undefined && error.statusCode < 500 ? error.message : 'Internal Server Error' });
}
