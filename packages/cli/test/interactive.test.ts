import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted } from '@mada/testkit';
import type { RunListResponse } from '@mada/protocol';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { childEnv, cliCommand, tempDir } from './support/cli-process.js';
import { startServiceWithModel, type ServiceWithModel } from './support/service.js';
import { TmuxTerminal } from './support/tmux.js';

let running: ServiceWithModel;
let workspace: string;
let home: string;
const terminals: TmuxTerminal[] = [];

beforeAll(async () => {
  running = await startServiceWithModel();
  workspace = running.service.workspace;
  writeFileSync(join(workspace, 'README.md'), 'hello from the readme\n');
  mkdirSync(join(workspace, 'alpha'));
  mkdirSync(join(workspace, 'beta'));
});

afterAll(async () => {
  await running?.stop();
});

beforeEach(() => {
  home = tempDir('mada-cli-home-');
});

afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  expect(running.model.remaining).toBe(0);
});

/** `mada chat` in a fresh pseudo-terminal, waiting for its first prompt (or a question). */
async function openChat(args: string[] = [], env: Record<string, string> = {}, ready: string | RegExp = /mada \[\w+\] ›/): Promise<TmuxTerminal> {
  const terminal = TmuxTerminal.start(cliCommand(['chat', '-a', running.service.url, '-d', workspace, ...args]), childEnv(home, env), workspace);
  terminals.push(terminal);
  await terminal.waitFor(ready);
  return terminal;
}

function readThenAnswer(answer: string): void {
  running.model.push(scripted.toolCalls({ name: 'read_file', arguments: { file_path: join(workspace, 'README.md') } }), scripted.text(answer));
}

describe('the chat in a terminal', () => {
  it('shows tool progress and renders the answer as markdown', async () => {
    readThenAnswer('The README says **hello**.\n\n- one **point**\n- another `point`');
    const terminal = await openChat();
    terminal.type('what does the README say?');
    terminal.keys('Enter');
    const screen = await terminal.waitFor(/another point[\s\S]*mada \[default\] ›/);
    expect(screen).toContain('✔ read_file README.md · 1 hello from the readme');
    expect(screen).toContain('The README says hello.');
    const answer = screen.slice(screen.indexOf('The README says'));
    expect(answer).not.toContain('**');
    expect(answer).not.toContain('`');
    expect(answer).toMatch(/\* one point\n\s+\* another point/);
  });

  it('prints plain text under NO_COLOR: step lines instead of a spinner, the markdown as written', async () => {
    readThenAnswer('Plainly **so**.');
    const terminal = await openChat([], { NO_COLOR: '1' });
    terminal.type('plain please');
    terminal.keys('Enter');
    const screen = await terminal.waitFor(/Plainly \*\*so\*\*\.[\s\S]*mada \[default\] ›/);
    expect(screen).toContain('→ read_file README.md');
    expect(screen).toContain('✓ read_file: 1 hello from the readme');
  });

  it('completes commands, modes and directories with Tab', async () => {
    const terminal = await openChat();
    // `mode` and `model` share their first four letters: Tab completes those, with no space.
    terminal.type('mo');
    terminal.keys('Tab');
    await terminal.waitFor(/› mode$/m);
    terminal.type(' pl');
    terminal.keys('Tab');
    await terminal.waitFor(/› mode plan$/m);
    terminal.keys('Enter');
    await terminal.waitFor(/Mode: plan\n.*mada \[plan\] ›/);

    terminal.type('cd al');
    terminal.keys('Tab');
    await terminal.waitFor(/› cd alpha\/$/m);
    terminal.keys('Enter');
    await terminal.waitFor(`Working directory: ${join(workspace, 'alpha')}`);
  });

  it('lists the choices when Tab has several', async () => {
    const terminal = await openChat();
    terminal.type('cd ');
    terminal.keys('Tab', 'Tab');
    const screen = await terminal.waitFor(/alpha\/\s+beta\//);
    expect(screen).not.toContain('README.md');
  });

  it('remembers input across two runs through the history file', async () => {
    const first = await openChat();
    first.type('mode plan');
    first.keys('Enter');
    await first.waitFor('Mode: plan');
    first.type('exit');
    first.keys('Enter');
    await first.waitFor('[exit 0]');
    expect(readFileSync(join(home, '.mada_history'), 'utf8')).toBe('mode plan\nexit\n');

    const second = await openChat();
    second.keys('Up');
    await second.waitFor(/› exit$/m);
    second.keys('Up');
    await second.waitFor(/› mode plan$/m);
    second.keys('Enter');
    await second.waitFor(/mada \[plan\] ›/);
  });

  it('Ctrl-C cancels a run and returns to the prompt; Ctrl-C at an empty prompt leaves', async () => {
    running.model.push(scripted.toolCalls({ name: 'read_file', arguments: { file_path: join(workspace, 'README.md') } }), scripted.stall());
    const terminal = await openChat();
    terminal.type('take your time');
    terminal.keys('Enter');
    await terminal.waitFor('✔ read_file README.md');
    terminal.keys('C-c');
    await terminal.waitFor(/Cancelled\.\n.*mada \[default\] ›/);
    expect(await running.model.requests.at(-1)!.outcome).toBe('client-closed');
    // The chat cancelled the stored run itself: it ends `cancelled`, not merely abandoned.
    const runs = (await (await fetch(`${running.service.url}/runs?limit=1`)).json()) as RunListResponse;
    expect(runs.runs[0]).toMatchObject({ prompt: 'take your time', status: 'cancelled' });

    // With text typed, Ctrl-C drops the text and stays: what follows is a fresh line.
    terminal.type('half typed');
    await terminal.waitFor(/› half typed$/m);
    terminal.keys('C-c');
    terminal.type('mode');
    terminal.keys('Enter');
    await terminal.waitFor('Mode: default (others: default, plan, auto_accept)');
    terminal.keys('C-c');
    await terminal.waitFor('[exit 0]');
  });

  it('clear wipes the screen and the chat goes on', async () => {
    const terminal = await openChat();
    terminal.type('clear');
    terminal.keys('Enter');
    await terminal.waitFor(/› clear\n/);
    await expect.poll(() => terminal.visible()).toBe('mada [default] ›');
    terminal.type('mode');
    terminal.keys('Enter');
    await terminal.waitFor('Mode: default (others');
  });

  it('Ctrl-D leaves and says how to resume', async () => {
    const terminal = await openChat();
    terminal.keys('C-d');
    const screen = await terminal.waitFor('[exit 0]');
    expect(screen).toMatch(/Resume with: mada chat --resume [0-9a-f-]{36}/);
  });

  it('shows the mode in the prompt and cd starts a session in the new directory', async () => {
    const terminal = await openChat(['--mode', 'plan']);
    expect(terminal.lastLine()).toMatch(/mada \[plan\] ›/);
    terminal.type('mode default');
    terminal.keys('Enter');
    await terminal.waitFor(/mada \[default\] ›$/m);
    terminal.type('cd beta');
    terminal.keys('Enter');
    const screen = await terminal.waitFor(/New session \S+ \(the previous one, \S+, can be resumed\)/);
    expect(screen).toContain(`Working directory: ${join(workspace, 'beta')}`);
  });

  it('asks before starting in auto_accept, and starts only on yes', async () => {
    const declined = await openChat(['--mode', 'auto_accept'], {}, 'Continue in auto_accept mode? [y/N]');
    expect(declined.screen()).toContain('auto_accept lets the agent edit files and run commands without asking.');
    declined.type('n');
    declined.keys('Enter');
    expect(await declined.waitFor('[exit 1]')).toContain('Not started: auto_accept was not confirmed');

    const accepted = await openChat(['--mode', 'auto_accept'], {}, 'Continue in auto_accept mode? [y/N]');
    accepted.type('y');
    accepted.keys('Enter');
    await accepted.waitFor(/New session[\s\S]*mada \[auto_accept\] ›/);
  });
});
