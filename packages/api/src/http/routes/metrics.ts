import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { NotFoundError, UnauthorizedError } from '../../errors.js';
import type { ServiceMetrics } from '../../metrics/service-metrics.js';
import type { CredentialFailures } from '../credential-failures.js';

export interface MetricsRouteOptions {
  metrics: ServiceMetrics;
  /** Local mode (no API_KEYS): the endpoint is open. */
  localMode: boolean;
  /** METRICS_TOKEN; empty hides the endpoint outside local mode. */
  token: string;
  /** Wrong tokens count with wrong API keys: the same limit, the same 429. */
  failures: CredentialFailures;
}

export class MetricsUnauthorizedError extends UnauthorizedError {
  constructor(detail: 'Missing metrics token' | 'Invalid metrics token') {
    super(detail);
  }
}

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
}

/**
 * Scrapers carry their own credential (METRICS_TOKEN), apart from the users' API keys: a
 * monitoring system gets counts, never a user's data, and a user's key never reads metrics.
 */
function checkAccess(options: MetricsRouteOptions, request: FastifyRequest): void {
  if (options.localMode) return;
  if (options.token === '') throw new NotFoundError();
  options.failures.guard(request, () => {
    const presented = bearerToken(request.headers.authorization);
    if (presented === undefined) throw new MetricsUnauthorizedError('Missing metrics token');
    if (!timingSafeEqual(digest(presented), digest(options.token))) throw new MetricsUnauthorizedError('Invalid metrics token');
  });
}

export const metricsRoutes: FastifyPluginAsyncZod<MetricsRouteOptions> = async (app, options) => {
  app.get(
    '/metrics',
    {
      schema: {
        tags: ['health'],
        summary: 'Prometheus metrics',
        description: [
          'Prometheus text format. Open in local mode; with API_KEYS it needs `Authorization: Bearer <METRICS_TOKEN>`',
          '(401 `Missing metrics token` / `Invalid metrics token`; an X-API-Key does not count), and it is 404 when',
          'METRICS_TOKEN is unset. Wrong tokens count with wrong API keys toward the limit of 30 a minute per client (429).',
        ].join(' '),
        produces: ['text/plain'],
        response: { 200: z.string().describe('Prometheus text exposition format 0.0.4') },
      },
    },
    async (request, reply) => {
      checkAccess(options, request);
      const body = await options.metrics.render();
      return reply.type(options.metrics.contentType).send(body);
    },
  );
};
