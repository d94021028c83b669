import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { isInitializeRequest, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ErrorResponse } from '@mada/protocol';
import type { AgentEngine } from '../../agents/engine.js';
import type { ApprovalService } from '../../approvals/approval-service.js';
import type { RunService } from '../../runs/run-service.js';
import type { AddressFilter } from '../../util/address-hiding.js';
import type { MessageLimits } from '../message-limit.js';
import { McpSessions, type McpSession } from '../mcp/sessions.js';
import { watchCredential } from '../credential-watch.js';

export interface McpRoutesOptions {
  engine: AgentEngine;
  runs: RunService;
  approvals: ApprovalService;
  messageLimits: MessageLimits;
  filter: AddressFilter;
}

/** A body that is not JSON: the route answers it with JSON-RPC's parse error, not the API's 422. */
class MalformedJson {}

const SESSION_HEADER = 'mcp-session-id';

/** The wire shape of `POST /mcp`, for the document only: the SDK checks each message itself. */
const McpMessage = z.unknown().meta({
  description: 'A JSON-RPC 2.0 message of the Model Context Protocol, or a batch of them.',
  examples: [
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 'example-client', version: '1.0.0' } },
    },
  ],
});

/** What the route itself answers with when a body or session cannot be used. */
const McpRpcError = z
  .object({ jsonrpc: z.literal('2.0'), error: z.object({ code: z.number().int(), message: z.string() }), id: z.null() })
  .meta({ id: 'McpRpcError', description: 'A JSON-RPC error answer' });

/** A JSON-RPC error answer (`id` null: it answers no request the server could read). */
function rpcError(reply: FastifyReply, status: number, code: number, message: string): FastifyReply {
  return reply.code(status).type('application/json').send({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/** The request as the SDK's web-standard transport reads it; the body, already parsed, goes beside it. */
function webRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    // The body is handed over parsed: its framing headers describe nothing the transport reads.
    if (value === undefined || name === 'content-length' || name === 'transfer-encoding') continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return new Request(new URL(request.url, 'http://mada.invalid'), { method: request.method, headers });
}

/** Sends the transport's answer through Fastify (its hooks, logs and metrics see it like any route's). */
function sendWeb(reply: FastifyReply, response: Response): FastifyReply {
  reply.code(response.status);
  response.headers.forEach((value, name) => void reply.header(name, value));
  if (response.body === null) return reply.send();
  // Node sends the head with the first byte of the body, and a tool call's stream may stay silent
  // until its run ends: the client (and any proxy) hears at once that the call was taken.
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) reply.raw.once('pipe', () => reply.raw.flushHeaders());
  return reply.send(Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>));
}

/** The ids of the requests a POST carries: the calls its connection answers. */
function requestIds(body: unknown): RequestId[] {
  const messages = Array.isArray(body) ? (body as unknown[]) : [body];
  return messages.flatMap((message) => {
    if (message === null || typeof message !== 'object' || !('method' in message) || !('id' in message)) return [];
    const id = (message as { id: unknown }).id;
    return typeof id === 'string' || typeof id === 'number' ? [id] : [];
  });
}

const isInitialize = (body: unknown): boolean => (Array.isArray(body) ? body.some((message) => isInitializeRequest(message)) : isInitializeRequest(body));

/**
 * While a session's request is answered: counts it open, cancels its calls when the client goes
 * away before their answers (and when its credential stops being valid under a long call).
 */
function watchRequest(request: FastifyRequest, reply: FastifyReply, session: McpSession): void {
  session.open += 1;
  const ids = requestIds(request.body);
  const stopWatching = watchCredential(request, () => reply.raw.destroy());
  reply.raw.once('close', () => {
    stopWatching();
    session.open -= 1;
    if (reply.raw.writableFinished) return;
    for (const id of ids) session.inflight.get(id)?.();
  });
}

export const mcpRoutes: FastifyPluginAsyncZod<McpRoutesOptions> = async (app, options) => {
  const sessions = new McpSessions({ ...options, log: app.log });
  app.addHook('onClose', () => sessions.closeAll());

  // Fastify's JSON parser (prototype-poisoning checks, the body limit) as on every route, but a
  // body it cannot read reaches the route, which answers in JSON-RPC's terms.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    void parseJson(request, typeof body === 'string' ? body : body.toString('utf8'), (error, value) => done(null, error ? new MalformedJson() : value));
  });

  const security = [{ ApiKey: [] }];
  const tags = ['mcp'];
  const sessionOf = (request: FastifyRequest): string | undefined => {
    const value = request.headers[SESSION_HEADER];
    return Array.isArray(value) ? value[0] : value;
  };

  app.post(
    '/mcp',
    {
      schema: {
        tags,
        security,
        summary: "MCP's Streamable HTTP transport: mada's agents as tools of another agent",
        description: [
          'Speaks the Model Context Protocol to an MCP client (its Streamable HTTP transport, with sessions: `Mcp-Session-Id`).',
          'Tools `explore`, `plan` and `task` take `prompt`, `working_dir`, `mode` and `model`; each call is a stored run of the caller,',
          "answered with the run's final text (`isError` when it fails or is cancelled), with progress notifications on the way.",
          "A run's approvals go to the client as elicitations when it declared that capability, else to the approvals inbox.",
          'Authenticated like the rest of the API. See docs/mcp.md.',
        ].join(' '),
        body: McpMessage,
        response: {
          // Not the API's event streams: JSON-RPC messages, as MCP frames them.
          200: z.unknown().describe('The answers to the requests, as text/event-stream of JSON-RPC messages (progress and elicitations come on it too)'),
          202: z.undefined().describe('Accepted: the body held only notifications or answers'),
          // Not JSON-RPC, no session header, or a session the caller does not have (start one with initialize).
          400: McpRpcError,
          401: ErrorResponse,
          404: McpRpcError,
          413: ErrorResponse,
          429: ErrorResponse.or(McpRpcError),
        },
      },
    },
    async (request, reply) => {
      const body: unknown = request.body;
      if (body instanceof MalformedJson) return rpcError(reply, 400, -32700, 'Parse error: Invalid JSON');
      const id = sessionOf(request);
      let session: McpSession | undefined;
      if (id !== undefined) {
        session = sessions.find(id, request.caller.userId);
        if (session === undefined) return rpcError(reply, 404, -32001, 'Session not found');
      } else {
        if (!isInitialize(body)) return rpcError(reply, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
        session = await sessions.create(request.caller.userId);
        if (session === undefined) return rpcError(reply, 429, -32000, 'Too many MCP sessions with calls running: finish or close one first');
      }
      watchRequest(request, reply, session);
      const response = await session.transport.handleRequest(webRequest(request), { parsedBody: body });
      // An initialize the transport refused (a wrong Accept header, say) made no session: nothing to keep.
      if (id === undefined && session.transport.sessionId === undefined) await session.server.close();
      return sendWeb(reply, response);
    },
  );

  app.get(
    '/mcp',
    {
      schema: {
        tags,
        security,
        summary: 'Not offered: 405',
        description: 'mada sends nothing outside the answer to a request (progress and elicitations go on the tool call\'s own stream), so it opens no standing event stream.',
        response: { 405: McpRpcError, 401: ErrorResponse },
      },
    },
    async (_request, reply) => {
      reply.header('allow', 'POST, DELETE');
      return rpcError(reply, 405, -32000, 'Method not allowed: mada opens no standing stream; POST requests to /mcp');
    },
  );

  app.delete(
    '/mcp',
    {
      schema: {
        tags,
        security,
        summary: 'End an MCP session (the `Mcp-Session-Id` header); its running calls are cancelled',
        response: { 200: z.undefined().describe('Ended'), 401: ErrorResponse, 404: McpRpcError },
      },
    },
    async (request, reply) => {
      const id = sessionOf(request);
      const session = id === undefined ? undefined : sessions.find(id, request.caller.userId);
      if (session === undefined) return rpcError(reply, 404, -32001, 'Session not found');
      for (const cancel of session.inflight.values()) cancel();
      return sendWeb(reply, await session.transport.handleRequest(webRequest(request)));
    },
  );
};
