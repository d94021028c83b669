import { ApiClient } from '../api/client.js';
import type { Settings } from '../config/keys.js';
import type { FlagValues } from '../config/resolve.js';

/** Options every command that talks to the service takes. */
export interface ServiceFlags {
  api?: string;
}

export function apiFlag(flags: ServiceFlags): FlagValues {
  return flags.api === undefined ? {} : { apiUrl: { raw: flags.api, flag: '--api' } };
}

export function clientFor(settings: Settings): ApiClient {
  return new ApiClient({
    baseUrl: settings.apiUrl,
    apiKey: settings.apiKey,
    connectTimeoutMs: settings.connectTimeoutSeconds * 1000,
    streamTimeoutMs: settings.streamTimeoutSeconds * 1000,
  });
}
