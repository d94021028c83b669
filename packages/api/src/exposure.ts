import { isIP } from 'node:net';
import { SettingsError, type Settings } from './settings.js';

export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost' || bare === '::1') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare.startsWith('::ffff:127.');
}

/**
 * Local mode has no authentication at all, so it may only ever be reachable from this machine,
 * and only by the web pages the owner names: `CORS_ORIGINS=*` there would let every site the
 * owner visits run agents (shell included) through their browser. `keyed`: the service asks for
 * keys (API_KEYS, or users stored in the database).
 *
 * With keys, `*` stays open to scripts that send a key of their own, but not together with
 * CORS_ALLOW_CREDENTIALS: `*` is then answered by echoing each caller's origin with credentials
 * allowed, which browsers refuse to do for a literal `*` for this reason. A page on any site the
 * browser counts as the console's own (a sibling subdomain: its SameSite=Strict cookie is sent
 * there) could read a signed-in user's runs, files and keys' names.
 */
export function assertSafeExposure(settings: Pick<Settings, 'host' | 'apiKeys' | 'corsOrigins' | 'corsAllowCredentials'>, keyed = settings.apiKeys.length > 0): void {
  if (settings.corsOrigins.includes('*') && settings.corsAllowCredentials) {
    throw new SettingsError(
      'CORS_ORIGINS',
      'refusing * with CORS_ALLOW_CREDENTIALS=true: every web page could read a signed-in user\'s data through the browser; list the origins',
    );
  }
  if (keyed) return;
  if (!isLoopback(settings.host)) {
    throw new SettingsError(
      'HOST',
      `refusing to listen on ${settings.host} without API_KEYS: set API_KEYS or bind to a loopback address`,
    );
  }
  if (settings.corsOrigins.includes('*')) {
    throw new SettingsError(
      'CORS_ORIGINS',
      'refusing * without API_KEYS: every web page could run agents through the browser; list the origins or set API_KEYS',
    );
  }
}
