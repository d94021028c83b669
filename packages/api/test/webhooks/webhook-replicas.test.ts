import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startReplicas, type Replicas } from '../support/app.js';
import { TEST_DATABASE_URL } from '../support/databases.js';
import { until } from '../support/until.js';
import { startReceiver, type Receiver } from './receiver.js';

describe.skipIf(!TEST_DATABASE_URL)('webhook deliveries with two replicas on one PostgreSQL database', () => {
  let replicas: Replicas | undefined;
  let receiver: Receiver | undefined;

  afterEach(async () => {
    await replicas?.close();
    await receiver?.close();
  });

  it('sends each stored delivery once, whichever replica claims it', async () => {
    receiver = await startReceiver();
    replicas = await startReplicas({ API_KEYS: 'ann:ann-key-0123456789', RATE_LIMIT_PER_MINUTE: '0', WEBHOOK_ALLOW_PRIVATE: 'true' });
    const created = await fetch(`${replicas.addressA}/me/webhooks`, {
      method: 'POST',
      headers: { 'x-api-key': 'ann-key-0123456789', 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, events: ['run_ended'] }),
    });
    expect(created.status).toBe(201);
    // Stored as a run's end stores them, on both replicas' database; both senders look for them.
    const store = replicas.a.database.repository.webhooks;
    for (let i = 0; i < 40; i++) {
      await store.enqueueDeliveries('ann', 'run_ended', new Date(), () => ({ id: randomUUID(), event: 'run_ended', body: `{"n":${i}}` }));
    }
    const ids = await until(
      async () => receiver!.received.map((request) => request.headers['x-mada-delivery'] as string),
      (list) => new Set(list).size === 40,
      'forty deliveries',
    );
    const hook = ((await (await fetch(`${replicas.addressB}/me/webhooks`, { headers: { 'x-api-key': 'ann-key-0123456789' } })).json()) as { webhooks: { id: string }[] }).webhooks[0]!;
    const shown = await until(
      async () => ((await (await fetch(`${replicas!.addressB}/me/webhooks/${hook.id}/deliveries`, { headers: { 'x-api-key': 'ann-key-0123456789' } })).json()) as { deliveries: { status: string; attempts: number }[] }).deliveries,
      (list) => list.length === 40 && list.every((d) => d.status === 'delivered'),
      'every delivery recorded as delivered',
    );
    expect(ids).toHaveLength(40);
    expect(shown.every((d) => d.attempts === 1)).toBe(true);
  });
});
