import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted } from '@mada/testkit';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { childEnv, cliCommand, runMada, tempDir } from './support/cli-process.js';
import { startServiceWithModel, type ServiceWithModel } from './support/service.js';
import { TmuxTerminal } from './support/tmux.js';

let running: ServiceWithModel;
let home: string;
let workspace: string;

beforeAll(async () => {
  running = await startServiceWithModel();
  workspace = running.service.workspace;
});

afterAll(async () => {
  await running?.stop();
});

beforeEach(() => {
  home = tempDir('mada-cli-home-');
  writeFileSync(join(workspace, 'notes.txt'), 'first\nsecond\n');
});

const summary = scripted.text('Done.\n## Summary\n- Accomplished: edit\n- Files modified: notes.txt\n- Commands run: none\n- Issues: none');

function scriptEdit(): void {
  running.model.push(
    scripted.toolCalls({ name: 'edit_file', arguments: { file_path: join(workspace, 'notes.txt'), old_string: 'second', new_string: 'SECOND' } }),
    summary,
  );
}

/** Runs the scripted edit to its end; the run's id. */
async function runEdit(): Promise<string> {
  scriptEdit();
  const response = await fetch(`${running.service.url}/agents/run`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ agent_type: 'task', prompt: 'Edit.', working_dir: workspace, mode: 'auto_accept' }),
  });
  return response.headers.get('x-run-id')!;
}

describe('mada diff and mada revert', () => {
  it('print a run\'s changes plain when piped, revert them, and refuse a second revert without --force', async () => {
    const runId = await runEdit();

    const diff = await runMada(['diff', runId, '-a', running.service.url], { home });
    expect(diff.code).toBe(0);
    expect(diff.stdout).toContain('modified notes.txt (+1 -1)');
    expect(diff.stdout).toContain('-second\n+SECOND\n');
    expect(diff.stdout).not.toContain('\u001b[');

    const revert = await runMada(['revert', runId, '-a', running.service.url], { home });
    expect(revert).toMatchObject({ code: 0, stdout: 'Reverted 1 file(s): notes.txt\n' });
    expect(readFileSync(join(workspace, 'notes.txt'), 'utf8')).toBe('first\nsecond\n');

    const again = await runMada(['revert', runId, '-a', running.service.url], { home });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('Files changed since the run: notes.txt');
    const forced = await runMada(['revert', runId, '--force', '-a', running.service.url], { home });
    expect(forced.code).toBe(0);
  });
});

describe('mada diff on a terminal', () => {
  it('colours the diff as git diff does: removals red, additions green, hunk headers cyan', async () => {
    const runId = await runEdit();
    const terminal = TmuxTerminal.start(cliCommand(['diff', runId, '-a', running.service.url]), childEnv(home), workspace);
    try {
      await terminal.waitFor('[exit 0]');
      // tmux writes the colours in its own SGR form (1 bold, 31 red, 32 green, 36 cyan), with a
      // background reset here and there that says nothing about the colour.
      const sgr = (code: number): string => `\u001b[${code}m`;
      const screen = terminal.coloured().replaceAll(sgr(49), '');
      expect(screen).toContain(`${sgr(1)}diff --git a/notes.txt`);
      expect(screen).toContain(`${sgr(36)}@@ -1,2 +1,2 @@`);
      expect(screen).toContain(`${sgr(31)}-second\n`);
      expect(screen).toContain(`${sgr(32)}+SECOND\n`);
      expect(terminal.screen()).toContain('modified notes.txt (+1 -1)');
    } finally {
      terminal.kill();
    }
  });
});

describe('/diff and /undo in chat', () => {
  it('act on the last run of the session', async () => {
    scriptEdit();
    const result = await runMada(['chat', '-a', running.service.url, '-d', workspace, '--mode', 'auto_accept'], { home, input: 'y\nEdit the notes.\n/diff\n/undo\n' });
    expect(result.stdout).toContain('-second\n+SECOND\n');
    expect(result.stdout).toContain('Reverted 1 file(s): notes.txt');
    expect(readFileSync(join(workspace, 'notes.txt'), 'utf8')).toBe('first\nsecond\n');
    expect(existsSync(join(workspace, 'notes.txt'))).toBe(true);
  });

  it('says so when the session has no run yet', async () => {
    const result = await runMada(['chat', '-a', running.service.url, '-d', workspace], { home, input: '/diff\n' });
    expect(result.stdout).toContain('No run yet in this session.');
  });
});
