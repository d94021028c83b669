import type { FastifyReply, FastifyRequest } from 'fastify';
import { ForbiddenError, UnauthorizedError } from '../errors.js';
import type { ConsoleSessions } from '../users/console-sessions.js';
import type { Authenticator, Caller, SessionCaller } from './auth.js';
import { isOwnOrigin } from './host-guard.js';

/** The cookie that carries a console session's id (and nothing else). */
export const SESSION_COOKIE = 'mada_session';

/** Methods a cross-site page could use to change something: they need the service's own Origin. */
const READ_ONLY = new Set(['GET', 'HEAD', 'OPTIONS']);

const originOf = (request: FastifyRequest): string | undefined => {
  const value = request.headers.origin;
  return Array.isArray(value) ? value[0] : value;
};

export const sessionIdOf = (request: FastifyRequest): string | undefined => {
  const id = request.cookies[SESSION_COOKIE];
  return id === undefined || id === '' ? undefined : id;
};

/**
 * A cookie rides along with any request the browser sends, whoever's page made it. SameSite=Strict
 * already keeps it off other sites' requests; this refuses, besides, any change made with it whose
 * Origin is missing or not the service's own (an old browser, a sibling subdomain).
 */
export function requireOwnOrigin(request: FastifyRequest): void {
  const origin = originOf(request);
  if (origin === undefined || !isOwnOrigin(origin, request.host)) throw new ForbiddenError('Origin not allowed');
}

/** A foreign Origin is refused; none at all (curl, scripts) is allowed where no cookie is used. */
export function refuseForeignOrigin(request: FastifyRequest): void {
  const origin = originOf(request);
  if (origin !== undefined && !isOwnOrigin(origin, request.host)) throw new ForbiddenError('Origin not allowed');
}

/**
 * The caller of a request that carries a session cookie: the session must be live and the key it
 * was started with still valid (a revoked key, an expired one or a disabled user ends it at once).
 * Returned as a lookup for requireCaller to run under the failed-credential limit: every cookie
 * costs a database read, so made-up ones must not come at the speed of the network. A refused
 * cookie is cleared in the answer (when `reply` is given), so a browser whose session ended sends
 * it once rather than until it shows the sign-in, and is not locked out by its own old cookie.
 */
export function sessionCaller(auth: Authenticator, sessions: ConsoleSessions): SessionCaller {
  return (request, reply) => {
    if (auth.localMode) return undefined;
    const id = sessionIdOf(request);
    if (id === undefined) return undefined;
    const lookup = async (): Promise<Caller> => {
      const session = await sessions.find(id);
      if (session === undefined) throw new UnauthorizedError('Session expired');
      if (!READ_ONLY.has(request.method)) requireOwnOrigin(request);
      const caller = await auth.identifyDigest(session.keyDigest);
      if (caller === undefined) {
        await sessions.end(id);
        throw new UnauthorizedError('Invalid API key');
      }
      return caller;
    };
    return async () => {
      try {
        return await lookup();
      } catch (error) {
        if (error instanceof UnauthorizedError && reply !== undefined && !reply.sent) clearSessionCookie(reply);
        throw error;
      }
    };
  };
}

/**
 * Secure whenever the browser reached the service over HTTPS: the connection itself, a trusted
 * proxy's X-Forwarded-Proto (TRUST_PROXY; Fastify reads it only from such a peer), or the
 * console page's own Origin, which a proxy the service does not trust still passes through.
 */
export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, id: string, expiresAt: Date): void {
  const secure = request.protocol === 'https' || (originOf(request)?.toLowerCase().startsWith('https://') ?? false);
  reply.setCookie(SESSION_COOKIE, id, { path: '/', httpOnly: true, sameSite: 'strict', secure, expires: expiresAt });
}

export function clearSessionCookie(reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'strict' });
}
