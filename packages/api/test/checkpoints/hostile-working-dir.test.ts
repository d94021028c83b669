import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';

let model: ScriptedModel;
let t: TestApp;

beforeEach(async () => {
  model = await startScriptedModel();
  t = await createTestApp({ model: { url: model.url } });
});
afterEach(async () => {
  await t.close();
  await model.close();
});

const summary = scripted.text('Done.\n## Summary\n- Accomplished: edit\n- Files modified: a.txt\n- Commands run: none\n- Issues: none');

async function editRun(): Promise<string> {
  model.push(scripted.toolCalls({ name: 'edit_file', arguments: { file_path: join(t.workdir, 'a.txt'), old_string: 'old', new_string: 'new' } }), summary);
  const response = await t.app.inject({ method: 'POST', url: '/agents/run', payload: { agent_type: 'task', prompt: 'Edit.', mode: 'auto_accept' } });
  return response.headers['x-run-id'] as string;
}

/**
 * A repository written by an attacker: its config names programs for every hook git offers (a
 * clean/smudge filter, a textconv and external diff driver, fsmonitor, hooks), and its
 * attributes apply them to every file. Each program would create the canary.
 */
function plantHostileRepository(dir: string, canary: string): void {
  execFileSync('git', ['init', '-q', dir]);
  const run = `touch ${canary}; cat`;
  const config = [
    '[core]',
    `\tfsmonitor = "touch ${canary}; echo"`,
    `\thooksPath = hooks`,
    `\tpager = touch ${canary}`,
    '[filter "evil"]',
    `\tclean = "${run}"`,
    `\tsmudge = "${run}"`,
    '\trequired = true',
    '[diff "evil"]',
    `\ttextconv = "${run}"`,
    `\tcommand = "touch ${canary}"`,
    '[diff]',
    `\texternal = "touch ${canary}"`,
  ].join('\n');
  writeFileSync(join(dir, '.git', 'config'), `${readFileSync(join(dir, '.git', 'config'), 'utf8')}\n${config}\n`);
  mkdirSync(join(dir, 'hooks'), { recursive: true });
  for (const hook of ['pre-commit', 'post-checkout', 'reference-transaction', 'post-index-change']) {
    writeFileSync(join(dir, 'hooks', hook), `#!/bin/sh\ntouch ${canary}\n`);
    chmodSync(join(dir, 'hooks', hook), 0o755);
  }
  writeFileSync(join(dir, '.gitattributes'), '* filter=evil diff=evil\n');
}

describe('a hostile working directory', () => {
  it('cannot make the shadow git run anything, though the same repository makes plain git run its programs', async () => {
    const canary = join(t.settings.dataDir, '..', 'canary-checkpoints');
    plantHostileRepository(t.workdir, canary);
    writeFileSync(join(t.workdir, 'a.txt'), 'old\n');

    const id = await editRun();
    const changes = await t.app.inject({ method: 'GET', url: `/runs/${id}/changes` });
    expect(changes.json().files).toEqual([{ path: 'a.txt', change: 'modified', additions: 1, deletions: 1 }]);
    expect(changes.json().diff).toContain('-old\n+new\n');
    const reverted = await t.app.inject({ method: 'POST', url: `/runs/${id}/revert`, payload: {} });
    expect(reverted.json()).toEqual({ reverted: ['a.txt'] });
    expect(readFileSync(join(t.workdir, 'a.txt'), 'utf8')).toBe('old\n');
    expect(existsSync(canary)).toBe(false);
    // The user's own repository was neither read into the snapshot nor written.
    expect(existsSync(join(t.workdir, '.git', 'index'))).toBe(false);
    expect(readdirSync(join(t.workdir, '.git', 'refs', 'heads'))).toEqual([]);
  });

  it('proves the trap is real: plain git in that directory runs the planted filter', () => {
    const canary = join(t.settings.dataDir, '..', 'canary-plain');
    plantHostileRepository(t.workdir, canary);
    writeFileSync(join(t.workdir, 'a.txt'), 'old\n');
    execFileSync('git', ['-C', t.workdir, 'add', 'a.txt'], { env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null' } });
    expect(existsSync(canary)).toBe(true);
  });
});

/** A run whose one bash command runs `python` code in the working directory. */
async function pythonRun(code: string): Promise<string> {
  model.push(scripted.toolCalls({ name: 'bash', arguments: { command: `python3 -c "${code}"` } }), summary);
  const response = await t.app.inject({ method: 'POST', url: '/agents/run', payload: { agent_type: 'task', prompt: 'Tidy.', mode: 'auto_accept' } });
  return response.headers['x-run-id'] as string;
}

describe('a symlink planted where a directory stood', () => {
  let outside: string;
  beforeEach(() => {
    outside = mkdtempSync(join(tmpdir(), 'mada-outside-'));
    mkdirSync(join(t.workdir, 'sub', 'deep'), { recursive: true });
    writeFileSync(join(t.workdir, 'sub', 'deep', 'a.txt'), 'old\n');
  });
  afterEach(() => rmSync(outside, { recursive: true, force: true }));

  const revertedIntoRealDirectory = async (id: string): Promise<void> => {
    const plain = await t.app.inject({ method: 'POST', url: `/runs/${id}/revert`, payload: {} });
    expect(plain.json()).toEqual({ detail: 'Files changed since the run: sub/deep/a.txt' });
    const forced = await t.app.inject({ method: 'POST', url: `/runs/${id}/revert`, payload: { force: true } });
    expect(forced.json()).toEqual({ reverted: ['sub/deep/a.txt'] });
    expect(readdirSync(outside), 'the revert made something outside the working directory').toEqual([]);
    expect(lstatSync(join(t.workdir, 'sub')).isDirectory()).toBe(true);
    expect(readFileSync(join(t.workdir, 'sub', 'deep', 'a.txt'), 'utf8')).toBe('old\n');
  };

  it('by the run itself: the run still has its checkpoint, and the revert puts a directory back', async () => {
    const id = await pythonRun(`import shutil, os; shutil.rmtree('sub'); os.symlink('${outside}', 'sub')`);
    const changes = await t.app.inject({ method: 'GET', url: `/runs/${id}/changes` });
    expect(changes.json().files).toEqual([{ path: 'sub/deep/a.txt', change: 'deleted', additions: 0, deletions: 1 }]);
    await revertedIntoRealDirectory(id);
  });

  it('after the run: the revert never makes directories through it', async () => {
    const id = await pythonRun(`import os; os.remove('sub/deep/a.txt')`);
    rmSync(join(t.workdir, 'sub'), { recursive: true });
    symlinkSync(outside, join(t.workdir, 'sub'));
    await revertedIntoRealDirectory(id);
  });
});

describe('a snapshot that fails', () => {
  it('never fails the run; its changes answer 409 with the reason', async () => {
    mkdirSync(t.settings.dataDir, { recursive: true });
    // Where the shadow repositories would go, a file: every snapshot fails.
    writeFileSync(join(t.settings.dataDir, 'checkpoints'), 'in the way');
    writeFileSync(join(t.workdir, 'a.txt'), 'old\n');
    const id = await editRun();
    const run = await t.app.inject({ method: 'GET', url: `/runs/${id}` });
    expect(run.json().status).toBe('succeeded');
    expect(readFileSync(join(t.workdir, 'a.txt'), 'utf8')).toBe('new\n');
    const changes = await t.app.inject({ method: 'GET', url: `/runs/${id}/changes` });
    expect(changes.statusCode).toBe(409);
    expect(changes.json().detail).toMatch(/^No checkpoint for this run: the snapshot before the run failed: /);
  });
});
