import { PERMISSION_MODES, type PermissionMode } from '@mada/protocol';

/** A value that does not fit its key; the caller says where it came from. */
export class ConfigValueError extends Error {}

export interface Settings {
  apiUrl: string;
  apiKey: string | undefined;
  connectTimeoutSeconds: number;
  streamTimeoutSeconds: number;
  mode: PermissionMode;
  stream: boolean;
  historyFile: string;
}

export interface KeySpec<T> {
  /** Dotted name: `[section]` and key in config.toml. */
  key: string;
  default: T;
  /** Environment variable that overrides the file. */
  env?: string;
  /** Shown by `mada config --init` above the key. */
  help: string;
  /** Hidden when settings are shown. */
  secret?: boolean;
  /** Turns a TOML value (or an environment string) into the setting; throws ConfigValueError. */
  parse(raw: unknown): T;
}

const show = (raw: unknown): string => JSON.stringify(raw) ?? String(raw);

function text(raw: unknown): string {
  if (typeof raw !== 'string') throw new ConfigValueError(`must be a string (got ${show(raw)})`);
  return raw;
}

function httpUrl(raw: unknown): string {
  const value = text(raw).trim();
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigValueError(`must be an http:// or https:// URL (got ${show(raw)})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigValueError(`must be an http:// or https:// URL (got ${show(raw)})`);
  }
  return value.replace(/\/+$/, '');
}

function seconds(raw: unknown): number {
  const value = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new ConfigValueError(`must be a positive number of seconds (got ${show(raw)})`);
  }
  return value;
}

function mode(raw: unknown): PermissionMode {
  const found = PERMISSION_MODES.find((m) => m === raw);
  if (!found) throw new ConfigValueError(`must be one of ${PERMISSION_MODES.join(', ')} (got ${show(raw)})`);
  return found;
}

function boolean(raw: unknown): boolean {
  if (typeof raw !== 'boolean') throw new ConfigValueError(`must be true or false (got ${show(raw)})`);
  return raw;
}

export const SETTING_KEYS: { [K in keyof Settings]: KeySpec<Settings[K]> } = {
  apiUrl: {
    key: 'api.url',
    default: 'http://127.0.0.1:8095',
    env: 'MADA_API_URL',
    help: 'Where the mada service listens.',
    parse: httpUrl,
  },
  apiKey: {
    key: 'api.key',
    default: undefined,
    env: 'MADA_API_KEY',
    help: 'Sent as X-API-Key. Leave unset for a service in local mode (no API_KEYS).',
    secret: true,
    parse: text,
  },
  connectTimeoutSeconds: {
    key: 'api.connect_timeout',
    default: 10,
    help: 'Seconds to wait for the service to answer a request or open a stream.',
    parse: seconds,
  },
  streamTimeoutSeconds: {
    key: 'api.stream_timeout',
    default: 300,
    help: 'Seconds a run may stay silent (a stream, or a reply without streaming) before the client gives up.',
    parse: seconds,
  },
  mode: {
    key: 'cli.mode',
    default: 'default',
    env: 'MADA_MODE',
    help: 'Permission mode of new chats: default, plan (read-only) or auto_accept.',
    parse: mode,
  },
  stream: {
    key: 'cli.stream',
    default: true,
    help: 'Stream progress (tools, answer) as it happens.',
    parse: boolean,
  },
  historyFile: {
    key: 'history.file',
    default: '~/.mada_history',
    help: 'Chat input history.',
    parse: text,
  },
};

export const SETTING_NAMES = Object.keys(SETTING_KEYS) as (keyof Settings)[];
