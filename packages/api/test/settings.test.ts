import { realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings, parseDatabaseUrl, SettingsError } from '../src/settings.js';
import { tempDir } from '../../../test/helpers/temp-dirs.js';

const cwd = tempDir('mada-settings-');
const load = (env: Record<string, string>) => loadSettings(env, cwd);
const errorOf = (env: Record<string, string>): string => {
  try {
    load(env);
  } catch (error) {
    expect(error).toBeInstanceOf(SettingsError);
    return (error as Error).message;
  }
  throw new Error('expected a SettingsError');
};

describe('settings', () => {
  it('has the documented defaults', () => {
    const s = load({});
    expect(s).toMatchObject({
      host: '127.0.0.1',
      port: 8095,
      sessionTtlHours: 24,
      maxContextTokens: null,
      logFormat: 'auto',
      summarizationThreshold: 0.8,
      summarizationTargetTokens: 500,
      keepRecentMessages: 6,
      retryMaxAttempts: 3,
      retryBaseDelay: 1,
      retryMaxDelay: 30,
      toolTimeoutSeconds: 120,
      sandboxEnabled: true,
      sandboxNetwork: true,
      sandboxMaxFileMb: 1024,
      sandboxMinFreeMb: 1024,
      sandboxMinFreePercent: 1,
      sandboxMinFreeInodes: 10_000,
      searchEngineTimeout: 10,
      debug: false,
      llmProvider: 'ollama',
      llmBaseUrl: 'http://localhost:11434',
      llmModel: 'qwen2.5-coder:7b',
      llmTemperature: 0.3,
      llmNumCtx: 32_768,
      llmTimeoutSeconds: 300,
      agentMaxSteps: 40,
      apiKeys: [],
      maxWriteBytes: 10_485_760,
      rateLimitPerMinute: 120,
      corsOrigins: [],
      shutdownGraceSeconds: 30,
    });
    expect(s.database).toEqual({ dialect: 'sqlite', path: join(cwd, 'data', 'mada.db'), url: `sqlite:///${join(cwd, 'data', 'mada.db')}` });
  });

  it('has the documented HTTP limits, and refuses nonsense ones', () => {
    expect(load({})).toMatchObject({
      allowedHosts: [],
      maxMessageTokens: 32_000,
      maxMessageBytes: 262_144,
      maxConversationsPerUser: 10_000,
      requestTimeoutSeconds: 60,
      keepAliveTimeoutSeconds: 75,
      maxConnectionsPerAddress: 256,
    });
    expect(load({ ALLOWED_HOSTS: 'mada.example, 10.0.0.5:8443' }).allowedHosts).toEqual(['mada.example', '10.0.0.5:8443']);
    expect(errorOf({ MAX_MESSAGE_TOKENS: '0' })).toMatch(/^Invalid setting MAX_MESSAGE_TOKENS: /);
    expect(errorOf({ MAX_MESSAGE_BYTES: '1MB' })).toMatch(/^Invalid setting MAX_MESSAGE_BYTES: /);
    expect(errorOf({ MAX_CONVERSATIONS_PER_USER: 'many' })).toMatch(/^Invalid setting MAX_CONVERSATIONS_PER_USER: /);
    expect(errorOf({ REQUEST_TIMEOUT_SECONDS: '0' })).toMatch(/^Invalid setting REQUEST_TIMEOUT_SECONDS: /);
    expect(errorOf({ KEEP_ALIVE_TIMEOUT_SECONDS: '-1' })).toMatch(/^Invalid setting KEEP_ALIVE_TIMEOUT_SECONDS: /);
    expect(errorOf({ MAX_CONNECTIONS_PER_ADDRESS: '0' })).toMatch(/^Invalid setting MAX_CONNECTIONS_PER_ADDRESS: /);
    expect(errorOf({ MAX_CONNECTIONS: '0' })).toMatch(/^Invalid setting MAX_CONNECTIONS: /);
  });

  it('uses the start directory when ALLOWED_PATHS is empty, never "everything"', () => {
    expect(load({ ALLOWED_PATHS: '' })).toMatchObject({ allowedPaths: [cwd], allowedPathsDefaulted: true });
  });

  it('reads lists as JSON arrays or comma-separated values, resolving symlinks in allowed paths', () => {
    const link = join(cwd, 'link');
    symlinkSync(tmpdir(), link);
    expect(load({ ALLOWED_PATHS: `["${cwd}", "${link}"]` }).allowedPaths).toEqual([cwd, realpathSync(tmpdir())]);
    expect(load({ ALLOWED_PATHS: ` ${cwd} , ,${link}` }).allowedPaths).toEqual([cwd, realpathSync(tmpdir())]);
    expect(load({ CORS_ORIGINS: 'https://a.example, https://b.example' }).corsOrigins).toEqual(['https://a.example', 'https://b.example']);
  });

  it('treats empty CORS values as unset', () => {
    const s = load({ CORS_ORIGINS: '', CORS_ALLOW_METHODS: '', CORS_ALLOW_HEADERS: ' ', CORS_ALLOW_CREDENTIALS: '' });
    expect(s.corsAllowMethods).toEqual(['GET', 'POST', 'DELETE', 'OPTIONS']);
    expect(s.corsAllowHeaders).toEqual(['Content-Type', 'X-API-Key']);
    expect(s.corsAllowCredentials).toBe(false);
  });

  it('accepts fractional hours and seconds, and word booleans', () => {
    const s = load({ SESSION_TTL_HOURS: '0.5', TOOL_TIMEOUT_SECONDS: '2.5', SANDBOX_ENABLED: 'No', DEBUG: 'YES' });
    expect(s).toMatchObject({ sessionTtlHours: 0.5, toolTimeoutSeconds: 2.5, sandboxEnabled: false, debug: true });
  });

  it('parses API_KEYS as user:key pairs', () => {
    expect(load({ API_KEYS: 'alice:k1-secret, bob:k2:with:colons' }).apiKeys).toEqual([
      { userId: 'alice', key: 'k1-secret' },
      { userId: 'bob', key: 'k2:with:colons' },
    ]);
  });

  it.each([
    [{ PORT: 'abc' }, 'Invalid setting PORT: expected an integer, got "abc"'],
    [{ PORT: '70000' }, 'Invalid setting PORT: expected an integer between 0 and 65535, got 70000'],
    [{ SESSION_TTL_HOURS: '-1' }, 'Invalid setting SESSION_TTL_HOURS: expected a number of at least 0, got -1'],
    [{ SUMMARIZATION_THRESHOLD: '1.5' }, 'Invalid setting SUMMARIZATION_THRESHOLD: expected a number above 0 and at most 1, got 1.5'],
    [{ SUMMARIZATION_THRESHOLD: '0' }, 'Invalid setting SUMMARIZATION_THRESHOLD: expected a number above 0 and at most 1, got 0'],
    [{ KEEP_RECENT_MESSAGES: '2.5' }, 'Invalid setting KEEP_RECENT_MESSAGES: expected an integer, got "2.5"'],
    [{ MAX_CONTEXT_TOKENS: '0' }, 'Invalid setting MAX_CONTEXT_TOKENS: expected an integer between 1 and 9007199254740991, got 0'],
    [{ SANDBOX_ENABLED: 'maybe' }, 'Invalid setting SANDBOX_ENABLED: expected true or false, got "maybe"'],
    [{ SANDBOX_MAX_FILE_MB: '0' }, 'Invalid setting SANDBOX_MAX_FILE_MB: expected an integer between 1 and 16777216, got 0'],
    [{ SANDBOX_MIN_FREE_MB: '1G' }, 'Invalid setting SANDBOX_MIN_FREE_MB: expected an integer, got "1G"'],
    [{ SANDBOX_MIN_FREE_PERCENT: '60' }, 'Invalid setting SANDBOX_MIN_FREE_PERCENT: expected a number of at least 0 and at most 50, got 60'],
    [{ SANDBOX_MIN_FREE_INODES: '-1' }, 'Invalid setting SANDBOX_MIN_FREE_INODES: expected an integer between 0 and 9007199254740991, got -1'],
    [{ LLM_PROVIDER: 'anthropic' }, 'Invalid setting LLM_PROVIDER: expected one of ollama, openai, got "anthropic"'],
    [{ LLM_BASE_URL: 'localhost:11434' }, 'Invalid setting LLM_BASE_URL: expected an http(s) URL, got "localhost:11434"'],
    [{ SEARCH_ENGINE_URL: 'ftp://x' }, 'Invalid setting SEARCH_ENGINE_URL: expected an http(s) URL, got "ftp://x"'],
    [{ TOOL_TIMEOUT_SECONDS: '0' }, 'Invalid setting TOOL_TIMEOUT_SECONDS: expected a number above 0 and at most 86400, got 0'],
    [{ RETRY_BASE_DELAY: '5', RETRY_MAX_DELAY: '1' }, 'Invalid setting RETRY_MAX_DELAY: must be at least RETRY_BASE_DELAY (5)'],
    [{ API_KEYS: 'just-a-key' }, 'Invalid setting API_KEYS: expected comma-separated user_id:key pairs'],
    [{ API_KEYS: 'a:same,b:same' }, 'Invalid setting API_KEYS: the same key is given twice'],
    [{ ALLOWED_PATHS: '["unterminated"' }, 'Invalid setting ALLOWED_PATHS: expected a JSON array of strings or comma-separated values'],
    [{ ALLOWED_PATHS: '[1, 2]' }, 'Invalid setting ALLOWED_PATHS: expected a JSON array of strings'],
    [{ ALLOWED_PATHS: '/no/such/dir/for/mada' }, 'Invalid setting ALLOWED_PATHS: path does not exist: /no/such/dir/for/mada'],
    [{ DATABASE_URL: 'mysql://x' }, 'Invalid setting DATABASE_URL: expected sqlite:///<path> or postgresql://... (also sqlite+aiosqlite, postgresql+asyncpg, postgres)'],
    [{ LOG_LEVEL: 'loud' }, 'Invalid setting LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got "loud"'],
  ])('refuses %j with one line naming the variable', (env, message) => {
    expect(errorOf(env)).toBe(message);
  });

  it('never puts an API key into its error message', () => {
    expect(errorOf({ API_KEYS: 'alice:topsecret,topsecret2' })).not.toContain('topsecret');
  });
});

describe('WORKSPACES_DIR', () => {
  it('is unset by default, and made absolute from the start directory', () => {
    expect(load({}).workspacesDir).toBe('');
    expect(load({ WORKSPACES_DIR: 'ws' }).workspacesDir).toBe(join(cwd, 'ws'));
  });

  it('stops start-up naming an API_KEYS user whose id cannot name a directory, never the key', () => {
    for (const id of ['..', 'a/b', '.hidden', 'x'.repeat(65)]) {
      const message = errorOf({ WORKSPACES_DIR: '/srv/ws', API_KEYS: `ok:key-one-0123,${id}:key-two-4567` });
      expect(message).toBe(
        `Invalid setting API_KEYS: user id ${JSON.stringify(id.slice(0, 64))} cannot name a directory under WORKSPACES_DIR: a user id is 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit`,
      );
      expect(message).not.toContain('key-two');
      // Without WORKSPACES_DIR such an id names no directory, and works as in version 1.1.
      expect(load({ API_KEYS: `${id}:key-two-4567` }).apiKeys).toEqual([{ userId: id, key: 'key-two-4567' }]);
    }
  });
});

describe('DATABASE_URL', () => {
  it.each([
    ['sqlite:////var/lib/mada/mada.db', { dialect: 'sqlite', path: '/var/lib/mada/mada.db' }],
    ['sqlite+aiosqlite:////var/lib/mada/mada.db', { dialect: 'sqlite', path: '/var/lib/mada/mada.db' }],
    ['postgresql://u:p@db:5432/mada', { dialect: 'postgres', url: 'postgresql://u:p@db:5432/mada' }],
    ['postgres://u@db/mada', { dialect: 'postgres', url: 'postgresql://u@db/mada' }],
    ['postgresql+asyncpg://u@db/mada', { dialect: 'postgres', url: 'postgresql://u@db/mada' }],
  ])('accepts %s', (url, expected) => {
    expect(parseDatabaseUrl(url)).toMatchObject(expected);
  });

  it('takes the path after the third slash relative to the start directory, as SQLAlchemy does', () => {
    expect(parseDatabaseUrl('sqlite:///./data/x.db')).toMatchObject({ dialect: 'sqlite', path: join(process.cwd(), 'data/x.db') });
  });
});

describe('APPROVAL_RULES_FILE and APPROVAL_TIMEOUT_SECONDS', () => {
  it('defaults to the built-in rules and a 600 s timeout', () => {
    const s = load({});
    expect(s.approvalTimeoutSeconds).toBe(600);
    expect(s.approvalRules).toContainEqual({ tool: 'bash', match: 'npm install', action: 'ask' });
  });

  it('replaces the defaults with the file, read relative to the start directory', () => {
    writeFileSync(join(cwd, 'rules.toml'), '[[rules]]\ntool = "bash"\nmatch = "make deploy"\naction = "ask"\n');
    expect(load({ APPROVAL_RULES_FILE: 'rules.toml' }).approvalRules).toEqual([{ tool: 'bash', match: 'make deploy', action: 'ask' }]);
  });

  it('stops start-up with one line naming the bad rule', () => {
    writeFileSync(join(cwd, 'bad.json'), JSON.stringify({ rules: [{ tool: 'bash', match: 'rm', action: 'nope' }] }));
    expect(errorOf({ APPROVAL_RULES_FILE: 'bad.json' })).toMatch(/^Invalid setting APPROVAL_RULES_FILE: rule 1 \(\{"tool":"bash","match":"rm","action":"nope"\}\): action: [^\n]+$/);
    expect(errorOf({ APPROVAL_RULES_FILE: 'missing.json' })).toMatch(/^Invalid setting APPROVAL_RULES_FILE: cannot read .*missing\.json: ENOENT$/);
    expect(errorOf({ APPROVAL_TIMEOUT_SECONDS: '0' })).toMatch(/^Invalid setting APPROVAL_TIMEOUT_SECONDS/);
  });
});
