import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_WEBHOOKS_PER_USER } from '../../src/webhooks/webhook-service.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { until } from '../support/until.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';

/*
 * Red-team corpus, webhooks: ann, a user of the same service, against bob's notifications. Her
 * webhooks point at receivers that take every request and never answer (a black hole does the
 * same), so each of her deliveries holds a sender for its whole timeout, and each run of hers
 * makes one per webhook. Judged by how many of her deliveries the sender had taken on when bob's
 * reached his receiver.
 */

const KEYS = { ann: 'ann-key-7c0d2e94b1a35f68', bob: 'bob-key-3a9e51c07d2b84f6' };

/** Takes every request and never answers; counts them. */
async function startStaller(): Promise<{ url: string; taken: () => number; close: () => Promise<void> }> {
  let taken = 0;
  const server: Server = createServer(() => {
    taken++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    taken: () => taken,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('webhook attacks across users', { timeout: 120_000 }, () => {
  let model: ScriptedModel;
  let t: TestApp;
  let address: string;
  let staller: Awaited<ReturnType<typeof startStaller>>;
  let receiver: Receiver;

  beforeAll(async () => {
    model = await startScriptedModel();
    staller = await startStaller();
    receiver = await startReceiver();
    t = await createTestApp({
      model: { url: model.url },
      env: { API_KEYS: `ann:${KEYS.ann},bob:${KEYS.bob}`, RATE_LIMIT_PER_MINUTE: '0', WEBHOOK_ALLOW_PRIVATE: 'true' },
    });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await staller?.close();
    await t?.close();
    await receiver?.close();
    await model?.close();
  });

  const call = (user: keyof typeof KEYS, method: string, path: string, body?: unknown) =>
    fetch(`${address}${path}`, {
      method,
      headers: { 'x-api-key': KEYS[user], 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const hook = async (user: keyof typeof KEYS, url: string): Promise<void> => {
    expect((await call(user, 'POST', '/me/webhooks', { url, events: ['run_ended'] })).status).toBe(201);
  };
  const runToEnd = async (user: keyof typeof KEYS): Promise<void> => {
    model.push(scripted.text('done'));
    const started = await call(user, 'POST', '/runs', { agent_type: 'explore', prompt: 'look', working_dir: '.' });
    expect(started.status).toBe(202);
    const { id } = (await started.json()) as { id: string };
    await until(async () => (await (await call(user, 'GET', `/runs/${id}`)).json()) as { status: string }, (run) => run.status === 'succeeded', 'the run to end');
  };

  it("one user's receivers that never answer do not hold another user's deliveries back", async () => {
    for (let index = 0; index < MAX_WEBHOOKS_PER_USER; index++) await hook('ann', `${staller.url}?n=${index}`);
    await runToEnd('ann');
    await until(async () => staller.taken(), (taken) => taken > 0, 'the sender to take on one of her deliveries');

    await hook('bob', receiver.url);
    await runToEnd('bob');
    const takenWhenBobHeard = await until(
      async () => (receiver.received.length > 0 ? staller.taken() : undefined),
      (taken) => taken !== undefined,
      "bob's delivery",
    );
    // The sender sends eight at once: had hers gone first, it would have taken on all twenty.
    expect(takenWhenBobHeard).toBeLessThan(8);
    expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({ event: 'run_ended', status: 'succeeded' });
  });
});
