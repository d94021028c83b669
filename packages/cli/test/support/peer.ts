import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PeerRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

export type PeerHandler = (request: PeerRequest, response: ServerResponse) => unknown;

export interface Peer {
  url: string;
  requests: PeerRequest[];
  close(): Promise<void>;
}

/**
 * A small HTTP peer speaking the service's protocol from hand-written responses: for what the
 * real service never does on purpose (invalid JSON, unknown events, a stream cut short, no
 * streamed-turn route).
 */
export async function startPeer(handler: PeerHandler): Promise<Peer> {
  const requests: PeerRequest[] = [];
  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let text = '';
    for await (const chunk of req) text += String(chunk);
    const request: PeerRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
      body: text === '' ? undefined : (JSON.parse(text) as unknown),
    };
    requests.push(request);
    await handler(request, res);
  };
  // A handler that throws fails its test by the response never coming; the peer itself goes on.
  const server = createServer((req, res) => void answer(req, res).catch(() => res.destroy()));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

/** Starts an event stream and writes raw text to it (frames, comments, garbage). */
export function openSse(response: ServerResponse): (text: string) => void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  response.flushHeaders();
  return (text) => response.write(text);
}

export const frame = (value: object): string => `data: ${JSON.stringify(value)}\n\n`;

const NOW = '2026-01-01T00:00:00.000Z';

export function conversationBody(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id, agent_type: 'task', title: null, working_dir: '/tmp', total_tokens: 0, created_at: NOW, updated_at: null, ...extra };
}

export function messageBody(id: string, role: string, content: string): Record<string, unknown> {
  return { id, role, content, token_count: 3, is_summary: false, created_at: NOW };
}

/** A URL where nothing listens: a port the OS just handed out and took back. */
export async function deadUrl(): Promise<string> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return `http://127.0.0.1:${port}`;
}
