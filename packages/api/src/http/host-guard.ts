import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BadRequestError, ForbiddenError } from '../errors.js';
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

/** Every Host header line as sent: Node keeps only the first in `headers`, a proxy may read the last. */
function hostLines(request: FastifyRequest): string[] {
  const raw = request.raw.rawHeaders;
  const lines: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toLowerCase() === 'host') lines.push(raw[i + 1]!);
  return lines;
}

/**
 * The authority a request is aimed at: an absolute-form target's (`GET http://name/path`), which
 * RFC 9112 says overrides Host, else the Host header.
 */
function namedHost(request: FastifyRequest): string | undefined {
  const absolute = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(request.raw.url ?? '');
  return absolute ? absolute[1] : headerOf(request, 'host');
}

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
  return isOwnOrigin(origin, host);
}

/**
 * Whether `origin` is the service's own, reached as `host` (`name[:port]`), over either scheme:
 * behind a TLS-terminating proxy the service itself sees plain HTTP.
 */
export function isOwnOrigin(origin: string, host: string | undefined): boolean {
  const own = host?.trim().toLowerCase();
  const normalized = origin.replace(/\/+$/, '').toLowerCase();
  return own !== undefined && own !== '' && (normalized === `http://${own}` || normalized === `https://${own}`);
}

/**
 * Refuses requests aimed at the service under a name it does not answer to: in local mode a web
 * page that rebinds its domain to 127.0.0.1 (DNS rebinding) or posts from another site would
 * otherwise drive the agents with the owner's rights.
 */
export function guardHostAndOrigin(app: FastifyInstance, options: HostGuardOptions): void {
  app.addHook('onRequest', async (request) => {
    // A request that names no host, or two, is one an intermediary and this service may read differently.
    const lines = hostLines(request);
    if (lines.length > 1) throw new BadRequestError('Multiple Host headers');
    if (lines.length === 0 && request.raw.httpVersion !== '1.0') throw new BadRequestError('Missing Host header');
    const host = namedHost(request);
    if (!hostAllowed(host, options)) throw new ForbiddenError('Host not allowed');
    const origin = headerOf(request, 'origin');
    if (options.localMode && origin !== undefined && !originAllowed(origin, host, options.corsOrigins)) {
      throw new ForbiddenError('Origin not allowed');
    }
  });
}
