import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted } from '@mada/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, cliCommand, runMada, tempDir } from './support/cli-process.js';
import { startServiceWithModel, type ServiceWithModel } from './support/service.js';
import { TmuxTerminal } from './support/tmux.js';

let running: ServiceWithModel;
let workspace: string;
const terminals: TmuxTerminal[] = [];

beforeAll(async () => {
  running = await startServiceWithModel();
  workspace = running.service.workspace;
});

afterAll(async () => {
  await running?.stop();
});

afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  expect(running.model.remaining).toBe(0);
});

const rm = (name: string) => scripted.toolCalls({ name: 'bash', arguments: { command: `rm ${name}` } });
const mada = (args: string[]) => runMada([...args, '-a', running.service.url], { home: tempDir('mada-cli-home-') });

async function until<T>(probe: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await probe();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('approvals in the client', () => {
  it('asks in the chat, runs the command after y, and says so', async () => {
    writeFileSync(join(workspace, 'victim.txt'), 'x');
    running.model.push(rm('victim.txt'), scripted.text('The file is gone.'));
    const terminal = TmuxTerminal.start(cliCommand(['chat', '-a', running.service.url, '-d', workspace]), childEnv(tempDir('mada-cli-home-')), workspace);
    terminals.push(terminal);
    await terminal.waitFor(/mada \[default\] ›/);
    terminal.type('remove victim.txt');
    terminal.keys('Enter');
    const asked = await terminal.waitFor('Allow? [y]es / [n]o / [a]lways');
    expect(asked).toContain('Approval needed bash: rm victim.txt');
    expect(existsSync(join(workspace, 'victim.txt'))).toBe(true);
    terminal.type('y');
    terminal.keys('Enter');
    await terminal.waitFor(/The file is gone\.[\s\S]*mada \[default\] ›/);
    expect(existsSync(join(workspace, 'victim.txt'))).toBe(false);
  });

  it('marks a call refused with n by a red ✗, not a ✔', async () => {
    writeFileSync(join(workspace, 'spared.txt'), 'x');
    running.model.push(rm('spared.txt'), scripted.text('Kept it.'));
    const terminal = TmuxTerminal.start(cliCommand(['chat', '-a', running.service.url, '-d', workspace]), childEnv(tempDir('mada-cli-home-')), workspace);
    terminals.push(terminal);
    await terminal.waitFor(/mada \[default\] ›/);
    terminal.type('remove spared.txt');
    terminal.keys('Enter');
    await terminal.waitFor('Allow? [y]es / [n]o / [a]lways');
    terminal.type('n');
    terminal.keys('Enter');
    const screen = await terminal.waitFor(/Kept it\.[\s\S]*mada \[default\] ›/);
    expect(screen).toContain('✗ bash rm spared.txt · Denied by the user');
    expect(screen).not.toContain('✔ bash');
    // tmux writes red as SGR 31, whatever form the program used, with a background reset that says nothing.
    expect(terminal.coloured().replaceAll('\u001b[49m', '')).toContain('\u001b[31m✗');
    expect(existsSync(join(workspace, 'spared.txt'))).toBe(true);
  });

  it('takes the question back when the approval is answered from another terminal', async () => {
    writeFileSync(join(workspace, 'shared.txt'), 'x');
    running.model.push(rm('shared.txt'), scripted.text('Removed it.'));
    const terminal = TmuxTerminal.start(cliCommand(['chat', '-a', running.service.url, '-d', workspace]), childEnv(tempDir('mada-cli-home-')), workspace);
    terminals.push(terminal);
    await terminal.waitFor(/mada \[default\] ›/);
    terminal.type('remove shared.txt');
    terminal.keys('Enter');
    await terminal.waitFor('Allow? [y]es / [n]o / [a]lways');
    const listed = await until(() => mada(['approvals']), (r) => r.stdout.includes('rm shared.txt'));
    // A unique prefix of 8 characters or more, as `mada runs` shows ids, taken back as it is shown.
    const id = /^([0-9a-f-]{8,35}) {2}bash: rm shared\.txt$/m.exec(listed.stdout)?.[1];
    expect(listed.stdout).toMatch(/^ {2}run [0-9a-f-]{8,35} · /m);
    const approved = await mada(['approve', id!]);
    expect(approved).toMatchObject({ code: 0, stdout: 'Approved: bash: rm shared.txt\n' });
    // No key pressed in the chat: it notices by itself and the run goes on to its answer.
    await terminal.waitFor(/Answered elsewhere \(or it expired\)\.[\s\S]*Removed it\.[\s\S]*mada \[default\] ›/);
    expect(existsSync(join(workspace, 'shared.txt'))).toBe(false);
  });

  it('lists a waiting approval with `mada approvals` and refuses it with `mada deny <id> <message>`', async () => {
    writeFileSync(join(workspace, 'keep.txt'), 'x');
    running.model.push(rm('keep.txt'), scripted.text('Left it alone.'));
    const started = await fetch(`${running.service.url}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent_type: 'task', prompt: 'remove keep.txt', working_dir: '.' }),
    });
    const run = (await started.json()) as { id: string };
    const listed = await until(() => mada(['approvals']), (r) => r.stdout.includes('rm keep.txt'));
    expect(listed.code).toBe(0);
    const id = /^([0-9a-f-]{8,35}) {2}bash: rm keep\.txt$/m.exec(listed.stdout)?.[1];
    expect(id).toBeDefined();
    expect(run.id.startsWith(listed.stdout.match(/^ {2}run ([0-9a-f-]+) · /m)![1]!)).toBe(true);
    const denied = await mada(['deny', id!, 'not', 'today']);
    expect(denied).toMatchObject({ code: 0, stdout: 'Denied: bash: rm keep.txt\n' });
    const ended = await until(
      async () => (await (await fetch(`${running.service.url}/runs/${run.id}`)).json()) as { status: string; response: string | null },
      (r) => r.status === 'succeeded',
    );
    expect(ended.response).toBe('Left it alone.');
    expect(running.model.requests.at(-1)?.messages.filter((m) => m.role === 'tool').at(-1)?.content).toBe('Denied by the user: not today');
    expect(existsSync(join(workspace, 'keep.txt'))).toBe(true);
    const again = await mada(['approve', id!]);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('Approval already decided');
    expect((await mada(['approvals'])).stdout).toBe('No approvals waiting.\n');
  });
});
