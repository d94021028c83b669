import { describe, expect, it } from 'vitest';
import { RunQueue, type RunSlot } from '../../src/runs/run-queue.js';

const settled = async <T>(promise: Promise<T>): Promise<'pending' | 'admitted' | 'rejected'> => {
  let state: 'pending' | 'admitted' | 'rejected' = 'pending';
  promise.then(
    () => (state = 'admitted'),
    () => (state = 'rejected'),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return state;
};

describe('the run queue', () => {
  it('starts runs at once while under both limits', async () => {
    const queue = new RunQueue({ maxConcurrent: 2, maxPerUser: 2 });
    const a = queue.admit('ann');
    const b = queue.admit('bob');
    expect([a.queued, b.queued]).toEqual([false, false]);
    expect(await settled(a.slot)).toBe('admitted');
    expect(await settled(b.slot)).toBe('admitted');
    expect(queue.active).toBe(2);
  });

  it("queues past the process limit, says how many of the user's own runs wait ahead, and serves first in first out", async () => {
    const queue = new RunQueue({ maxConcurrent: 1, maxPerUser: 5 });
    const first = queue.admit('ann');
    const second = queue.admit('bob');
    const third = queue.admit('cid');
    const fourth = queue.admit('bob');
    // Other users' runs ahead are not told of: how busy the service is with them is theirs.
    expect([second.queued, second.ahead, third.queued, third.ahead, fourth.ahead]).toEqual([true, 0, true, 0, 1]);
    expect(queue.wouldWait('dan')).toBe(true);
    expect(await settled(second.slot)).toBe('pending');
    (await first.slot).release();
    expect(await settled(second.slot)).toBe('admitted');
    expect(await settled(third.slot)).toBe('pending');
    (await second.slot).release();
    expect(await settled(third.slot)).toBe('admitted');
  });

  it("holds a user's extra run without holding up another user's", async () => {
    const queue = new RunQueue({ maxConcurrent: 4, maxPerUser: 1 });
    const ann1 = queue.admit('ann');
    const ann2 = queue.admit('ann');
    const bob = queue.admit('bob');
    expect(await settled(ann1.slot)).toBe('admitted');
    expect(await settled(ann2.slot)).toBe('pending');
    expect(await settled(bob.slot)).toBe('admitted');
    (await ann1.slot).release();
    expect(await settled(ann2.slot)).toBe('admitted');
  });

  it("holds each user to the limit their admission names, 0 being only the process's", async () => {
    const queue = new RunQueue({ maxConcurrent: 5, maxPerUser: 2 });
    // Ann has no limit of her own: three of hers run although the queue's default is two.
    const free = [queue.admit('ann', undefined, 0), queue.admit('ann', undefined, 0), queue.admit('ann', undefined, 0)];
    for (const admission of free) expect(await settled(admission.slot)).toBe('admitted');
    // Bob's own limit is 1, below the default: his second waits.
    const bob1 = queue.admit('bob', undefined, 1);
    const bob2 = queue.admit('bob', undefined, 1);
    expect(await settled(bob1.slot)).toBe('admitted');
    expect(await settled(bob2.slot)).toBe('pending');
    (await free[0]!.slot).release();
    // A place of the process is free, but not one of Bob's.
    expect(await settled(bob2.slot)).toBe('pending');
    (await bob1.slot).release();
    expect(await settled(bob2.slot)).toBe('admitted');
  });

  it('drops a run cancelled while it waits, and lets the next one go', async () => {
    const queue = new RunQueue({ maxConcurrent: 1, maxPerUser: 1 });
    const running = queue.admit('ann');
    const controller = new AbortController();
    const cancelled = queue.admit('bob', controller.signal);
    const next = queue.admit('cid');
    controller.abort(new Error('Run cancelled'));
    expect(await settled(cancelled.slot)).toBe('rejected');
    expect(queue.queued).toBe(1);
    (await running.slot).release();
    expect(await settled(next.slot)).toBe('admitted');
  });

  it('keeps both limits under twenty concurrent submissions', async () => {
    const queue = new RunQueue({ maxConcurrent: 4, maxPerUser: 2 });
    const users = ['ann', 'bob', 'cid', 'dee'];
    let running = 0;
    let peak = 0;
    const perUser = new Map<string, number>();
    let peakPerUser = 0;
    const work = Array.from({ length: 20 }, async (_, i) => {
      const user = users[i % users.length] as string;
      const slot: RunSlot = await queue.admit(user).slot;
      running += 1;
      perUser.set(user, (perUser.get(user) ?? 0) + 1);
      peak = Math.max(peak, running);
      peakPerUser = Math.max(peakPerUser, perUser.get(user) ?? 0);
      await new Promise((resolve) => setTimeout(resolve, 1 + (i % 3)));
      running -= 1;
      perUser.set(user, (perUser.get(user) ?? 1) - 1);
      slot.release();
    });
    await Promise.all(work);
    expect(peak).toBe(4);
    expect(peakPerUser).toBeLessThanOrEqual(2);
    expect(queue.active).toBe(0);
    expect(queue.queued).toBe(0);
  });

  it('releasing a slot twice frees only one place', async () => {
    const queue = new RunQueue({ maxConcurrent: 1, maxPerUser: 1 });
    const slot = await queue.admit('ann').slot;
    slot.release();
    slot.release();
    expect(queue.active).toBe(0);
    await queue.admit('ann').slot;
    expect(queue.active).toBe(1);
  });
});
