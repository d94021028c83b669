import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  CreatedWebhookResponse,
  CreateWebhookRequest,
  ErrorResponse,
  ValidationErrorResponse,
  WebhookDeliveryListResponse,
  WebhookListResponse,
  WebhookParams,
  WebhookResponse,
} from '@mada/protocol';
import { z } from 'zod';
import type { DeliveryRecord, WebhookRecord } from '../../db/webhook-repository.js';
import type { WebhookService } from '../../webhooks/webhook-service.js';

export interface WebhookRoutesOptions {
  webhooks: WebhookService;
}

const security = [{ ApiKey: [] }];

/** Never the secret: it is shown once, by the route that makes it. */
const toWebhookResponse = (webhook: WebhookRecord): WebhookResponse => ({
  id: webhook.id,
  url: webhook.url,
  events: webhook.events,
  created_at: webhook.createdAt.toISOString(),
});

const toDelivery = (delivery: DeliveryRecord) => ({
  id: delivery.id,
  event: delivery.event,
  status: delivery.status,
  attempts: delivery.attempts,
  created_at: delivery.createdAt.toISOString(),
  last_attempt_at: delivery.lastAttemptAt?.toISOString() ?? null,
  last_status_code: delivery.lastStatusCode,
  last_error: delivery.lastError,
  next_attempt_at: delivery.status === 'pending' ? delivery.nextAttemptAt.toISOString() : null,
  delivered_at: delivery.deliveredAt?.toISOString() ?? null,
});

/** The caller's webhooks (TEAMS.md section 13): another user's id is 404 `Webhook not found`. */
export const webhookRoutes: FastifyPluginAsyncZod<WebhookRoutesOptions> = async (app, { webhooks }) => {
  const me = { tags: ['me'], security };

  app.get('/me/webhooks', { schema: { ...me, summary: "The caller's webhooks, newest first (no secrets)", response: { 200: WebhookListResponse } } }, async (request) => ({
    webhooks: (await webhooks.list(request.caller.userId)).map(toWebhookResponse),
  }));

  app.post(
    '/me/webhooks',
    {
      schema: {
        ...me,
        summary: 'A webhook for approval_requested and/or run_ended; the secret is in this response only',
        body: CreateWebhookRequest,
        // 409: the caller has 20 webhooks already. 422 with a detail: a URL the service will not post to.
        response: { 201: CreatedWebhookResponse, 409: ErrorResponse, 422: ValidationErrorResponse.or(ErrorResponse) },
      },
    },
    async (request, reply) => {
      const created = await webhooks.create(request.caller.userId, request.body);
      return reply.code(201).send({ ...toWebhookResponse(created), secret: created.secret });
    },
  );

  app.get(
    '/me/webhooks/:webhook_id',
    { schema: { ...me, summary: 'One of the caller\'s webhooks', params: WebhookParams, response: { 200: WebhookResponse, 404: ErrorResponse } } },
    async (request) => toWebhookResponse(await webhooks.get(request.caller.userId, request.params.webhook_id)),
  );

  app.delete(
    '/me/webhooks/:webhook_id',
    { schema: { ...me, summary: 'Delete a webhook and its deliveries (pending ones are not sent)', params: WebhookParams, response: { 204: z.undefined().describe('Deleted'), 404: ErrorResponse } } },
    async (request, reply) => {
      await webhooks.delete(request.caller.userId, request.params.webhook_id);
      return reply.code(204).send();
    },
  );

  app.get(
    '/me/webhooks/:webhook_id/deliveries',
    {
      schema: {
        ...me,
        summary: "A webhook's last 100 deliveries, newest first, each with its last outcome",
        params: WebhookParams,
        response: { 200: WebhookDeliveryListResponse, 404: ErrorResponse },
      },
    },
    async (request) => ({ deliveries: (await webhooks.deliveries(request.caller.userId, request.params.webhook_id)).map(toDelivery) }),
  );
};
