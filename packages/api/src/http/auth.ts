import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { UnauthorizedError } from '../errors.js';
import type { ApiKey } from '../settings.js';
import type { UserRole } from '../db/user-repository.js';
import { LOCAL_USER, type UserDirectory } from '../users/user-directory.js';
import { limitedAddress } from './client-address.js';
import type { CredentialFailures } from './credential-failures.js';

export interface Caller {
  userId: string;
  role: UserRole;
  /** What rate limits count against: a key's index, or the client address in local mode. */
  limitKey: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller;
    /**
     * Whether the credential this request came with is still valid, for the same user: asked
     * again by a response that outlives the moment it was checked (an event stream).
     */
    stillAuthorized: () => Promise<boolean>;
  }
}

export const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/**
 * Resolves `X-API-Key` to a user. Every configured key is compared, in constant time, on
 * fixed-length digests, so neither the match position nor the key length leaks through timing.
 * Any other key is looked up by its SHA-256 digest among the stored keys (users/key-cache.ts):
 * one indexed lookup, whatever the number of keys.
 */
export class Authenticator {
  private readonly keys: { userId: string; digest: Buffer }[];

  constructor(
    keys: ApiKey[],
    private readonly users: UserDirectory,
  ) {
    this.keys = keys.map((k) => ({ userId: k.userId, digest: digest(k.key) }));
  }

  get localMode(): boolean {
    return !this.users.keyed;
  }

  async identify(presented: string | undefined, address: string): Promise<Caller> {
    if (this.localMode) {
      if (presented !== undefined) throw new UnauthorizedError('Invalid API key');
      return { userId: LOCAL_USER, role: 'admin', limitKey: `addr:${address}` };
    }
    if (presented === undefined || presented === '') throw new UnauthorizedError('Missing API key');
    const caller = await this.identifyDigest(digest(presented));
    if (!caller) throw new UnauthorizedError('Invalid API key');
    return caller;
  }

  /**
   * The caller whose key has this SHA-256 digest, if the key may be used now: how a console
   * session, which keeps only the digest, is checked again on every request.
   */
  async identifyDigest(candidate: Buffer): Promise<Caller | undefined> {
    let found = -1;
    this.keys.forEach((key, index) => {
      if (timingSafeEqual(key.digest, candidate)) found = index;
    });
    const match = this.keys[found];
    if (match) return { userId: match.userId, role: this.users.configuredRole(match.userId), limitKey: `key:${found}` };
    // Revoked, expired, a disabled user's or unknown: one answer, so none of them is told apart.
    const owner = await this.users.authenticateDigest(candidate.toString('hex'));
    if (!owner) return undefined;
    return { userId: owner.userId, role: owner.role, limitKey: `stored:${owner.keyId}` };
  }
}

function headerValue(request: FastifyRequest): string | undefined {
  const value = request.headers['x-api-key'];
  return Array.isArray(value) ? value[0] : value;
}

/** Declares `request.caller` once on the root instance (Fastify wants request shapes fixed up front). */
export function declareCaller(app: FastifyInstance): void {
  app.decorateRequest('caller', null as unknown as Caller);
  app.decorateRequest('stillAuthorized', null as unknown as () => Promise<boolean>);
}

/**
 * For a request that carries a console session (and no X-API-Key), the lookup of its caller;
 * undefined when it carries none. `reply`, when given, has a refused cookie cleared.
 */
export type SessionCaller = (request: FastifyRequest, reply?: FastifyReply) => (() => Promise<Caller>) | undefined;

/**
 * Requires a caller on every route registered in `scope` (and its children); failed attempts
 * count toward the client's limit. X-API-Key wins over a session cookie sent beside it.
 */
export function requireCaller(scope: FastifyInstance, auth: Authenticator, failures: CredentialFailures, session?: SessionCaller): void {
  scope.addHook('onRequest', async (request, reply) => {
    const key = headerValue(request);
    const bySession = key === undefined ? session?.(request, reply) : undefined;
    const byKey = (): Promise<Caller> => auth.identify(key, limitedAddress(request.ip));
    // A made-up cookie is a failed credential like a made-up key: each one is a database read.
    const caller = await failures.guardAsync(request, bySession ?? byKey);
    request.caller = caller;
    // Asked again without counting failures: a key revoked under an open stream is no attack of the client's.
    const again = bySession === undefined ? byKey : session!(request)!;
    request.stillAuthorized = () => again().then((current) => current.userId === caller.userId, () => false);
  });
}
