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
});
