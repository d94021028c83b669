import type { FastifyInstance } from 'fastify';

/**
 * During shutdown, responses still in flight tell the client to close the connection, so a
 * keep-alive socket does not hold the process open until its idle timeout once they are sent.
 */
export function closeConnectionsWhenDraining(app: FastifyInstance): void {
  let draining = false;
  app.addHook('preClose', async () => {
    draining = true;
  });
  app.addHook('onSend', async (_request, reply) => {
    if (draining) reply.header('connection', 'close');
  });
}
