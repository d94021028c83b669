import { describe, expect, it } from 'vitest';
import { AuthFailureLimiter, MAX_AUTH_FAILURES_PER_MINUTE } from '../../src/http/auth-failures.js';
import { TooManyRequestsError } from '../../src/errors.js';
import { canActAsAnotherAccount, nextLine, pythonAsAnotherAccount } from '../support/another-account.js';
import { createTestApp } from '../support/app.js';

describe('the failed-authentication limit', () => {
  it('refuses an address after its 30th failure until its minute is over, and no other address', () => {
    let now = 1_000_000;
    const limiter = new AuthFailureLimiter(30, () => now);
    for (let i = 0; i < 30; i++) {
      limiter.check('10.0.0.1');
      limiter.recordFailure('10.0.0.1');
      now += 1000;
    }
    expect(() => limiter.check('10.0.0.1')).toThrow(TooManyRequestsError);
    try {
      limiter.check('10.0.0.1');
    } catch (error) {
      expect((error as TooManyRequestsError).retryAfterSeconds).toBe(30);
    }
    expect(() => limiter.check('10.0.0.2')).not.toThrow();
    now += 30_000;
    expect(() => limiter.check('10.0.0.1')).not.toThrow();
  });

  it('still refuses the 30th failure after a flood of failures from as many addresses as a local user has', () => {
    // Each failure used to scan every address that failed within the minute: this loop held the
    // process for minutes, past the test's timeout; now every failure costs the same.
    let now = 1_000_000;
    const limiter = new AuthFailureLimiter(30, () => now);
    for (let i = 0; i < 50_000; i++) {
      const address = `127.${i >> 16}.${(i >> 8) & 255}.${i & 255}`;
      limiter.check(address);
      limiter.recordFailure(address);
      if (i % 1000 === 0) now += 100;
    }
    for (let i = 0; i < 30; i++) limiter.recordFailure('127.255.255.254');
    expect(() => limiter.check('127.255.255.254')).toThrow(TooManyRequestsError);
    expect(() => limiter.check('127.255.255.253')).not.toThrow();
    now += 60_000;
    for (let i = 0; i < 29; i++) limiter.recordFailure('127.0.0.0');
    expect(() => limiter.check('127.0.0.0')).not.toThrow();
    expect(() => limiter.check('127.255.255.254')).not.toThrow();
  });
});

describe('failed keys from loopback', () => {
  /** Sends `count` requests with a wrong key as another local account (nobody), and gives their statuses. */
  async function failAsAnotherAccount(base: string, count: number): Promise<number[]> {
    const script = [
      'import json, sys, urllib.request, urllib.error',
      'out = []',
      `for i in range(${count}):`,
      `    request = urllib.request.Request(${JSON.stringify(`${base}/runs`)}, headers={"X-API-Key": "guess-%d" % i})`,
      '    try:',
      '        out.append(urllib.request.urlopen(request).status)',
      '    except urllib.error.HTTPError as error:',
      '        out.append(error.code)',
      'print(json.dumps(out))',
    ].join('\n');
    return JSON.parse(await nextLine(pythonAsAnotherAccount(script))) as number[];
  }

  it.runIf(canActAsAnotherAccount)("lock out the account that sent them, not the machine's other accounts (needs root to act as another account)", async () => {
    const t = await createTestApp({ env: { API_KEYS: 'ann:ann-key-0123456789' } });
    try {
      const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
      const statuses = await failAsAnotherAccount(base, MAX_AUTH_FAILURES_PER_MINUTE + 2);
      expect(statuses.slice(0, MAX_AUTH_FAILURES_PER_MINUTE)).toEqual(Array(MAX_AUTH_FAILURES_PER_MINUTE).fill(401));
      expect(statuses.slice(MAX_AUTH_FAILURES_PER_MINUTE)).toEqual([429, 429]);
      // Ann, on the same machine and the same loopback address, still gets in.
      expect((await fetch(`${base}/runs`, { headers: { 'x-api-key': 'ann-key-0123456789' } })).status).toBe(200);
      // And her own failures count for her alone: the other account stays locked out meanwhile.
      expect((await fetch(`${base}/runs`, { headers: { 'x-api-key': 'ann-typo' } })).status).toBe(401);
      expect(await failAsAnotherAccount(base, 1)).toEqual([429]);
    } finally {
      await t.close();
    }
  });
});
