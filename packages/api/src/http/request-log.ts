import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * One log line per request, written when it ends: the request (method, URL with credentials
 * redacted, host, client address), the status and the time taken, as an access log has it.
 * Fastify's default writes a second line as each request arrives; under load that line cost as
 * much as the rest of a request's logging, and everything in it is in the last one.
 *
 * A response cut off before its end (the client went away from an event stream, say) never
 * finishes, so it gets a line of its own when its connection closes.
 */
export class RequestLog extends LogController {
  override incomingRequest(request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    reply.raw.once('close', () => {
      if (!reply.raw.writableEnded) reply.log.info(fieldsOf(reply), 'request closed before its response ended');
    });
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    if (error) reply.log.error({ ...fieldsOf(reply), err: error }, 'request errored');
    else reply.log.info(fieldsOf(reply), 'request completed');
  }
}

const fieldsOf = (reply: FastifyReply): Record<string, unknown> => ({ req: reply.request, res: reply, responseTime: reply.elapsedTime });
