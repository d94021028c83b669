import { describe, expect, it } from 'vitest';
import { AuthFailureLimiter } from '../../src/http/auth-failures.js';
import { TooManyRequestsError } from '../../src/errors.js';

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
