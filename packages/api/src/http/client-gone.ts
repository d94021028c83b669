import type { FastifyReply } from 'fastify';

/**
 * An AbortSignal that fires when the connection closes before the response was sent, so a
 * blocking run stops (model call aborted, child processes killed) instead of working for nobody.
 */
export function abortOnClientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('client disconnected'));
  });
  return controller.signal;
}
