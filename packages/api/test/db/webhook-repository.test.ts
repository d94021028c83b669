import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebhookLimitReached, type WebhookRecord, type WebhookRepository } from '../../src/db/webhook-repository.js';
import { createTestDatabase, DIALECTS, openSharedDatabase, type TestDatabase } from '../support/databases.js';

const T0 = new Date('2026-02-01T10:00:00.000Z');
const later = (ms: number) => new Date(T0.getTime() + ms);

describe.each(DIALECTS)('webhook repository on %s', (dialect) => {
  let db: TestDatabase;
  let store: WebhookRepository;

  beforeEach(async () => {
    db = await createTestDatabase(dialect);
    store = db.repository.webhooks;
  });
  afterEach(async () => db.drop());

  const hook = (userId = 'alice', events: WebhookRecord['events'] = ['run_ended']): WebhookRecord => ({
    id: randomUUID(),
    userId,
    url: 'https://hooks.example.com/secret-path',
    events,
    secret: 'a-secret-of-sixteen+',
    createdAt: T0,
  });
  const enqueue = (userId: string, event: WebhookRecord['events'][number], at = T0) =>
    store.enqueueDeliveries(userId, event, at, () => ({ id: randomUUID(), event, body: `{"event":"${event}"}` }));

  it("stores a delivery for each of the user's webhooks that subscribe to the event, and none for others'", async () => {
    const ended = await store.createWebhook(hook('alice', ['run_ended']), 20);
    const asked = await store.createWebhook(hook('alice', ['approval_requested']), 20);
    await store.createWebhook(hook('bob', ['run_ended', 'approval_requested']), 20);
    expect((await enqueue('alice', 'run_ended')).map((d) => d.webhookId)).toEqual([ended.id]);
    expect((await enqueue('alice', 'approval_requested')).map((d) => d.webhookId)).toEqual([asked.id]);
    expect(await store.findWebhook('bob', ended.id)).toBeUndefined();
    expect(await store.deleteWebhook('bob', ended.id, T0)).toBe(false);
    // Deleting a webhook takes its deliveries with it: none is sent after.
    expect(await store.deleteWebhook('alice', ended.id, T0)).toBe(true);
    expect(await store.listDeliveries(ended.id, 10)).toEqual([]);
    expect((await store.claimDue(T0, later(60_000), 10)).map((d) => d.webhookId)).toEqual([asked.id]);
  });

  it('passes over the deliveries of the users it is told to skip, and names the owner of each one it claims', async () => {
    await store.createWebhook(hook('alice'), 20);
    await store.createWebhook(hook('alice'), 20);
    const bobs = await store.createWebhook(hook('bob'), 20);
    await enqueue('alice', 'run_ended');
    // Bob's falls due after alice's: only the skip lets it past them.
    await enqueue('bob', 'run_ended', later(5));
    const claimed = await store.claimDue(later(10), later(60_000), 1, ['alice']);
    expect(claimed.map((d) => [d.userId, d.webhookId])).toEqual([['bob', bobs.id]]);
    expect((await store.claimDue(later(10), later(60_000), 10, ['bob'])).map((d) => d.userId)).toEqual(['alice', 'alice']);
  });

  it('refuses a webhook beyond the limit, however many are created at once', async () => {
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => store.createWebhook(hook(), 4)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(4);
    expect(results.filter((r) => r.status === 'rejected').every((r) => (r as PromiseRejectedResult).reason instanceof WebhookLimitReached)).toBe(true);
    expect(await store.listWebhooks('alice')).toHaveLength(4);
  });

  it('gives each due delivery to one claimer only, also across two connections (replicas)', async () => {
    await store.createWebhook(hook(), 20);
    for (let i = 0; i < 30; i++) await enqueue('alice', 'run_ended');
    const other = await openSharedDatabase(db);
    try {
      // Each claimer claims until nothing is left; together they must have claimed each delivery once.
      const claimer = async (repository: WebhookRepository) => {
        const mine = [];
        for (;;) {
          const batch = await repository.claimDue(later(1), later(60_000), 4);
          if (batch.length === 0) return mine;
          mine.push(...batch);
        }
      };
      const claims = await Promise.all(Array.from({ length: 6 }, (_, i) => claimer(i % 2 === 0 ? store : other.repository.webhooks)));
      const ids = claims.flat().map((d) => d.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toHaveLength(30);
      expect(claims.flat().every((d) => d.attempts === 1 && d.url.endsWith('/secret-path'))).toBe(true);
      // Claimed: nobody else gets them until the claim runs out.
      expect(await store.claimDue(later(2), later(60_000), 100)).toEqual([]);
      expect(await store.nextDue(later(2))).toBeUndefined();
      expect(await store.claimDue(later(60_001), later(120_000), 100)).toHaveLength(30);
    } finally {
      await other.drop();
    }
  });

  it('records an attempt only while the claim is still its own, and schedules or finishes the delivery', async () => {
    await store.createWebhook(hook(), 20);
    const [made] = await enqueue('alice', 'run_ended');
    const [claimed] = await store.claimDue(T0, later(60_000), 1);
    expect(await store.recordAttempt(claimed!, { at: later(10), delivered: false, statusCode: 500, error: null, retryAt: later(30_000) })).toBe(true);
    expect(await store.nextDue(later(20))).toEqual(later(30_000));
    expect(await store.claimDue(later(20), later(60_000), 1)).toEqual([]);
    const [again] = await store.claimDue(later(30_000), later(90_000), 1);
    expect(again!.attempts).toBe(2);
    // The first claim is no longer the holder's: its late outcome changes nothing.
    expect(await store.recordAttempt(claimed!, { at: later(30_001), delivered: true, statusCode: 200, error: null, retryAt: null })).toBe(false);
    expect(await store.recordAttempt(again!, { at: later(30_002), delivered: true, statusCode: 200, error: null, retryAt: null })).toBe(true);
    const [shown] = await store.listDeliveries(made!.webhookId, 10);
    expect(shown).toMatchObject({ status: 'delivered', attempts: 2, lastStatusCode: 200, deliveredAt: later(30_002), claimedUntil: null });
    expect(await store.deleteFinishedBefore(later(1))).toBe(1);
  });
});
