import { createHmac } from 'node:crypto';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { resolveTarget } from './addresses.js';
import type { HostResolver } from './host-resolver.js';

/** A receiver has this long to connect, answer and send its (ignored) body. */
export const SEND_TIMEOUT_MS = 10_000;
/** Read no more of a receiver's answer than this: it is discarded anyway, and a huge one must not tie us up. */
export const MAX_RESPONSE_BYTES = 64 * 1024;

/** `sha256=` and the hex HMAC-SHA256 of the body with the webhook's secret: what `X-Mada-Signature` carries. */
export const signature = (secret: string, body: string): string => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

export interface SendResult {
  /** A 2xx answer. */
  delivered: boolean;
  /** The receiver's status code, when it answered. */
  statusCode: number | null;
  /** What failed before an answer: `dns`, `address_refused`, `timeout`, `connection`; never the receiver's text. */
  error: string | null;
}

export interface Delivery {
  id: string;
  event: string;
  url: string;
  secret: string;
  body: string;
}

/**
 * One attempt: resolves the host once, checks the addresses (DNS rebinding: the check and the
 * connection use the same answer), and POSTs the signed body to that address. Redirects are not
 * followed (a 3xx is a failed attempt), and the answer's body is drained up to MAX_RESPONSE_BYTES,
 * never kept.
 */
export async function sendDelivery(delivery: Delivery, options: { allowPrivate: boolean; userAgent: string; resolver: HostResolver }): Promise<SendResult> {
  const url = new URL(delivery.url);
  const target = await resolveTarget(url.hostname, options.allowPrivate, options.resolver);
  if (!target.ok) return { delivered: false, statusCode: null, error: target.reason };
  // Node asks with `all: true` when it tries several addresses (autoSelectFamily): either way, this one.
  const pinned = ((_hostname: string, lookupOptions: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (lookupOptions.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as LookupFunction;
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<SendResult>((resolve) => {
    let statusCode: number | null = null;
    let settled = false;
    const finish = (result: SendResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outgoing.destroy();
      resolve(result);
    };
    const answered = (): SendResult => ({ delivered: statusCode !== null && statusCode >= 200 && statusCode < 300, statusCode, error: null });
    const outgoing = request(
      url,
      {
        method: 'POST',
        lookup: pinned,
        // No pooled socket: each attempt resolves and checks its address anew.
        agent: false,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(delivery.body),
          'user-agent': options.userAgent,
          'x-mada-event': delivery.event,
          'x-mada-delivery': delivery.id,
          'x-mada-signature': signature(delivery.secret, delivery.body),
        },
      },
      (response: IncomingMessage) => {
        statusCode = response.statusCode ?? null;
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) finish(answered());
        });
        response.on('end', () => finish(answered()));
        response.on('error', () => finish(answered()));
      },
    );
    const timer = setTimeout(() => finish(statusCode === null ? { delivered: false, statusCode: null, error: 'timeout' } : answered()), SEND_TIMEOUT_MS);
    outgoing.on('error', () => finish(statusCode === null ? { delivered: false, statusCode: null, error: 'connection' } : answered()));
    outgoing.end(delivery.body);
  });
}
