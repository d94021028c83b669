import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bashTool } from '../../../src/tools/bash.js';
import { bashReadonlyTool } from '../../../src/tools/bash-readonly.js';
import { createProject, git, testSettings, toolContext, type Project } from './support/project.js';

let project: Project;
beforeEach(() => {
  project = createProject();
});
afterEach(() => project.cleanup());

async function bash(command: string, settings = testSettings(), timeout = 60) {
  return bashTool.execute(bashTool.parameters.parse({ command, timeout }), toolContext(project, { settings }));
}

describe('benign work inside the sandbox', () => {
  it('runs plain git status, diff, log and commit', async () => {
    writeFileSync(join(project.root, 'notes.txt'), 'alpha\nchanged\n');
    const diff = await bash('git diff');
    // A plain `git diff` failed with "external diff died" when diff.external was forced empty.
    expect(diff.error).toBe('');
    expect(diff.data).toContain('+changed');
    expect((await bash('git status --short')).data).toContain('M notes.txt');
    expect((await bash('git commit -qam "second commit" && git log --oneline')).data).toContain('second commit');
    expect(diff.metadata.confined).toBe(true);
  });

  it('runs git diff and git log -p in bash_readonly', async () => {
    writeFileSync(join(project.root, 'notes.txt'), 'alpha\nchanged\n');
    const context = toolContext(project);
    const diff = await bashReadonlyTool.execute(bashReadonlyTool.parameters.parse({ command: 'git diff' }), context);
    expect(diff).toMatchObject({ success: true });
    expect(diff.data).toContain('+changed');
    const log = await bashReadonlyTool.execute(bashReadonlyTool.parameters.parse({ command: 'git log -p -1' }), context);
    expect(log.data).toContain('initial commit');
  });

  it('runs python scripts, pytest and npm test', { timeout: 60_000 }, async () => {
    writeFileSync(join(project.root, 'test_sample.py'), 'def test_adds():\n    assert 1 + 1 == 2\n');
    writeFileSync(join(project.root, 'package.json'), JSON.stringify({ name: 'demo', version: '1.0.0', scripts: { test: 'node -e "console.log(40 + 2)"' } }));
    expect((await bash('python3 main.py')).data).toBe('hello from main');
    const pytest = await bash('pytest -q -p no:cacheprovider test_sample.py');
    expect(pytest.error).toBe('');
    expect(pytest.data).toContain('1 passed');
    const npm = await bash('npm test');
    expect(npm.error).toBe('');
    expect(npm.data).toContain('42');
  });

  it('extracts tar and zip archives inside the work tree', async () => {
    const result = await bash('mkdir extract && tar -xf archive.tar -C extract && unzip -o bundle.zip -d unzipped && ls extract/src unzipped');
    expect(result.error).toBe('');
    expect(result.data).toContain('app.ts');
    expect(result.data).toContain('notes.txt');
  });
});

describe('protected files', () => {
  it('undoes a change the sandbox could not block and says so (here: the sandbox is disabled)', async () => {
    const config = join(project.root, '.git', 'config');
    const before = readFileSync(config, 'utf8');
    const result = await bash(`python3 -c "open('.git/config', 'a').write('[core]\\\\n\\\\tfsmonitor = touch /tmp/x\\\\n')"`, testSettings({ sandboxEnabled: false }));
    expect(result.success).toBe(false);
    expect(result.error).toContain(`[protected files were changed and have been restored: ${config}]`);
    expect(result.metadata.restored_protected_files).toEqual([config]);
    expect(readFileSync(config, 'utf8')).toBe(before);
  });

  it('refuses git config writes: the repository config is protected', async () => {
    const result = await bash('git config user.name Mallory');
    expect(result.error).toBe('Command not allowed: git config only reads here: the repository config is protected');
  });
});

describe('fail closed', () => {
  it('refuses both shell tools when the sandbox is enabled but bubblewrap is missing', async () => {
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      const context = toolContext(project);
      for (const tool of [bashTool, bashReadonlyTool]) {
        const result = await tool.execute(tool.parameters.parse({ command: 'ls' }), context);
        expect(result).toMatchObject({
          success: false,
          error: 'Shell tools need the sandbox (bubblewrap), which is not available: bubblewrap (bwrap) is not installed',
        });
      }
    } finally {
      process.env.PATH = path;
    }
  });
});

describe('two bash commands on one repository at once', () => {
  it('never keeps a hook or config one planted as the original the other puts back', { timeout: 60_000 }, async () => {
    // As the sandbox could not block them (it is disabled here): A plants a hook and a setting and
    // holds until B runs, so B's snapshot is taken after A planted; B ends after A.
    const settings = testSettings({ sandboxEnabled: false });
    const config = join(project.root, '.git', 'config');
    const hook = join(project.root, '.git', 'hooks', 'pre-commit');
    const before = readFileSync(config, 'utf8');
    const waitFor = (name: string) => `t = time.time()\nwhile not os.path.exists('${name}') and time.time() - t < 30: time.sleep(0.02)`;
    const plant = [
      'import os, time',
      "open('.git/hooks/pre-commit', 'w').write('#!/bin/sh\\\\ncurl planted | sh\\\\n')",
      "open('.git/config', 'a').write('[core]\\\\n\\\\tfsmonitor = touch /tmp/planted\\\\n')",
      "open('planted', 'w').write('')",
      waitFor('b-runs'),
    ].join('\n');
    const a = bash(`python3 -c "${plant}"`, settings);
    const planted = join(project.root, 'planted');
    for (let waited = 0; !existsSync(planted) && waited < 30_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(existsSync(planted)).toBe(true);
    const b = bash(`python3 -c "import os, time\nopen('b-runs', 'w').write('')\ntime.sleep(0.5)\n${waitFor('a-ended')}"`, settings);
    const first = await a;
    expect(first.metadata.restored_protected_files).toEqual([config, hook]);
    writeFileSync(join(project.root, 'a-ended'), '');
    const second = await b;
    expect(existsSync(hook)).toBe(false);
    expect(readFileSync(config, 'utf8')).toBe(before);
    // B found the files as they were before A, so it had nothing to put back.
    expect(second.metadata.restored_protected_files).toBeUndefined();
  });

  it('leaves no hook planted in a nested repository by a command whose sandbox let it write there', { timeout: 60_000 }, async () => {
    const sub = join(project.root, 'sub');
    git(project.root, 'init', '-q', 'sub');
    const hook = join(sub, '.git', 'hooks', 'pre-commit');
    // The first command takes the census, with `sub` in it, as the user left it.
    expect((await bash('ls')).error).toBe('');
    const waitFor = (name: string) => `t = time.time()\nwhile not os.path.exists('${name}') and time.time() - t < 30: time.sleep(0.02)`;
    // A runs in the outer repository: `sub`'s hooks are not among its protected paths, so it can
    // plant one; B runs in `sub` and takes its snapshot meanwhile.
    const plant = ['import os, time', "open('sub/.git/hooks/pre-commit', 'w').write('#!/bin/sh\\\\ncurl planted | sh\\\\n')", "open('planted', 'w').write('')", waitFor('b-runs')].join('\n');
    const a = bash(`python3 -c "${plant}"`);
    const planted = join(project.root, 'planted');
    for (let waited = 0; !existsSync(planted) && waited < 30_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(existsSync(planted)).toBe(true);
    const b = bashTool.execute(bashTool.parameters.parse({ command: `python3 -c "import os, time\nopen('../b-runs', 'w').write('')\n${waitFor('../a-ended')}"`, cwd: 'sub', timeout: 60 }), toolContext(project));
    await a;
    writeFileSync(join(project.root, 'a-ended'), '');
    await b;
    expect(existsSync(hook)).toBe(false);
  });
});
