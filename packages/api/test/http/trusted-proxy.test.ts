import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { MAX_AUTH_FAILURES_PER_MINUTE } from '../../src/http/auth-failures.js';
import { createTestApp, type TestApp } from '../support/app.js';

const PROXY = '10.1.2.3';
const KEY = 'alice-key-0123456789';
const keyed = { API_KEYS: `alice:${KEY}`, RATE_LIMIT_PER_MINUTE: '0' };

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** GET /runs with `key` from the peer `from`, claiming `forwardedFor`; its status. */
async function ask(from: string, key: string, forwardedFor?: string): Promise<number> {
  const headers = { 'x-api-key': key, ...(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }) };
  return (await t!.app.inject({ url: '/runs', remoteAddress: from, headers })).statusCode;
}

async function failThirtyTimes(from: string, forwardedFor: (i: number) => string): Promise<void> {
  for (let i = 0; i < MAX_AUTH_FAILURES_PER_MINUTE; i++) expect(await ask(from, `guess-${i}`, forwardedFor(i))).toBe(401);
}

describe('TRUST_PROXY', () => {
  it('counts failed keys by the client a trusted proxy forwards for, not by the proxy', async () => {
    t = await createTestApp({ env: { ...keyed, TRUST_PROXY: `${PROXY}, 192.168.0.0/16` } });
    await failThirtyTimes(PROXY, () => '203.0.113.5');
    expect(await ask(PROXY, KEY, '203.0.113.5')).toBe(429);
    // Another client behind the same proxy still gets in.
    expect(await ask(PROXY, KEY, '203.0.113.6')).toBe(200);
    // Prepending addresses does not get the locked-out client in again: the right-most untrusted one counts.
    expect(await ask(PROXY, KEY, '198.51.100.1, 203.0.113.5')).toBe(429);
    // Through a chain of trusted proxies, the client is the first address none of them is.
    expect(await ask(PROXY, KEY, '203.0.113.5, 192.168.7.7')).toBe(429);
    expect(await ask(PROXY, KEY, '203.0.113.6, 192.168.7.7')).toBe(200);
  });

  it("ignores X-Forwarded-For from a peer that is not a trusted proxy", async () => {
    t = await createTestApp({ env: { ...keyed, TRUST_PROXY: PROXY } });
    await failThirtyTimes('198.51.100.7', (i) => `203.0.113.${i}`);
    expect(await ask('198.51.100.7', KEY, '203.0.113.200')).toBe(429);
    // Claiming to be the proxy does not help either.
    expect(await ask('198.51.100.7', KEY, PROXY)).toBe(429);
    expect(await ask(PROXY, KEY, '203.0.113.200')).toBe(200);
  });

  it('believes no X-Forwarded-For when unset', async () => {
    t = await createTestApp({ env: keyed });
    await failThirtyTimes(PROXY, (i) => `203.0.113.${i}`);
    expect(await ask(PROXY, KEY, '203.0.113.200')).toBe(429);
  });

  it('counts requests per forwarded client in local mode, where the rate limit is per address', async () => {
    t = await createTestApp({ env: { TRUST_PROXY: PROXY, RATE_LIMIT_PER_MINUTE: '2' } });
    const get = async (client: string) => (await t!.app.inject({ url: '/runs', remoteAddress: PROXY, headers: { 'x-forwarded-for': client } })).statusCode;
    expect([await get('203.0.113.5'), await get('203.0.113.5'), await get('203.0.113.5')]).toEqual([200, 200, 429]);
    expect(await get('203.0.113.6')).toBe(200);
  });

  it('logs the forwarded client as the remote address', async () => {
    const lines: { req?: { remoteAddress?: string } }[] = [];
    const logger = pino({ level: 'info' }, { write: (text: string) => void lines.push(JSON.parse(text) as { req?: { remoteAddress?: string } }) });
    t = await createTestApp({ env: { TRUST_PROXY: PROXY } });
    const app = await buildApp({ ...t, logger });
    try {
      await app.inject({ url: '/', remoteAddress: PROXY, headers: { 'x-forwarded-for': '203.0.113.9' } });
      await app.inject({ url: '/', remoteAddress: '198.51.100.7', headers: { 'x-forwarded-for': '203.0.113.9' } });
      expect(lines.filter((line) => line.req !== undefined).map((line) => line.req!.remoteAddress)).toEqual(['203.0.113.9', '198.51.100.7']);
    } finally {
      await app.close();
    }
  });

  it('refuses an entry that is neither an address nor a CIDR range', async () => {
    await expect(createTestApp({ env: { TRUST_PROXY: '10.0.0.1, proxy.internal' } })).rejects.toThrow(
      'Invalid setting TRUST_PROXY: expected IP addresses or CIDR ranges, got "proxy.internal"',
    );
  });
});
