import type { FastifyRequest } from 'fastify';
import { requestHash } from '../runs/idempotency.js';

/** The request's Idempotency-Key (validated by the route's header schema) with a digest of what it asks. */
export function idempotencyOf(request: FastifyRequest, route: string): { key: string; hash: string } | undefined {
  const key = request.headers['idempotency-key'];
  if (typeof key !== 'string' || key === '') return undefined;
  return { key, hash: requestHash(route, { params: request.params, body: request.body }) };
}
