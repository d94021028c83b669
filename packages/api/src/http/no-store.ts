import type { FastifyInstance } from 'fastify';

/**
 * Tells every cache not to keep what the keyed routes answer. Each answer is one user's data,
 * chosen by the X-API-Key header, and caches treat a custom header as nothing (RFC 9111 spares
 * only requests with `Authorization`): a shared cache in front of the service (Varnish stores an
 * answer without Cache-Control for two minutes) would hand one user's run to the next caller of
 * its URL, with another key or none.
 */
export function forbidStoring(scope: FastifyInstance): void {
  scope.addHook('onRequest', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });
}
