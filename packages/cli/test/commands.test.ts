import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { childEnv, cliCommand, runMada, tempDir } from './support/cli-process.js';
import { deadUrl } from './support/peer.js';
import { startMadaService, type RunningService } from './support/service.js';

const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

let service: RunningService;
let home: string;

beforeAll(async () => {
  service = await startMadaService();
});

afterAll(async () => {
  await service?.stop();
});

beforeEach(() => {
  home = tempDir('mada-cli-home-');
});

const mada = (args: string[], env: Record<string, string> = {}) => runMada(args, { home, env });

describe('--version and --help', () => {
  it.each([[[]], [['status']], [['chat']], [['sessions']], [['config']], [['explore']]])('mada %j --version prints the package version', async (command) => {
    const result = await mada([...command, '--version']);
    expect(result).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
  });

  it('lists every command in --help and exits 0', async () => {
    const result = await mada(['--help']);
    expect(result.code).toBe(0);
    for (const command of ['chat', 'run', 'status', 'sessions', 'runs', 'attach', 'cancel', 'config', 'explore']) expect(result.stdout).toContain(command);
  });

  it('stops quietly when the reader of its output goes away first (mada --help | true)', () => {
    const command = cliCommand(['--help']).map((word) => `'${word}'`).join(' ');
    // `true` exits before the client has even started, so every write meets a closed pipe.
    const result = spawnSync('bash', ['-c', `set -o pipefail; ${command} | true`], { env: childEnv(home), encoding: 'utf8' });
    expect(result).toMatchObject({ status: 0, stderr: '' });
  });

  it('lists the chat options in chat --help', async () => {
    const result = await mada(['chat', '--help']);
    expect(result.code).toBe(0);
    for (const option of ['-d, --directory', '-a, --api', '--agent', '--mode', '--no-stream', '--resume']) {
      expect(result.stdout).toContain(option);
    }
  });
});

describe('usage errors exit with 2', () => {
  it.each([
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['status', '--bogus'], /unknown option '--bogus'/],
    [['chat', '--mode', 'yolo'], /Allowed choices are default, plan, auto_accept/],
    [['chat', '--agent', 'wizard'], /Allowed choices are explore, plan, task/],
    [['sessions', '--limit', '0'], /must be a whole number from 1 to 100/],
    [['explore'], /missing required argument 'query'/],
    [['status', '-a', 'ftp://example.org'], /--api must be an http:\/\/ or https:\/\/ URL/],
  ])('mada %j', async (args, message) => {
    const result = await mada(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });
});

describe('mada status', () => {
  it('says the service is reachable and lists its agents', async () => {
    const result = await mada(['status', '-a', service.url]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`Service\\s+${service.url} reachable \\(mada-api \\d+\\.\\d+\\.\\d+\\)`));
    expect(result.stdout).toMatch(/Health\s+(healthy|degraded) · database ok/);
    for (const agent of ['explore', 'plan', 'task']) expect(result.stdout).toMatch(new RegExp(`\\b${agent}\\s+\\S`));
  });

  it('prints the same facts as JSON with --json', async () => {
    const result = await mada(['status', '--json', '-a', service.url]);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { url: string; reachable: boolean; service: { name: string }; agents: { name: string }[] };
    expect(report).toMatchObject({ url: service.url, reachable: true, service: { name: 'mada-api' } });
    expect(report.agents.map((agent) => agent.name).sort()).toEqual(['explore', 'plan', 'task']);
  });

  it('explains a refused connection in one line with a hint, exit 1', async () => {
    const url = await deadUrl();
    const result = await mada(['status', '-a', url]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `mada: Cannot reach the mada service at ${url} (connection refused); is it running? check api.url in ~/.mada/config.toml, MADA_API_URL or -a/--api\n`,
    );
  });

  it('still answers --json when the service is unreachable', async () => {
    const result = await mada(['status', '--json', '-a', await deadUrl()]);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ reachable: false, error: { message: expect.stringContaining('connection refused') } });
  });
});

describe('mada sessions', () => {
  it('says there are none yet for a new user', async () => {
    const keyed = await startMadaService({ API_KEYS: 'nobody:key-of-nobody' });
    try {
      const result = await mada(['sessions', '-a', keyed.url], { MADA_API_KEY: 'key-of-nobody' });
      expect(result).toMatchObject({ code: 0, stdout: 'No sessions yet. Start one with: mada chat\n' });
    } finally {
      await keyed.stop();
    }
  });

  it('lists the sessions chats created, newest first, and as JSON; resumes one by its first 8 characters', async () => {
    const first = await mada(['chat', '-a', service.url, '-d', service.workspace], {});
    const second = await mada(['chat', '-a', service.url, '--agent', 'plan'], {});
    expect([first.code, second.code]).toEqual([0, 0]);
    const ids = [first, second].map((run) => /New session (\S+)/.exec(run.stdout)?.[1]?.slice(0, 8));

    const table = await mada(['sessions', '-a', service.url]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^ID\s+AGENT\s+UPDATED\s+TOKENS\s+TITLE/);
    expect(table.stdout.indexOf(ids[1]!)).toBeLessThan(table.stdout.indexOf(ids[0]!));
    expect(table.stdout).toMatch(new RegExp(`${ids[1]}\\s+plan\\s`));

    const resumed = await mada(['chat', '--resume', ids[0]!, '-a', service.url], {});
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(new RegExp(`^Resumed session ${ids[0]}[0-9a-f-]{28} · agent task`, 'm'));

    const json = await mada(['sessions', '--json', '--limit', '1', '-a', service.url]);
    const list = JSON.parse(json.stdout) as { conversations: { id: string; working_dir: string }[]; total: number };
    expect(list.conversations).toHaveLength(1);
    expect(list.total).toBeGreaterThanOrEqual(2);
    // Five client processes: room for a loaded machine.
  }, 60_000);
});

describe('API keys', () => {
  let keyed: RunningService;
  beforeAll(async () => {
    keyed = await startMadaService({ API_KEYS: 'alice:alice-secret-key,bob:bob-secret-key' });
  });
  afterAll(async () => {
    await keyed?.stop();
  });

  it('tells the user to set MADA_API_KEY when the service wants a key', async () => {
    const result = await mada(['sessions', '-a', keyed.url]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('mada: The service needs an API key (401 Missing API key); set MADA_API_KEY or api.key in ~/.mada/config.toml\n');
  });

  it('names a rejected key as such', async () => {
    const result = await mada(['status', '-a', keyed.url], { MADA_API_KEY: 'wrong' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^mada: The service rejected the API key \(401 Invalid API key\); check MADA_API_KEY/);
  });

  it("keeps each user's sessions apart and refuses to resume another user's", async () => {
    const alice = await mada(['chat', '-a', keyed.url], { MADA_API_KEY: 'alice-secret-key' });
    const id = /New session (\S+)/.exec(alice.stdout)?.[1];
    const bobList = await mada(['sessions', '--json', '-a', keyed.url], { MADA_API_KEY: 'bob-secret-key' });
    expect((JSON.parse(bobList.stdout) as { total: number }).total).toBe(0);
    const bobResume = await mada(['chat', '--resume', id!, '-a', keyed.url], { MADA_API_KEY: 'bob-secret-key' });
    expect(bobResume.code).toBe(1);
    expect(bobResume.stderr).toBe('mada: Not allowed (403 Not authorized); this session belongs to another user: check the API key you use\n');
  });
});
