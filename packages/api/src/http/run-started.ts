import type { FastifyReply } from 'fastify';
import type { RunRecord } from '../db/run-repository.js';
import { toRunResponse } from '../runs/run-response.js';

/**
 * The answer of a route that starts a run: 202 with `Location` for a new run, 200 with the first
 * run when an Idempotency-Key repeated an earlier request.
 */
export function answerStarted(reply: FastifyReply, started: { run: RunRecord; created: boolean }): FastifyReply {
  const body = toRunResponse(started.run);
  if (!started.created) return reply.code(200).send(body);
  return reply.code(202).header('location', `/runs/${started.run.id}`).send(body);
}
