import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runMada, tempDir } from './support/cli-process.js';
import { conversationBody, deadUrl, frame, messageBody, openSse, sendJson, startPeer, type Peer } from './support/peer.js';
import { startMadaService, type RunningService } from './support/service.js';

let home: string;

beforeEach(() => {
  home = tempDir('mada-cli-home-');
});

const configPath = (): string => join(home, '.mada', 'config.toml');

function writeConfig(text: string): void {
  mkdirSync(join(home, '.mada'), { recursive: true });
  writeFileSync(configPath(), text);
}

const mada = (args: string[], env: Record<string, string> = {}, input?: string) =>
  runMada(args, { home, env, ...(input === undefined ? {} : { input }) });

interface ShownSettings {
  file: string;
  file_found: boolean;
  settings: Record<string, { value: string; source: string }>;
}

async function shown(env: Record<string, string> = {}): Promise<ShownSettings> {
  const result = await mada(['config', '--json'], env);
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as ShownSettings;
}

describe('mada config', () => {
  it('shows the defaults and says the file is missing', async () => {
    const result = await mada(['config']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Config file: ~/.mada/config.toml (not found; `mada config --init` writes one)');
    expect(result.stdout).toMatch(/api\.url\s+http:\/\/127\.0\.0\.1:8095\s+default/);
    expect(result.stdout).toMatch(/cli\.mode\s+default\s+default/);
    expect(result.stdout).toMatch(/cli\.stream\s+true\s+default/);
    expect(result.stdout).toMatch(/history\.file\s+~\/\.mada_history\s+default/);
  });

  it('--init writes a default file that reads back as the defaults', async () => {
    const init = await mada(['config', '--init']);
    expect(init).toMatchObject({ code: 0, stdout: `Wrote ${configPath()}\n` });
    expect(statSync(configPath()).mode & 0o777).toBe(0o600);
    const settings = await shown();
    expect(settings.file_found).toBe(true);
    expect(settings.settings['api.url']).toEqual({ value: 'http://127.0.0.1:8095', source: 'config file' });
    expect(settings.settings['api.key']).toEqual({ value: '(not set)', source: 'default' });
    expect(settings.settings['cli.stream']).toEqual({ value: 'true', source: 'config file' });
  });

  it('--init refuses to overwrite an existing file; --force overwrites it', async () => {
    writeConfig('[api]\nurl = "http://example.org:9999"\n');
    const refused = await mada(['config', '--init']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`mada: ${configPath()} already exists; use \`mada config --init --force\` to overwrite it\n`);
    expect(readFileSync(configPath(), 'utf8')).toContain('example.org');
    const forced = await mada(['config', '--init', '--force']);
    expect(forced.code).toBe(0);
    expect(readFileSync(configPath(), 'utf8')).not.toContain('example.org');
  });

  it('never shows an API key, only its last characters', async () => {
    writeConfig('[api]\nkey = "super-secret-key-1234"\n');
    const result = await mada(['config']);
    expect(result.stdout).toMatch(/api\.key\s+\*\*\*\*1234\s+config file/);
    expect(result.stdout).not.toContain('super-secret');
  });
});

describe('a malformed config file', () => {
  it.each([
    ['broken TOML', '[api\nurl = "x"\n', /invalid TOML: illegal character in key \(line 1, column 5\)/],
    ['a wrong type', '[cli]\nstream = "yes"\n', /cli\.stream must be true or false \(got "yes"\)/],
    ['an unknown key', '[api]\nurll = "http://x"\n', /unknown key api\.urll \(known: api\.url, /],
    ['a bad URL', '[api]\nurl = "localhost:8095"\n', /api\.url must be an http:\/\/ or https:\/\/ URL/],
    ['a bad mode', '[cli]\nmode = "yolo"\n', /cli\.mode must be one of default, plan, auto_accept \(got "yolo"\)/],
  ])('with %s gives one line naming the file and the problem, exit 1', async (_name, text, problem) => {
    writeConfig(text);
    for (const command of [['config'], ['status'], ['chat']]) {
      const result = await mada(command);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      const lines = result.stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^mada: ${configPath().replace(/[.]/g, '\\.')}: `));
      expect(lines[0]).toMatch(problem);
    }
  });

  it('can still be replaced with --init --force', async () => {
    writeConfig('this is not toml');
    expect((await mada(['config', '--init', '--force'])).code).toBe(0);
    expect((await mada(['config'])).code).toBe(0);
  });

  it('names a bad environment variable the same way', async () => {
    const result = await mada(['config'], { MADA_MODE: 'yolo' });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('mada: MADA_MODE must be one of default, plan, auto_accept (got "yolo"); fix or unset MADA_MODE\n');
  });
});

describe('precedence: file < environment < flags', () => {
  let service: RunningService;
  beforeAll(async () => {
    service = await startMadaService();
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('the environment overrides the file, and says so', async () => {
    writeConfig('[api]\nurl = "http://file.example:1"\n[cli]\nmode = "plan"\n');
    const fileOnly = await shown();
    expect(fileOnly.settings['api.url']).toEqual({ value: 'http://file.example:1', source: 'config file' });
    const withEnv = await shown({ MADA_API_URL: 'http://env.example:2', MADA_MODE: 'auto_accept' });
    expect(withEnv.settings['api.url']).toEqual({ value: 'http://env.example:2', source: 'env MADA_API_URL' });
    expect(withEnv.settings['cli.mode']).toEqual({ value: 'auto_accept', source: 'env MADA_MODE' });
  });

  it('the client talks to the URL that wins', async () => {
    const dead = await deadUrl();
    writeConfig(`[api]\nurl = "${service.url}"\n`);
    expect((await mada(['status'])).code).toBe(0);
    writeConfig(`[api]\nurl = "${dead}"\n`);
    expect((await mada(['status'])).code).toBe(1);
    expect((await mada(['status'], { MADA_API_URL: service.url })).code).toBe(0);
    const flagWins = await mada(['status', '-a', service.url], { MADA_API_URL: dead });
    expect(flagWins.code).toBe(0);
  });
});

describe('settings reach the service', () => {
  let peer: Peer;
  const conversation = randomUUID();

  beforeAll(async () => {
    peer = await startPeer((request, response) => {
      if (request.path === '/conversations/') return sendJson(response, 201, conversationBody(conversation));
      if (request.path.endsWith('/stream')) {
        const write = openSse(response);
        write(frame({ event: 'response', text: 'streamed' }));
        write(frame({ event: 'done', mode: 'default' }));
        return response.end();
      }
      if (request.path.endsWith('/messages')) {
        return sendJson(response, 200, {
          user_message: messageBody(randomUUID(), 'user', 'hi'),
          assistant_message: messageBody(randomUUID(), 'assistant', 'blocking reply'),
          total_tokens: 9,
          summarized: false,
        });
      }
      sendJson(response, 404, { detail: 'Not Found' });
    });
  });
  afterAll(async () => {
    await peer?.close();
  });
  afterEach(() => {
    peer.requests.length = 0;
  });

  const lastTurn = () => peer.requests.filter((request) => request.path.startsWith(`/conversations/${conversation}`)).at(-1);

  it('cli.mode from the file, MADA_MODE over it, --mode over both', async () => {
    writeConfig(`[api]\nurl = "${peer.url}"\n[cli]\nmode = "plan"\n`);
    await mada(['chat'], {}, 'hi\n');
    expect(lastTurn()?.body).toMatchObject({ mode: 'plan' });
    await mada(['chat'], { MADA_MODE: 'default' }, 'hi\n');
    expect(lastTurn()?.body).toMatchObject({ mode: 'default' });
    await mada(['chat', '--mode', 'plan'], { MADA_MODE: 'default' }, 'hi\n');
    expect(lastTurn()?.body).toMatchObject({ mode: 'plan' });
  });

  it('cli.stream = false sends turns to /messages; --stream overrides it', async () => {
    writeConfig(`[api]\nurl = "${peer.url}"\n[cli]\nstream = false\n`);
    const blocking = await mada(['chat'], {}, 'hi\n');
    expect(lastTurn()?.path).toBe(`/conversations/${conversation}/messages`);
    expect(blocking.stdout).toContain('blocking reply');
    expect(blocking.stdout).toContain('(9 tokens in this session)');
    const streamed = await mada(['chat', '--stream'], {}, 'hi\n');
    expect(lastTurn()?.path).toBe(`/conversations/${conversation}/stream`);
    expect(streamed.stdout).toContain('streamed');
    await mada(['chat', '--no-stream', '-a', peer.url], {}, 'hi\n');
    expect(lastTurn()?.path).toBe(`/conversations/${conversation}/messages`);
  });

  it('api.key from the file, MADA_API_KEY over it', async () => {
    writeConfig(`[api]\nurl = "${peer.url}"\nkey = "key-from-file"\n`);
    await mada(['chat'], {}, 'hi\n');
    expect(lastTurn()?.headers['x-api-key']).toBe('key-from-file');
    await mada(['chat'], { MADA_API_KEY: 'key-from-env' }, 'hi\n');
    expect(lastTurn()?.headers['x-api-key']).toBe('key-from-env');
  });

  it('history.file decides where chat input is remembered', async () => {
    const historyFile = join(home, 'elsewhere', 'history.txt');
    writeConfig(`[api]\nurl = "${peer.url}"\n[history]\nfile = "${historyFile}"\n`);
    await mada(['chat'], {}, 'first question\nmode plan\nexit\n');
    expect(readFileSync(historyFile, 'utf8')).toBe('first question\nmode plan\nexit\n');
    expect(existsSync(join(home, '.mada_history'))).toBe(false);
  });
});
