import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ConversationDetailResponse, ConversationListResponse } from '@mada/protocol';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runMada, tempDir } from './support/cli-process.js';
import { startMadaService, type RunningService } from './support/service.js';

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

const chat = (args: string[], input: string, cwd?: string) =>
  runMada(['chat', '-a', service.url, ...args], { home, input, ...(cwd ? { cwd } : {}) });

async function conversation(id: string): Promise<ConversationDetailResponse> {
  return (await (await fetch(`${service.url}/conversations/${id}`)).json()) as ConversationDetailResponse;
}

async function total(): Promise<number> {
  return ((await (await fetch(`${service.url}/conversations/?limit=1`)).json()) as ConversationListResponse).total;
}

const sessionIds = (stdout: string): string[] => [...stdout.matchAll(/New session ([0-9a-f-]{36})/g)].map((match) => match[1]!);

describe('starting a chat', () => {
  it('creates a session for the agent in the absolute working directory', async () => {
    const project = join(home, 'project');
    mkdirSync(project);
    const result = await chat(['-d', 'project', '--agent', 'explore'], 'exit\n', home);
    expect(result.code).toBe(0);
    const [id] = sessionIds(result.stdout);
    expect(await conversation(id!)).toMatchObject({ agent_type: 'explore', working_dir: project, messages: [] });
    expect(result.stdout).toContain(`Resume with: mada chat --resume ${id}`);
  });

  it('uses the current directory without -d and the task agent by default', async () => {
    const result = await chat([], '', home);
    expect(await conversation(sessionIds(result.stdout)[0]!)).toMatchObject({ agent_type: 'task', working_dir: home });
  });

  it('refuses a directory that does not exist', async () => {
    const before = await total();
    const result = await chat(['-d', join(home, 'missing')], 'exit\n');
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`mada: Not a directory: ${join(home, 'missing')}; pass an existing directory to -d/--directory\n`);
    expect(await total()).toBe(before);
  });

  it('says -d does not move a resumed session', async () => {
    const first = await chat(['-d', home], 'exit\n');
    const id = sessionIds(first.stdout)[0]!;
    const other = tempDir('mada-cli-other-');
    const resumed = await chat(['--resume', id, '-d', other], 'exit\n');
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toBe(`The session works in ${home}; -d applies to new sessions only (cd starts one).\n`);
  });
});

describe('auto_accept asks first', () => {
  it('does not start when the answer is not yes', async () => {
    const before = await total();
    const result = await chat(['--mode', 'auto_accept'], 'n\nhello\n');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('Continue in auto_accept mode? [y/N] n\n');
    expect(result.stderr).toBe(
      'auto_accept lets the agent edit files and run commands without asking.\n' +
        'mada: Not started: auto_accept was not confirmed; start again with --mode default or --mode plan\n',
    );
    expect(await total()).toBe(before);
  });

  it('starts on yes', async () => {
    const result = await chat(['--mode', 'auto_accept'], 'y\nmode\nexit\n');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('New session');
    expect(result.stdout).toContain('Mode: auto_accept (others: default, plan, auto_accept)');
  });

  it('asks again when the chat switches to it, and keeps the mode on no', async () => {
    const result = await chat([], 'mode auto_accept\nno\nmode\nmode auto_accept\nyes\nexit\n');
    expect(result.stdout).toContain('Continue in auto_accept mode? [y/N] no\nMode stays default.');
    expect(result.stdout).toContain('Continue in auto_accept mode? [y/N] yes\nMode: auto_accept');
  });
});

describe('chat inputs', () => {
  it('mode switches, shows and rejects modes', async () => {
    const result = await chat([], 'mode plan\nmode\nmode yolo\nMODE default\nexit\n');
    expect(result.stdout).toContain('Mode: plan\nMode: plan (others: default, plan, auto_accept)\n');
    expect(result.stdout).toContain('Mode: default\n');
    expect(result.stderr).toBe('mada: Unknown mode: yolo; use mode default, mode plan or mode auto_accept\n');
  });

  it('cd moves to another directory in a new session, relative to the current one', async () => {
    mkdirSync(join(home, 'a', 'b'), { recursive: true });
    const result = await chat(['-d', home], 'cd a\ncd b\ncd ..\ncd .\ncd nowhere\nexit\n');
    expect(result.code).toBe(0);
    const ids = sessionIds(result.stdout);
    expect(ids).toHaveLength(4);
    const dirs = await Promise.all(ids.map(async (id) => (await conversation(id)).working_dir));
    expect(dirs).toEqual([home, join(home, 'a'), join(home, 'a', 'b'), join(home, 'a')]);
    expect(result.stdout).toContain(`Working directory: ${join(home, 'a', 'b')}`);
    expect(result.stdout).toContain(`Already in ${join(home, 'a')}`);
    expect(result.stderr).toBe(`mada: Not a directory: ${join(home, 'a', 'nowhere')}\n`);
  });

  it('cd alone goes home, like a shell', async () => {
    const elsewhere = tempDir('mada-cli-elsewhere-');
    const result = await chat(['-d', elsewhere], 'cd\nexit\n');
    expect(result.stdout).toContain(`Working directory: ${home}\n`);
  });

  it('help lists the inputs; quit leaves like exit; end of input leaves too', async () => {
    const help = await chat([], 'help\nquit\nthis is never sent\n');
    expect(help.code).toBe(0);
    for (const word of ['mode plan|default|auto_accept', 'cd <path>', 'clear', 'exit, quit']) expect(help.stdout).toContain(word);
    const ended = await chat([], '');
    expect(ended.code).toBe(0);
    expect(ended.stdout).toContain('Resume with:');
  });
});
