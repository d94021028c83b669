import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ForbiddenError } from '../errors.js';
import { isLoopback } from '../exposure.js';

export interface HostGuardOptions {
  /** Local mode: only loopback Host names, and only the service's own or CORS_ORIGINS origins. */
  localMode: boolean;
  /** Keyed mode: the Host names accepted (empty: any). */
  allowedHosts: readonly string[];
  corsOrigins: readonly string[];
}

/** The host name of a Host header without its port, or null when the header is not `name[:port]`. */
export function hostnameOf(host: string): string | null {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s/@]+)(?::(\d{1,5}))?$/.exec(host.trim());
  return match?.[1] ? match[1].toLowerCase() : null;
}

const headerOf = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

function hostAllowed(host: string | undefined, options: HostGuardOptions): boolean {
  if (options.localMode) {
    const name = host === undefined ? null : hostnameOf(host);
    return name !== null && isLoopback(name);
  }
  if (options.allowedHosts.length === 0) return true;
  const name = host === undefined ? null : hostnameOf(host);
  if (name === null || host === undefined) return false;
  const wanted = options.allowedHosts.map((entry) => entry.toLowerCase());
  return wanted.includes(name) || wanted.includes(host.trim().toLowerCase());
}

function originAllowed(origin: string, host: string | undefined, corsOrigins: readonly string[]): boolean {
  if (corsOrigins.includes('*')) return true;
  const normalized = origin.replace(/\/+$/, '').toLowerCase();
  if (corsOrigins.some((allowed) => allowed.replace(/\/+$/, '').toLowerCase() === normalized)) return true;
  // The service's own pages (the /docs "Try it out" button) send the origin they were loaded from.
  const own = host?.trim().toLowerCase();
  return own !== undefined && (normalized === `http://${own}` || normalized === `https://${own}`);
}

/**
 * Refuses requests aimed at the service under a name it does not answer to: in local mode a web
 * page that rebinds its domain to 127.0.0.1 (DNS rebinding) or posts from another site would
 * otherwise drive the agents with the owner's rights.
 */
export function guardHostAndOrigin(app: FastifyInstance, options: HostGuardOptions): void {
  app.addHook('onRequest', async (request) => {
    const host = headerOf(request, 'host');
    if (!hostAllowed(host, options)) throw new ForbiddenError('Host not allowed');
    const origin = headerOf(request, 'origin');
    if (options.localMode && origin !== undefined && !originAllowed(origin, host, options.corsOrigins)) {
      throw new ForbiddenError('Origin not allowed');
    }
  });
}
