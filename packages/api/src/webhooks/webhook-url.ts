import { resolveTarget } from './addresses.js';
import { WebhookUrlError } from './errors.js';
import type { HostResolver } from './host-resolver.js';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

/**
 * Refuses, with a 422 that says why, a URL the service will not post to: not http(s), carrying
 * credentials, or (unless `allowPrivate`) with a host that resolves to a loopback, private,
 * link-local or other non-public address. Sending checks the address again (send.ts).
 */
export async function checkWebhookUrl(text: string, allowPrivate: boolean, resolver: HostResolver): Promise<URL> {
  if (text.length > MAX_WEBHOOK_URL_LENGTH) throw new WebhookUrlError(`Webhook URL is longer than ${MAX_WEBHOOK_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WebhookUrlError('Webhook URL is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new WebhookUrlError('Webhook URL must use http or https');
  if (url.username !== '' || url.password !== '') throw new WebhookUrlError('Webhook URL must not carry credentials');
  const target = await resolveTarget(url.hostname, allowPrivate, resolver);
  if (!target.ok && target.reason === 'dns') throw new WebhookUrlError(`Webhook URL host does not resolve: ${url.hostname}`);
  if (!target.ok) throw new WebhookUrlError('Webhook URL resolves to a loopback, private or link-local address');
  return url;
}
