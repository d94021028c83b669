import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * Headers that keep another site from showing the service's pages in a frame of its own (the
 * docs page's "Try it out" sends requests as the service's own origin, which the Origin check
 * lets through, so a framed copy under a hostile page's overlay could be clicked through) and
 * keep a browser from reading a JSON body as anything else. An API has no page meant to be framed.
 */
export function setFramingHeaders(reply: FastifyReply): void {
  reply.header('content-security-policy', "frame-ancestors 'none'");
  reply.header('x-frame-options', 'DENY');
  reply.header('x-content-type-options', 'nosniff');
}

export function forbidFraming(app: FastifyInstance): void {
  app.addHook('onRequest', async (_request, reply) => setFramingHeaders(reply));
}
