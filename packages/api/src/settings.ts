import { realpathSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { UserId } from '@mada/protocol';
import { isAddressOrRange } from './util/ip-ranges.js';
import { DEFAULT_APPROVAL_RULES, readApprovalRulesFile, type ApprovalRule } from './tools/sandbox/command-policy/index.js';
import { readMcpConfig, type McpServerConfig } from './mcp/config.js';

/** A setting that failed to parse; its message is the single line start-up prints. */
export class SettingsError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`Invalid setting ${variable}: ${reason}`);
    this.name = 'SettingsError';
  }
}

export type Env = Record<string, string | undefined>;
type Parser<T> = (raw: string, name: string) => T;

const fail = (name: string, reason: string): never => {
  throw new SettingsError(name, reason);
};

const text: Parser<string> = (raw) => raw;

function integer(min: number, max = Number.MAX_SAFE_INTEGER): Parser<number> {
  return (raw, name) => {
    const value = Number(raw.trim());
    if (raw.trim() === '' || !Number.isInteger(value)) fail(name, `expected an integer, got "${raw}"`);
    if (value < min || value > max) fail(name, `expected an integer between ${min} and ${max}, got ${value}`);
    return value;
  };
}

function decimal(min: number, max = Number.MAX_VALUE, exclusiveMin = false): Parser<number> {
  return (raw, name) => {
    const value = Number(raw.trim());
    if (raw.trim() === '' || !Number.isFinite(value)) fail(name, `expected a number, got "${raw}"`);
    if (value < min || (exclusiveMin && value === min) || value > max) {
      fail(name, `expected a number ${exclusiveMin ? 'above' : 'of at least'} ${min}${max < Number.MAX_VALUE ? ` and at most ${max}` : ''}, got ${value}`);
    }
    return value;
  };
}

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);
const boolean: Parser<boolean> = (raw, name) => {
  const value = raw.trim().toLowerCase();
  if (TRUE.has(value)) return true;
  if (FALSE.has(value)) return false;
  return fail(name, `expected true or false, got "${raw}"`);
};

/** A JSON array of strings, or comma-separated values; the empty string is the empty list. */
export const list: Parser<string[]> = (raw, name) => {
  const trimmed = raw.trim();
  if (trimmed === '') return [];
  if (trimmed.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      return fail(name, 'expected a JSON array of strings or comma-separated values');
    }
    if (!Array.isArray(parsed) || !parsed.every((item) => typeof item === 'string')) {
      return fail(name, 'expected a JSON array of strings');
    }
    return parsed.map((item) => item.trim()).filter((item) => item !== '');
  }
  return trimmed
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
};

function oneOf<const T extends string>(values: readonly T[]): Parser<T> {
  return (raw, name) => {
    const value = raw.trim().toLowerCase();
    return (values as readonly string[]).includes(value)
      ? (value as T)
      : fail(name, `expected one of ${values.join(', ')}, got "${raw}"`);
  };
}

const httpUrl: Parser<string> = (raw, name) => {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return fail(name, `expected an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(name, `expected an http(s) URL, got "${raw}"`);
  return raw.trim().replace(/\/+$/, '');
};

export interface ApiKey {
  userId: string;
  key: string;
}

const apiKeys: Parser<ApiKey[]> = (raw, name) => {
  const keys = list(raw, name).map((pair) => {
    const colon = pair.indexOf(':');
    const userId = colon > 0 ? pair.slice(0, colon).trim() : '';
    const key = colon > 0 ? pair.slice(colon + 1).trim() : '';
    // The key itself must never reach a log line, so the message names only the position.
    if (userId === '' || key === '') fail(name, 'expected comma-separated user_id:key pairs');
    if (userId.length > 255) fail(name, `user id longer than 255 characters: "${userId.slice(0, 20)}..."`);
    return { userId, key };
  });
  if (new Set(keys.map((k) => k.key)).size !== keys.length) fail(name, 'the same key is given twice');
  return keys;
};

/** TRUST_PROXY: addresses and CIDR ranges, IPv4 or IPv6. */
const proxies: Parser<string[]> = (raw, name) =>
  list(raw, name).map((entry) => (isAddressOrRange(entry) ? entry : fail(name, `expected IP addresses or CIDR ranges, got "${entry}"`)));

export type DatabaseConfig = { dialect: 'sqlite'; path: string; url: string } | { dialect: 'postgres'; url: string };

/** SQLAlchemy-style URLs too: users of the original service have them in their environment. */
export function parseDatabaseUrl(raw: string, name = 'DATABASE_URL'): DatabaseConfig {
  const value = raw.trim();
  const sqlite = /^sqlite(?:\+aiosqlite)?:\/\/\/(.*)$/.exec(value);
  if (sqlite) {
    const path = sqlite[1] ?? '';
    if (path === '') return fail(name, 'a sqlite URL needs a file path after the third slash');
    return { dialect: 'sqlite', path: path === ':memory:' ? path : resolve(path), url: value };
  }
  const pg = /^(?:postgresql|postgres|postgresql\+asyncpg):\/\/(.*)$/.exec(value);
  if (pg) return { dialect: 'postgres', url: `postgresql://${pg[1] ?? ''}` };
  return fail(name, 'expected sqlite:///<path> or postgresql://... (also sqlite+aiosqlite, postgresql+asyncpg, postgres)');
}

interface Spec<T> {
  env: string;
  parse: Parser<T>;
  default: T;
  /** Lists whose empty value means "use the default" (docs/api.md, "Settings": empty CORS values are unset). */
  emptyIsUnset?: boolean;
}

const spec = <T>(env: string, parse: Parser<T>, fallback: T, emptyIsUnset = false): Spec<T> => ({
  env,
  parse,
  default: fallback,
  emptyIsUnset,
});

const SPECS = {
  host: spec('HOST', text, '127.0.0.1'),
  port: spec('PORT', integer(0, 65535), 8095),
  dataDir: spec('DATA_DIR', text, './data'),
  logLevel: spec('LOG_LEVEL', oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), 'info'),
  // auto: short coloured lines on a terminal, JSON lines otherwise (a file, a pipe, a collector).
  logFormat: spec('LOG_FORMAT', oneOf(['auto', 'json', 'pretty']), 'auto'),
  debug: spec('DEBUG', boolean, false),
  databaseUrl: spec('DATABASE_URL', text, ''),
  allowedPaths: spec('ALLOWED_PATHS', list, [] as string[]),
  workspacesDir: spec('WORKSPACES_DIR', text, '', true),
  sessionTtlHours: spec('SESSION_TTL_HOURS', decimal(0), 24),
  // Unset: a conversation's window is the model's own (EXTENSIONS.md section 5), read at each turn.
  maxContextTokens: spec('MAX_CONTEXT_TOKENS', integer(1), null as number | null),
  summarizationThreshold: spec('SUMMARIZATION_THRESHOLD', decimal(0, 1, true), 0.8),
  summarizationTargetTokens: spec('SUMMARIZATION_TARGET_TOKENS', integer(1), 500),
  keepRecentMessages: spec('KEEP_RECENT_MESSAGES', integer(0), 6),
  retryMaxAttempts: spec('RETRY_MAX_ATTEMPTS', integer(1, 100), 3),
  retryBaseDelay: spec('RETRY_BASE_DELAY', decimal(0), 1.0),
  retryMaxDelay: spec('RETRY_MAX_DELAY', decimal(0), 30.0),
  toolTimeoutSeconds: spec('TOOL_TIMEOUT_SECONDS', decimal(0, 86_400, true), 120),
  sandboxEnabled: spec('SANDBOX_ENABLED', boolean, true),
  sandboxNetwork: spec('SANDBOX_NETWORK', boolean, true),
  sandboxMemoryMb: spec('SANDBOX_MEMORY_MB', integer(16, 1_048_576), 2048),
  sandboxMaxProcesses: spec('SANDBOX_MAX_PROCESSES', integer(8, 1_000_000), 256),
  // The largest file any sandboxed process may write (RLIMIT_FSIZE): past it, SIGXFSZ or EFBIG.
  sandboxMaxFileMb: spec('SANDBOX_MAX_FILE_MB', integer(1, 16_777_216), 1024),
  // The free-space floor `bash` and the file tools keep on the file systems they write and DATA_DIR's:
  // the larger of the MiB and the percentage of the file system's size; inodes likewise. All 0: off.
  sandboxMinFreeMb: spec('SANDBOX_MIN_FREE_MB', integer(0, 1_073_741_824), 1024),
  sandboxMinFreePercent: spec('SANDBOX_MIN_FREE_PERCENT', decimal(0, 50), 1),
  sandboxMinFreeInodes: spec('SANDBOX_MIN_FREE_INODES', integer(0, Number.MAX_SAFE_INTEGER), 10_000),
  sandboxReadPaths: spec('SANDBOX_READ_PATHS', list, [] as string[]),
  searchEngineUrl: spec('SEARCH_ENGINE_URL', httpUrl, 'http://localhost:8080'),
  searchEngineTimeout: spec('SEARCH_ENGINE_TIMEOUT', decimal(0, 3600, true), 10),
  corsOrigins: spec('CORS_ORIGINS', list, [] as string[], true),
  corsAllowCredentials: spec('CORS_ALLOW_CREDENTIALS', boolean, false, true),
  corsAllowMethods: spec('CORS_ALLOW_METHODS', list, ['GET', 'POST', 'DELETE', 'OPTIONS'], true),
  corsAllowHeaders: spec('CORS_ALLOW_HEADERS', list, ['Content-Type', 'X-API-Key'], true),
  llmProvider: spec('LLM_PROVIDER', oneOf(['ollama', 'openai']), 'ollama'),
  llmBaseUrl: spec('LLM_BASE_URL', httpUrl, 'http://localhost:11434'),
  llmModel: spec('LLM_MODEL', text, 'qwen2.5-coder:7b'),
  llmModels: spec('LLM_MODELS', list, [] as string[], true),
  llmApiKey: spec('LLM_API_KEY', text, ''),
  llmTemperature: spec('LLM_TEMPERATURE', decimal(0, 2), 0.3),
  llmNumCtx: spec('LLM_NUM_CTX', integer(512), 32_768),
  llmTimeoutSeconds: spec('LLM_TIMEOUT_SECONDS', decimal(0, 86_400, true), 300),
  agentMaxSteps: spec('AGENT_MAX_STEPS', integer(1, 1000), 40),
  apiKeys: spec('API_KEYS', apiKeys, [] as ApiKey[]),
  adminUsers: spec('ADMIN_USERS', list, [] as string[]),
  maxWriteBytes: spec('MAX_WRITE_BYTES', integer(1), 10_485_760),
  rateLimitPerMinute: spec('RATE_LIMIT_PER_MINUTE', integer(0), 120),
  maxBodyBytes: spec('MAX_BODY_BYTES', integer(1024), 2_097_152),
  metricsToken: spec('METRICS_TOKEN', text, ''),
  maxConcurrentRuns: spec('MAX_CONCURRENT_RUNS', integer(1, 10_000), 4),
  maxRunsPerUser: spec('MAX_RUNS_PER_USER', integer(1, 10_000), 2),
  maxQueuedRunsPerUser: spec('MAX_QUEUED_RUNS_PER_USER', integer(1, 1_000_000), 20),
  maxRunsPerDay: spec('MAX_RUNS_PER_DAY', integer(0, 1_000_000_000), 0),
  maxTokensPerDay: spec('MAX_TOKENS_PER_DAY', integer(0, 1_000_000_000), 0),
  runRetentionHours: spec('RUN_RETENTION_HOURS', decimal(0), 168),
  runLeaseSeconds: spec('RUN_LEASE_SECONDS', decimal(1, 3600), 30),
  allowedHosts: spec('ALLOWED_HOSTS', list, [] as string[]),
  maxMessageTokens: spec('MAX_MESSAGE_TOKENS', integer(1), 32_000),
  maxMessageBytes: spec('MAX_MESSAGE_BYTES', integer(1), 262_144),
  maxConversationsPerUser: spec('MAX_CONVERSATIONS_PER_USER', integer(1), 10_000),
  requestTimeoutSeconds: spec('REQUEST_TIMEOUT_SECONDS', decimal(0, 86_400, true), 60),
  keepAliveTimeoutSeconds: spec('KEEP_ALIVE_TIMEOUT_SECONDS', decimal(0, 86_400, true), 75),
  maxConnectionsPerAddress: spec('MAX_CONNECTIONS_PER_ADDRESS', integer(1), 256),
  maxConnections: spec('MAX_CONNECTIONS', integer(1), 8192),
  trustProxy: spec('TRUST_PROXY', proxies, [] as string[]),
  approvalRulesFile: spec('APPROVAL_RULES_FILE', text, '', true),
  approvalTimeoutSeconds: spec('APPROVAL_TIMEOUT_SECONDS', decimal(1, 86_400 * 7), 600),
  checkpointMaxFileBytes: spec('CHECKPOINT_MAX_FILE_BYTES', integer(0), 10_485_760),
  shutdownGraceSeconds: spec('SHUTDOWN_GRACE_SECONDS', decimal(0, 86_400), 30),
  consoleSessionHours: spec('CONSOLE_SESSION_HOURS', decimal(0, 24 * 366, true), 12),
  mcpConfigFile: spec('MCP_CONFIG_FILE', text, '', true),
  mcpIdleSeconds: spec('MCP_IDLE_SECONDS', decimal(0, 86_400 * 7, true), 300),
  mcpStartTimeoutSeconds: spec('MCP_START_TIMEOUT_SECONDS', decimal(0, 3600, true), 30),
  // Webhooks may reach loopback, private and link-local addresses only when the operator says so.
  webhookAllowPrivate: spec('WEBHOOK_ALLOW_PRIVATE', boolean, false),
  // The first retry's delay; each next one doubles it, up to an hour, for 24 h.
  webhookRetryBaseSeconds: spec('WEBHOOK_RETRY_BASE_SECONDS', decimal(0.01, 3600), 30),
  agentsMd: spec('AGENTS_MD', boolean, true),
  // At most 256 KiB: the file is read and counted with the tokenizer at the start of every run.
  agentsMdMaxBytes: spec('AGENTS_MD_MAX_BYTES', integer(1, 262_144), 32_768),
} satisfies Record<string, Spec<unknown>>;

type Raw = { [K in keyof typeof SPECS]: (typeof SPECS)[K] extends Spec<infer T> ? T : never };

export type Settings = Omit<Raw, 'databaseUrl' | 'allowedPaths' | 'dataDir' | 'workspacesDir'> & {
  dataDir: string;
  database: DatabaseConfig;
  /** Absolute, symlink-free roots the tools may touch. Never empty. */
  allowedPaths: string[];
  /** True when ALLOWED_PATHS was empty and the start directory was used instead. */
  allowedPathsDefaulted: boolean;
  /** WORKSPACES_DIR made absolute, or '' when unset (users without paths then share ALLOWED_PATHS). */
  workspacesDir: string;
  /** APPROVAL_RULES_FILE's rules, or the defaults when it is unset. */
  approvalRules: readonly ApprovalRule[];
  /** MCP_CONFIG_FILE's servers; none when it is unset. */
  mcpServers: readonly McpServerConfig[];
};

function readRaw(env: Env): Raw {
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(SPECS) as [string, Spec<unknown>][]) {
    const raw = env[s.env];
    const unset = raw === undefined || (s.emptyIsUnset === true && raw.trim() === '');
    out[key] = unset ? s.default : s.parse(raw, s.env);
  }
  return out as Raw;
}

function resolveAllowedPaths(paths: string[], cwd: string): string[] {
  return paths.map((p) => {
    const absolute = isAbsolute(p) ? p : resolve(cwd, p);
    try {
      return realpathSync(absolute);
    } catch {
      return fail('ALLOWED_PATHS', `path does not exist: ${absolute}`);
    }
  });
}

/** Reads and validates every setting; throws SettingsError naming the first bad variable. */
export function loadSettings(env: Env = process.env, cwd = process.cwd()): Settings {
  const raw = readRaw(env);
  const dataDir = resolve(cwd, raw.dataDir);
  const database =
    raw.databaseUrl.trim() === ''
      ? { dialect: 'sqlite' as const, path: resolve(dataDir, 'mada.db'), url: `sqlite:///${resolve(dataDir, 'mada.db')}` }
      : parseDatabaseUrl(raw.databaseUrl);
  if (raw.retryMaxDelay < raw.retryBaseDelay) fail('RETRY_MAX_DELAY', `must be at least RETRY_BASE_DELAY (${raw.retryBaseDelay})`);
  const allowedPathsDefaulted = raw.allowedPaths.length === 0;
  const allowedPaths = resolveAllowedPaths(allowedPathsDefaulted ? [cwd] : raw.allowedPaths, cwd);
  const sandboxReadPaths = raw.sandboxReadPaths.map((p) => resolve(cwd, p));
  const { databaseUrl: _url, allowedPaths: _paths, dataDir: _dir, ...rest } = raw;
  const approvalRulesFile = raw.approvalRulesFile === '' ? '' : resolve(cwd, raw.approvalRulesFile);
  const workspacesDir = raw.workspacesDir.trim() === '' ? '' : resolve(cwd, raw.workspacesDir.trim());
  if (workspacesDir !== '') refuseUnsafeDirectoryNames(raw.apiKeys);
  const approvalRules = approvalRulesFile === '' ? DEFAULT_APPROVAL_RULES : approvalRulesFrom(approvalRulesFile);
  const mcpConfigFile = raw.mcpConfigFile === '' ? '' : resolve(cwd, raw.mcpConfigFile);
  const mcpServers = mcpConfigFile === '' ? [] : mcpServersFrom(mcpConfigFile);
  const llmModels = modelNames(raw.llmModel, raw.llmModels);
  // approvalRulesFile absolute: the engine protects that file from the tools.
  return { ...rest, llmModels, sandboxReadPaths, dataDir, database, allowedPaths, allowedPathsDefaulted, approvalRulesFile, approvalRules, workspacesDir, mcpConfigFile, mcpServers };
}

/** The longest model name stored with a run or conversation (their `model` columns). */
const MAX_MODEL_NAME = 255;

/**
 * The models users may choose: LLM_MODEL first, as the default, whether or not LLM_MODELS names
 * it, then the others of LLM_MODELS once each. A name is a label in metrics and a column value,
 * so it is bounded and printable.
 */
function modelNames(defaultModel: string, configured: readonly string[]): string[] {
  const names = [...new Set([defaultModel, ...configured])];
  for (const [index, name] of names.entries()) {
    const variable = index === 0 ? 'LLM_MODEL' : 'LLM_MODELS';
    // eslint-disable-next-line no-control-regex
    if (name === '' || name.length > MAX_MODEL_NAME || /[\x00-\x1f\x7f]/.test(name)) fail(variable, `expected a model name of 1 to ${MAX_MODEL_NAME} printable characters, got ${JSON.stringify(name.slice(0, 64))}`);
  }
  return names;
}

/**
 * With WORKSPACES_DIR each user's directory is named by their id, so an id of API_KEYS that is
 * not a plain name (`..`, `a/b`) would name a directory elsewhere: the service does not start.
 */
function refuseUnsafeDirectoryNames(keys: readonly ApiKey[]): void {
  const bad = keys.find((key) => !UserId.safeParse(key.userId).success);
  if (bad === undefined) return;
  // The id only (JSON-quoted, so an odd character shows): the key never reaches a message.
  fail('API_KEYS', `user id ${JSON.stringify(bad.userId.slice(0, 64))} cannot name a directory under WORKSPACES_DIR: a user id is 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit`);
}

function mcpServersFrom(path: string): McpServerConfig[] {
  try {
    return readMcpConfig(path);
  } catch (error) {
    return fail('MCP_CONFIG_FILE', (error as Error).message);
  }
}

function approvalRulesFrom(path: string): ApprovalRule[] {
  try {
    return readApprovalRulesFile(path);
  } catch (error) {
    return fail('APPROVAL_RULES_FILE', (error as Error).message);
  }
}
