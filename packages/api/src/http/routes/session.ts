import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ErrorResponse, SessionRequest, ValidationErrorResponse } from '@mada/protocol';
import { z } from 'zod';
import { LocalModeError } from '../../users/errors.js';
import type { ConsoleSessions } from '../../users/console-sessions.js';
import { digest, type Authenticator } from '../auth.js';
import { limitedAddress } from '../client-address.js';
import type { CredentialFailures } from '../credential-failures.js';
import { forbidStoring } from '../no-store.js';
import { clearSessionCookie, refuseForeignOrigin, requireOwnOrigin, sessionIdOf, setSessionCookie } from '../console-session.js';

export interface SessionRoutesOptions {
  auth: Authenticator;
  sessions: ConsoleSessions;
  failures: CredentialFailures;
}

const tags = ['session'];

/** Sign-in and sign-out of the browser console: the key goes in once, a session cookie comes back. */
export const sessionRoutes: FastifyPluginAsyncZod<SessionRoutesOptions> = async (app, { auth, sessions, failures }) => {
  forbidStoring(app);
  app.post(
    '/session',
    {
      schema: {
        tags,
        summary: 'Sign in: trade an API key for a session cookie',
        description: [
          'Sets `mada_session` (HttpOnly, SameSite=Strict, Secure when reached over HTTPS), which every route then accepts as it accepts `X-API-Key`, until CONSOLE_SESSION_HOURS pass, `DELETE /session`, or the key stops being valid.',
          'A failed key counts toward the failed-credential limit (429 past it). 403 `Origin not allowed` for another site\'s Origin; 409 `Local mode has no keys` in local mode.',
        ].join(' '),
        body: SessionRequest,
        response: { 204: z.undefined().describe('Signed in'), 401: ErrorResponse, 403: ErrorResponse, 409: ErrorResponse, 422: ValidationErrorResponse, 429: ErrorResponse },
      },
    },
    async (request, reply) => {
      refuseForeignOrigin(request);
      if (auth.localMode) throw new LocalModeError();
      const { key } = request.body;
      await failures.guardAsync(request, () => auth.identify(key, limitedAddress(request.ip)));
      const previous = sessionIdOf(request);
      if (previous !== undefined) await sessions.end(previous);
      const session = await sessions.start(digest(key));
      setSessionCookie(request, reply, session.id, session.expiresAt);
      return reply.code(204).send();
    },
  );

  app.delete(
    '/session',
    {
      schema: {
        tags,
        summary: 'Sign out: end the session of the cookie sent',
        description: 'Always 204, with the cookie cleared; a request carrying a cookie needs the service\'s own Origin (403 `Origin not allowed`).',
        response: { 204: z.undefined().describe('Signed out'), 403: ErrorResponse },
      },
    },
    async (request, reply) => {
      const id = sessionIdOf(request);
      if (id !== undefined) {
        requireOwnOrigin(request);
        await sessions.end(id);
      }
      clearSessionCookie(reply);
      return reply.code(204).send();
    },
  );
};
