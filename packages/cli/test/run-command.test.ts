import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { scripted } from '@mada/testkit';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { childEnv, cliCommand, runMada, tempDir } from './support/cli-process.js';
import { startServiceWithModel, type ServiceWithModel } from './support/service.js';
import { TmuxTerminal } from './support/tmux.js';

let running: ServiceWithModel;
let workspace: string;
let home: string;
const terminals: TmuxTerminal[] = [];

beforeAll(async () => {
  running = await startServiceWithModel();
  workspace = running.service.workspace;
  writeFileSync(join(workspace, 'notes.txt'), 'the answer is 42\n');
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

const SLOW = 60_000;
const quote = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;

function readThenAnswer(answer: string): void {
  running.model.push(scripted.toolCalls({ name: 'read_file', arguments: { file_path: join(workspace, 'notes.txt') } }), scripted.text(answer));
}

const mada = (args: string[]) => runMada(['run', ...args, '-a', running.service.url, '-d', workspace], { home, timeoutMs: 30_000 });

describe('mada run', () => {
  it('leaves only the answer in a file its stdout is sent to, progress on stderr, exit 0', async () => {
    readThenAnswer('The notes say **42**.');
    const out = join(home, 'out.txt');
    const command = [...cliCommand(['run', 'what do the notes say?', '-a', running.service.url, '-d', workspace])].map(quote).join(' ');
    const { stderr } = await promisify(execFile)('sh', ['-c', `${command} > ${quote(out)}`], { env: childEnv(home), cwd: home, timeout: 30_000 });
    expect(readFileSync(out, 'utf8')).toBe('The notes say **42**.\n');
    expect(stderr).toMatch(/^Run [0-9a-f-]{36} · agent task · mode default · /);
    expect(stderr).toContain('✓ read_file: 1 the answer is 42');
  }, SLOW);

  it('prints the run events as JSON lines with --json', async () => {
    readThenAnswer('Forty-two.');
    const result = await mada(['--json', 'what', 'do', 'the', 'notes', 'say?']);
    expect(result.code, result.stderr).toBe(0);
    const frames = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(frames[0]).toEqual({ event: 'tool_start', tool: 'read_file', args: expect.objectContaining({ file_path: join(workspace, 'notes.txt') }) as unknown });
    expect(frames[1]).toMatchObject({ event: 'tool_done', tool: 'read_file', outcome: 'ok' });
    expect(frames.filter((frame) => frame.event === 'response').map((frame) => frame.text).join('')).toBe('Forty-two.');
    expect(frames.at(-1)).toEqual({ event: 'done', mode: 'default' });
  }, SLOW);

  it('exits 1 with nothing on stdout when the run fails', async () => {
    running.model.push(scripted.httpError(400, 'the runtime fell over'));
    const result = await mada(['say something']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/mada: The run did not succeed: .+; `mada runs` shows it; `mada attach [0-9a-f-]{36}` replays it\n$/);
  }, SLOW);

  it('refuses a call that needs approval at once when stdin is not a terminal, and goes on', async () => {
    writeFileSync(join(workspace, 'keep.txt'), 'x');
    running.model.push(scripted.toolCalls({ name: 'bash', arguments: { command: 'rm keep.txt' } }), scripted.text('Could not remove it.'));
    const result = await mada(['remove keep.txt']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('Could not remove it.\n');
    expect(result.stderr).toContain('✗ bash: Needs approval, and this run cannot wait for it (on_ask=deny)');
    expect(existsSync(join(workspace, 'keep.txt'))).toBe(true);
  }, SLOW);

  it('asks on the terminal when stdin is one, while stdout goes to a file', async () => {
    writeFileSync(join(workspace, 'gone.txt'), 'x');
    running.model.push(scripted.toolCalls({ name: 'bash', arguments: { command: 'rm gone.txt' } }), scripted.text('Removed.'));
    const out = join(home, 'out.txt');
    const command = cliCommand(['run', 'remove gone.txt', '-a', running.service.url, '-d', workspace]).map(quote).join(' ');
    const terminal = TmuxTerminal.start(['sh', '-c', `${command} > ${quote(out)}`], childEnv(home), workspace);
    terminals.push(terminal);
    const asked = await terminal.waitFor('Allow? [y]es / [n]o / [a]lways', 30_000);
    expect(asked).toContain('Approval needed bash: rm gone.txt');
    terminal.type('y');
    terminal.keys('Enter');
    await terminal.waitFor('[exit 0]', 30_000);
    expect(readFileSync(out, 'utf8')).toBe('Removed.\n');
    expect(existsSync(join(workspace, 'gone.txt'))).toBe(false);
  }, SLOW);

  it('refuses an empty prompt as a usage error', async () => {
    const empty = await mada(['  ']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toBe('mada: The prompt is empty; mada run "<what the agent should do>"\n');
  });
});
