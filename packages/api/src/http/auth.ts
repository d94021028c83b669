import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { UnauthorizedError } from '../errors.js';
import type { ApiKey } from '../settings.js';
import type { AuthFailureLimiter } from './auth-failures.js';
import type { Socket } from 'node:net';
import { LOOPBACK_CLIENT, limitedAddress } from './client-address.js';
import { loopbackOwner } from './loopback-owner.js';

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
 * count toward the client address's limit.
 */
export function requireCaller(scope: FastifyInstance, auth: Authenticator, failures: AuthFailureLimiter): void {
  const failureKey = failureKeys(failures);
  scope.addHook('onRequest', async (request) => {
    const address = limitedAddress(request.ip);
    failures.check(failureKey(request.socket, address, false));
    try {
      request.caller = auth.identify(headerValue(request), address);
    } catch (error) {
      if (error instanceof UnauthorizedError) failures.recordFailure(failureKey(request.socket, address, true));
      throw error;
    }
  });
}

/**
 * What failed keys count against: the client's address, and for a loopback client also the local
 * account that owns its socket. Every account on the machine connects from loopback, so counting
 * by address alone let any of them lock all the others out with 30 bad keys a minute. The owner
 * is looked up (in the kernel's socket tables) once per connection, and only while some client
 * has failed; where it cannot be told, loopback clients share one count as before.
 */
function failureKeys(failures: AuthFailureLimiter): (socket: Socket, address: string, failing: boolean) => string {
  const owners = new WeakMap<Socket, string>();
  return (socket, address, failing) => {
    if (address !== LOOPBACK_CLIENT || (!failing && !failures.anyFailures)) return address;
    let key = owners.get(socket);
    if (key === undefined) {
      const uid = loopbackOwner(socket);
      key = uid === undefined ? address : `${address} uid ${uid}`;
      owners.set(socket, key);
    }
    return key;
  };
}
