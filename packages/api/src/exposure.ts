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
 */
export function assertSafeExposure(settings: Pick<Settings, 'host' | 'apiKeys' | 'corsOrigins'>, keyed = settings.apiKeys.length > 0): void {
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
