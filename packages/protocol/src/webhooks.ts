import { z } from 'zod';
import { WEBHOOK_EVENTS } from './webhook-events.js';

/* Webhooks per user (`/me/webhooks*`, TEAMS.md section 13): the wire shapes. */

const Timestamp = z.string().meta({ description: 'UTC ISO 8601 with milliseconds and Z' });

export const WebhookEvent = z.enum(WEBHOOK_EVENTS).meta({ id: 'WebhookEvent' });
export type WebhookEvent = z.infer<typeof WebhookEvent>;

export const CreateWebhookRequest = z
  .object({
    url: z
      .string()
      .min(1)
      .max(2048)
      .meta({ description: 'http or https, no credentials; loopback, private and link-local addresses are refused unless WEBHOOK_ALLOW_PRIVATE=true', examples: ['https://ntfy.sh/my-approvals'] }),
    events: z.array(WebhookEvent).min(1).max(2),
    secret: z
      .string()
      .min(16)
      .max(256)
      .regex(/^[\x21-\x7e]+$/, 'A secret is printable ASCII without spaces')
      .optional()
      .meta({ description: 'Signs each delivery (HMAC-SHA256); made by the service when absent', examples: ['a-long-random-secret-of-yours'] }),
  })
  .meta({ id: 'CreateWebhookRequest' });
export type CreateWebhookRequest = z.infer<typeof CreateWebhookRequest>;

export const WebhookResponse = z
  .object({ id: z.uuid(), url: z.string(), events: z.array(WebhookEvent), created_at: Timestamp })
  .meta({ id: 'WebhookResponse' });
export type WebhookResponse = z.infer<typeof WebhookResponse>;

export const CreatedWebhookResponse = WebhookResponse.extend({
  secret: z.string().meta({ description: 'Shown here once: every delivery carries `X-Mada-Signature: sha256=<hex HMAC-SHA256 of the body with it>`' }),
}).meta({ id: 'CreatedWebhookResponse' });
export type CreatedWebhookResponse = z.infer<typeof CreatedWebhookResponse>;

export const WebhookListResponse = z.object({ webhooks: z.array(WebhookResponse) }).meta({ id: 'WebhookListResponse' });
export type WebhookListResponse = z.infer<typeof WebhookListResponse>;

export const WebhookDelivery = z
  .object({
    id: z.uuid().meta({ description: 'Also sent as `X-Mada-Delivery`: a receiver can drop a repeat' }),
    event: WebhookEvent,
    status: z.enum(['pending', 'delivered', 'failed']).meta({ description: '`failed`: given up after 24 h of retries' }),
    attempts: z.number().int().min(0),
    created_at: Timestamp,
    last_attempt_at: Timestamp.nullable(),
    last_status_code: z.number().int().nullable().meta({ description: "The receiver's last HTTP status; its body is never read or shown" }),
    last_error: z.string().nullable().meta({ description: 'What failed before an answer: dns, address_refused, timeout, connection; owner_disabled when given up unsent because the owner is disabled' }),
    next_attempt_at: Timestamp.nullable().meta({ description: 'While pending' }),
    delivered_at: Timestamp.nullable(),
  })
  .meta({ id: 'WebhookDelivery' });
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

export const WebhookDeliveryListResponse = z.object({ deliveries: z.array(WebhookDelivery) }).meta({ id: 'WebhookDeliveryListResponse' });
export type WebhookDeliveryListResponse = z.infer<typeof WebhookDeliveryListResponse>;

/** What a receiver is sent (the JSON body, signed). */
export const WebhookPayload = z
  .object({
    event: WebhookEvent,
    at: Timestamp,
    run_id: z.uuid(),
    approval_id: z.uuid().optional(),
    tool: z.string().optional(),
    status: z.enum(['succeeded', 'failed', 'cancelled', 'interrupted']).optional().meta({ description: "run_ended: the run's final status" }),
  })
  .meta({ id: 'WebhookPayload' });
export type WebhookPayload = z.infer<typeof WebhookPayload>;

export const WebhookParams = z.object({ webhook_id: z.string() });
