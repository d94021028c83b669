import { InvalidArgumentError } from 'commander';
import { CreateWebhookRequest, WebhookEvent, type WebhookDelivery } from '@mada/protocol';
import { resolveSettings } from '../config/resolve.js';
import { EXIT_OK, UsageError } from '../errors.js';
import { ago, clip, day, printTable, uniqueShortIds, when } from '../ui/table.js';
import type { Terminal } from '../ui/terminal.js';
import { resolveWebhookId } from './id-prefix.js';
import { apiFlag, clientFor, type ServiceFlags } from './service.js';

export interface WebhooksFlags extends ServiceFlags {
  json?: boolean;
}

export interface AddWebhookFlags extends WebhooksFlags {
  event?: WebhookEvent[];
  secret?: string;
}

/** `--event` given again adds to the list; a name the service does not know is refused here. */
export function collectEvent(value: string, previous: WebhookEvent[] | undefined): WebhookEvent[] {
  const parsed = WebhookEvent.safeParse(value);
  if (!parsed.success) throw new InvalidArgumentError(`must be one of ${WebhookEvent.options.join(', ')}`);
  return [...new Set([...(previous ?? []), parsed.data])];
}

/** `mada webhooks`: the caller's webhooks, newest first; never their secrets (the service has no way to show them again). */
export async function webhooksCommand(flags: WebhooksFlags, terminal: Terminal): Promise<number> {
  const { values } = resolveSettings(apiFlag(flags));
  const { webhooks } = await clientFor(values).listWebhooks();
  if (flags.json) {
    terminal.printJson({ webhooks });
    return EXIT_OK;
  }
  if (webhooks.length === 0) {
    terminal.print('No webhooks. Add one with: mada webhooks add <url>');
    return EXIT_OK;
  }
  const ids = uniqueShortIds(webhooks.map((webhook) => webhook.id));
  // 8 (id), 28 (both events), 10 (date) and the gaps leave the URL 26 columns of 80; it is last,
  // cut to the terminal's width, and `--json` has it whole.
  const rows = webhooks.map((webhook, index) => [ids[index]!, webhook.events.join(','), day(webhook.created_at), webhook.url]);
  printTable([['ID', 'EVENTS', 'CREATED', 'URL'], ...rows], terminal, new Set(), true);
  return EXIT_OK;
}

/** `mada webhooks add <url>`: prints the secret once, as the service shows it only in this answer. */
export async function addWebhookCommand(url: string, flags: AddWebhookFlags, terminal: Terminal): Promise<number> {
  const request = { url, events: flags.event ?? [...WebhookEvent.options], ...(flags.secret === undefined ? {} : { secret: flags.secret }) };
  // The same schema the service checks the body with: a bad secret is a usage error, said before any request.
  if (!CreateWebhookRequest.shape.secret.safeParse(request.secret).success) {
    throw new UsageError('--secret must be 16 to 256 printable ASCII characters without spaces', 'or leave it out and the service makes one');
  }
  if (!CreateWebhookRequest.shape.url.safeParse(url).success) throw new UsageError('the URL must have 1 to 2048 characters');
  const { values } = resolveSettings(apiFlag(flags));
  const created = await clientFor(values).createWebhook(request);
  if (flags.json) {
    terminal.printJson(created);
    return EXIT_OK;
  }
  terminal.print(created.secret);
  terminal.print(
    terminal.style(
      'dim',
      `webhook ${created.id} (${created.events.join(', ')} to ${clip(created.url, 60)}): its secret is shown once, store it now to check X-Mada-Signature`,
    ),
  );
  return EXIT_OK;
}

/** `mada webhooks rm <id>`: deleted with its deliveries; a pending one is not sent. */
export async function removeWebhookCommand(id: string, flags: ServiceFlags, terminal: Terminal): Promise<number> {
  const { values } = resolveSettings(apiFlag(flags));
  const client = clientFor(values);
  const webhookId = await resolveWebhookId(client, id);
  await client.deleteWebhook(webhookId);
  terminal.print(`Webhook ${webhookId} deleted.`);
  return EXIT_OK;
}

/** What the last attempt came to: the receiver's status code, the kind of failure before one, or none yet. */
const resultOf = (delivery: WebhookDelivery): string => (delivery.last_status_code === null ? (delivery.last_error ?? '-') : String(delivery.last_status_code));

/** When a pending delivery is tried next, a delivered one arrived, or a failed one was last tried. */
function whenOf(delivery: WebhookDelivery, now: number): string {
  if (delivery.status === 'pending') return delivery.next_attempt_at === null ? '-' : `next ${when(delivery.next_attempt_at).slice(11)}`;
  const at = delivery.delivered_at ?? delivery.last_attempt_at;
  return at === null ? '-' : ago(at, now);
}

/** `mada webhooks deliveries <id>`: the webhook's last 100 deliveries, newest first. */
export async function webhookDeliveriesCommand(id: string, flags: WebhooksFlags, terminal: Terminal): Promise<number> {
  const { values } = resolveSettings(apiFlag(flags));
  const client = clientFor(values);
  const webhookId = await resolveWebhookId(client, id);
  const { deliveries } = await client.webhookDeliveries(webhookId);
  if (flags.json) {
    terminal.printJson({ deliveries });
    return EXIT_OK;
  }
  if (deliveries.length === 0) {
    terminal.print('No deliveries yet: one is made when a run of yours asks for an approval or ends.');
    return EXIT_OK;
  }
  const now = Date.now();
  // At most 8, 18, 9, 5, 15, 10 and the gaps: 75 columns; `--json` has the times to the millisecond.
  const rows = deliveries.map((delivery) => [ago(delivery.created_at, now), delivery.event, delivery.status, String(delivery.attempts), resultOf(delivery), whenOf(delivery, now)]);
  printTable([['CREATED', 'EVENT', 'STATUS', 'TRIES', 'RESULT', 'LAST/NEXT'], ...rows], terminal, new Set([3]));
  return EXIT_OK;
}
