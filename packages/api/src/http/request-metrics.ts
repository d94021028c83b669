import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { ServiceMetrics } from '../metrics/service-metrics.js';

/** Requests that matched no route share one label: their URLs are whatever a client made up. */
export const UNMATCHED_ROUTE = 'unmatched';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

const isEventStream = (response: ServerResponse): boolean =>
  response.headersSent && !response.writableEnded && String(response.getHeader('content-type') ?? '').startsWith('text/event-stream');

function producesEventStream(schema: unknown): boolean {
  const produces = (schema as { produces?: unknown } | undefined)?.produces;
  return Array.isArray(produces) && produces.includes('text/event-stream');
}

/**
 * Counts and times every request by its route pattern (`/conversations/:conversation_id`), on
 * the raw response's `close`, which also fires for hijacked event streams. Open streams are
 * the responses of event-stream routes that have sent their event-stream headers and not ended,
 * read at scrape time, so a request refused before its stream opened is never counted.
 */
export function recordRequestMetrics(app: FastifyInstance, metrics: ServiceMetrics): void {
  const streaming = new Set<ServerResponse>();
  const forget = metrics.countStreams(() => [...streaming].filter(isEventStream).length);
  app.addHook('onClose', async () => {
    forget();
  });
  app.addHook('onRequest', async (request, reply) => {
    const started = performance.now();
    const response = reply.raw;
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE;
    const method = METHODS.has(request.method) ? request.method : 'OTHER';
    if (producesEventStream(request.routeOptions.schema)) streaming.add(response);
    response.once('close', () => {
      streaming.delete(response);
      const labels = { method, route, status: String(response.statusCode) };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, (performance.now() - started) / 1000);
    });
  });
}
