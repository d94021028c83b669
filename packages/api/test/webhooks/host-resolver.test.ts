import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { HostResolver, type Lookup } from '../../src/webhooks/host-resolver.js';
import { checkWebhookUrl } from '../../src/webhooks/webhook-url.js';

/** A system resolver whose DNS servers never answer for names under `.hang`, and counts what it is asked. */
function hangingLookup() {
  const asked: string[] = [];
  const pending: (() => void)[] = [];
  const lookup: Lookup = (hostname, _options, callback) => {
    asked.push(hostname);
    const answer = (): void => callback(null, [{ address: '93.184.216.34', family: 4 } satisfies LookupAddress]);
    if (hostname.endsWith('.hang')) pending.push(() => callback(new Error('ETIMEOUT'), []));
    else setImmediate(answer);
  };
  return { lookup, asked, release: () => pending.splice(0).forEach((fail) => fail()) };
}

describe('name lookups of webhook hosts', () => {
  it('never hold more than their share of the thread pool, however many names hang', async () => {
    const system = hangingLookup();
    const resolver = new HostResolver({ lookup: system.lookup, maxInFlight: 2, waitMs: 50 });
    const hung = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => resolver.resolve(`n${i}.hang`)));
    expect(hung.every((outcome) => outcome.status === 'rejected')).toBe(true);
    // Two threads were ever asked; the eight others gave up waiting for a turn.
    expect(system.asked).toEqual(['n0.hang', 'n1.hang']);
    // Once the resolver answers them, the pool is free again for the next name.
    system.release();
    await expect(resolver.resolve('receiver.example')).resolves.toEqual([{ address: '93.184.216.34', family: 4 }]);
  });

  it('keep a waiting caller its turn when a lookup ends', async () => {
    const system = hangingLookup();
    const resolver = new HostResolver({ lookup: system.lookup, maxInFlight: 1, waitMs: 5_000 });
    const first = resolver.resolve('first.hang');
    const second = resolver.resolve('second.example');
    expect(system.asked).toEqual(['first.hang']);
    system.release();
    await expect(first).rejects.toThrow('ETIMEOUT');
    await expect(second).resolves.toHaveLength(1);
    expect(system.asked).toEqual(['first.hang', 'second.example']);
  });

  it('turn a host whose DNS never answers into a 422 for the webhook, not a hanging request', async () => {
    const resolver = new HostResolver({ lookup: hangingLookup().lookup, waitMs: 50 });
    await expect(checkWebhookUrl('https://receiver.hang/in', false, resolver)).rejects.toThrow('Webhook URL host does not resolve: receiver.hang');
  });
});

describe('a lookup that throws instead of calling back', () => {
  it('gives its turn back', async () => {
    let asked = 0;
    const resolver = new HostResolver({
      lookup: (hostname, _options, callback) => {
        asked += 1;
        if (hostname === 'bad') throw new TypeError('invalid hostname');
        callback(null, [{ address: '93.184.216.34', family: 4 }]);
      },
      maxInFlight: 1,
      waitMs: 5_000,
    });
    await expect(resolver.resolve('bad')).rejects.toThrow('invalid hostname');
    await expect(resolver.resolve('good.example')).resolves.toHaveLength(1);
    expect(asked).toBe(2);
  });
});
