import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { UnauthorizedError } from '../errors.js';
import type { ApiKey } from '../settings.js';
import { limitedAddress } from './client-address.js';
import type { CredentialFailures } from './credential-failures.js';

export const LOCAL_USER = 'local';

export interface Caller {
  userId: string;
  /** What rate limits count against: a key's index, or the client address in local mode. */
  limitKey: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller;
  }
}

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/**
 * Resolves `X-API-Key` to a user. Every configured key is compared, in constant time, on
 * fixed-length digests, so neither the match position nor the key length leaks through timing.
 */
export class Authenticator {
  private readonly keys: { userId: string; digest: Buffer }[];

  constructor(keys: ApiKey[]) {
    this.keys = keys.map((k) => ({ userId: k.userId, digest: digest(k.key) }));
  }

  get localMode(): boolean {
    return this.keys.length === 0;
  }

  identify(presented: string | undefined, address: string): Caller {
    if (this.localMode) {
      if (presented !== undefined) throw new UnauthorizedError('Invalid API key');
      return { userId: LOCAL_USER, limitKey: `addr:${address}` };
    }
    if (presented === undefined || presented === '') throw new UnauthorizedError('Missing API key');
    const candidate = digest(presented);
    let found = -1;
    this.keys.forEach((key, index) => {
      if (timingSafeEqual(key.digest, candidate)) found = index;
    });
    const match = this.keys[found];
    if (!match) throw new UnauthorizedError('Invalid API key');
    return { userId: match.userId, limitKey: `key:${found}` };
  }
}

function headerValue(request: FastifyRequest): string | undefined {
  const value = request.headers['x-api-key'];
  return Array.isArray(value) ? value[0] : value;
}

/** Declares `request.caller` once on the root instance (Fastify wants request shapes fixed up front). */
export function declareCaller(app: FastifyInstance): void {
  app.decorateRequest('caller', null as unknown as Caller);
}

/**
 * Requires a caller on every route registered in `scope` (and its children); failed attempts
 * count toward the client's limit.
 */
export function requireCaller(scope: FastifyInstance, auth: Authenticator, failures: CredentialFailures): void {
  scope.addHook('onRequest', async (request) => {
    request.caller = failures.guard(request, () => auth.identify(headerValue(request), limitedAddress(request.ip)));
  });
}
