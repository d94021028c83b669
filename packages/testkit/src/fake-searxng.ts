import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real HTTP server speaking SearXNG's JSON API (`GET /search?q=...&format=json`), scripted per
 * test: each request takes the next queued reply (then the default one), and every request is
 * recorded so a test can assert what the service sent.
 */

/** A result as SearXNG returns it; fields left out get SearXNG-like defaults. */
export interface SearxngResult {
  url: string;
  title?: string;
  content?: string;
  engine?: string;
  engines?: string[];
  publishedDate?: string | null;
  [field: string]: unknown;
}

export type SearxngReply =
  | { kind: 'results'; results: SearxngResult[]; delayMs?: number }
  | { kind: 'status'; status: number; body?: string; delayMs?: number }
  | { kind: 'raw'; body: string; contentType?: string; delayMs?: number }
  /** Destroys the connection without an answer. */
  | { kind: 'drop'; delayMs?: number };

/** Reply builders, for readable scripts: `fake.script(searxng.status(503), searxng.results([...]))`. */
export const searxng = {
  results: (results: SearxngResult[]): SearxngReply => ({ kind: 'results', results }),
  empty: (): SearxngReply => ({ kind: 'results', results: [] }),
  status: (status: number, body = ''): SearxngReply => ({ kind: 'status', status, body }),
  raw: (body: string, contentType = 'application/json'): SearxngReply => ({ kind: 'raw', body, contentType }),
  drop: (): SearxngReply => ({ kind: 'drop' }),
  /** `reply`, sent only after `delayMs`. */
  slow: (delayMs: number, reply: SearxngReply = { kind: 'results', results: [] }): SearxngReply => ({ ...reply, delayMs }),
};

export interface RecordedSearch {
  method: string;
  path: string;
  /** The query parameters (`q`, `format`, `engines`, `categories`, ...). */
  params: Record<string, string>;
  headers: IncomingMessage['headers'];
}

export interface FakeSearxng {
  /** Base URL, e.g. `http://127.0.0.1:40123` (the service appends `/search`). */
  readonly url: string;
  readonly requests: readonly RecordedSearch[];
  /** Queues replies for the next requests, in order. */
  script(...replies: SearxngReply[]): void;
  /** The reply once the queue is empty (initially: no results). */
  setDefault(reply: SearxngReply): void;
  close(): Promise<void>;
}

function searxngBody(query: string, results: readonly SearxngResult[]): string {
  return JSON.stringify({
    query,
    number_of_results: results.length,
    results: results.map((result, index) => ({
      title: '',
      content: '',
      engine: 'duckduckgo',
      engines: [result.engine ?? 'duckduckgo'],
      score: results.length - index,
      category: 'general',
      publishedDate: null,
      ...result,
    })),
    answers: [],
    corrections: [],
    infoboxes: [],
    suggestions: [],
    unresponsive_engines: [],
  });
}

function send(reply: SearxngReply, request: IncomingMessage, response: ServerResponse, query: string): void {
  switch (reply.kind) {
    case 'drop':
      request.socket.destroy();
      return;
    case 'status':
      response.writeHead(reply.status, { 'content-type': 'text/plain' }).end(reply.body ?? '');
      return;
    case 'raw':
      response.writeHead(200, { 'content-type': reply.contentType ?? 'application/json' }).end(reply.body);
      return;
    case 'results':
      response.writeHead(200, { 'content-type': 'application/json' }).end(searxngBody(query, reply.results));
  }
}

export async function startFakeSearxng(): Promise<FakeSearxng> {
  const requests: RecordedSearch[] = [];
  const queue: SearxngReply[] = [];
  let fallback: SearxngReply = searxng.empty();
  const timers = new Set<NodeJS.Timeout>();

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://fake-searxng');
    requests.push({ method: request.method ?? 'GET', path: url.pathname, params: Object.fromEntries(url.searchParams), headers: request.headers });
    if (url.pathname !== '/search') {
      response.writeHead(404).end('not found');
      return;
    }
    const reply = queue.shift() ?? fallback;
    const query = url.searchParams.get('q') ?? '';
    if (!reply.delayMs) return send(reply, request, response, query);
    const timer = setTimeout(() => {
      timers.delete(timer);
      send(reply, request, response, query);
    }, reply.delayMs);
    timers.add(timer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    script: (...replies) => void queue.push(...replies),
    setDefault: (reply) => {
      fallback = reply;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
