import { execFileSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bashTool } from '../../../src/tools/bash.js';
import { RepositoryCensus } from '../../../src/tools/sandbox/repository-census.js';
import { createToolHost } from '../../../src/tools/tool-host.js';
import type { ToolResult } from '../../../src/tools/tool.js';
import { writeFileTool } from '../../../src/tools/write-file.js';
import { createProject, git, toolContext, type Project } from './support/project.js';

/*
 * Red-team attacks on the repository census (repository-census.ts, git-config-filter.ts): a `bash`
 * command (python here) leaves something in a git repository under the allowed paths that would
 * run code the next time the user runs git there, outside the sandbox. Each test asserts the safe
 * outcome, judged by the user's own git run outside the sandbox where it can be: the marker file a
 * planted program would make does not appear.
 */

let project: Project;

beforeEach(() => {
  project = createProject();
  repository('vendor/lib');
  // The program a planted hook or fsmonitor setting would run, outside the sandbox.
  writeFileSync(join(project.outside, 'evil.sh'), `#!/bin/sh\ntouch ${marker()}\n`, { mode: 0o755 });
});

afterEach(() => project.cleanup());

const marker = (): string => join(project.outside, 'pwned');
const evil = (): string => join(project.outside, 'evil.sh');
const path = (relative: string): string => join(project.root, relative);
const bash = (command: string, cwd?: string): Promise<ToolResult> => bashTool.execute(bashTool.parameters.parse({ command, ...(cwd === undefined ? {} : { cwd }) }), toolContext(project));
/** Runs `code` as a python script the command runs (the script is a plain work-tree file). */
async function python(code: string): Promise<ToolResult> {
  writeFileSync(path('attack.py'), `import os, subprocess\n${code}\n`);
  return bash('python3 attack.py');
}
const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 120));

function repository(relative: string): void {
  mkdirSync(path(relative), { recursive: true });
  git(path(relative), 'init', '-q', '-b', 'main');
  git(path(relative), 'config', 'user.name', 'Nested');
  git(path(relative), 'config', 'user.email', 'nested@example.com');
  writeFileSync(join(path(relative), 'lib.txt'), 'lib\n');
  git(path(relative), 'add', 'lib.txt');
  git(path(relative), 'commit', '-qm', 'lib');
}

const userEnv = (): NodeJS.ProcessEnv => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: project.outside, GIT_CONFIG_NOSYSTEM: '1' });

/** The user's git outside the sandbox; whatever it says, only the marker counts. */
function userGit(cwd: string, ...args: string[]): void {
  try {
    execFileSync('git', args, { cwd, env: userEnv(), stdio: 'ignore' });
  } catch {
    // a failing git is fine; a planted program running is not
  }
}

/**
 * The user's shell in the project, for names that are not UTF-8: Node's text arguments and working
 * directories cannot name them, so the script spells them with printf (`$(printf 'odd\\377')`).
 */
function userShell(script: string): void {
  execFileSync('sh', ['-c', script], { cwd: project.root, env: userEnv(), stdio: 'ignore' });
}

/** userGit in a directory the shell spells (a name that is not UTF-8). */
function userGitIn(spelled: string, ...args: string[]): void {
  try {
    userShell(`cd "$(printf '${spelled}')" && git ${args.join(' ')}`);
  } catch {
    // only the marker counts
  }
}

/** Python lines laying out a git directory at `dir` whose config runs the evil program. */
const layout = (dir: string): string =>
  [
    `os.makedirs(${JSON.stringify(dir)} + '/objects', exist_ok=True)`,
    `os.makedirs(${JSON.stringify(dir)} + '/refs/heads', exist_ok=True)`,
    `os.makedirs(${JSON.stringify(dir)} + '/hooks', exist_ok=True)`,
    `open(${JSON.stringify(dir)} + '/HEAD', 'w').write('ref: refs/heads/main\\n')`,
    `open(${JSON.stringify(dir)} + '/config', 'w').write('[core]\\n\\tfsmonitor = ${evil()}\\n')`,
    `open(${JSON.stringify(dir)} + '/hooks/post-checkout', 'w').write('#!/bin/sh\\ntouch ${marker()}\\n')`,
    `os.chmod(${JSON.stringify(dir)} + '/hooks/post-checkout', 0o755)`,
  ].join('\n');

describe('defended (regression guards)', () => {
  it('a sample hook renamed into place in a known repository is taken out', async () => {
    await python("os.rename('vendor/lib/.git/hooks/pre-commit.sample', 'vendor/lib/.git/hooks/pre-commit')");
    expect(existsSync(path('vendor/lib/.git/hooks/pre-commit'))).toBe(false);
  });

  it('an old executable hard-linked into a known repository hooks is taken out (link changes its ctime)', async () => {
    writeFileSync(path('tool.sh'), `#!/bin/sh\ntouch ${marker()}\n`, { mode: 0o755 });
    await tick();
    await python("os.link('tool.sh', 'vendor/lib/.git/hooks/post-checkout')");
    expect(existsSync(path('vendor/lib/.git/hooks/post-checkout'))).toBe(false);
  });

  it('hooks replaced by a link to an old directory holding a hook is put back', async () => {
    mkdirSync(path('old-hooks'));
    writeFileSync(path('old-hooks/post-checkout'), `#!/bin/sh\ntouch ${marker()}\n`, { mode: 0o755 });
    await tick();
    await python("import shutil\nshutil.rmtree('vendor/lib/.git/hooks')\nos.symlink('../../../old-hooks', 'vendor/lib/.git/hooks')");
    userGit(path('vendor/lib'), 'checkout', '-q', '-b', 'other');
    expect(existsSync(marker())).toBe(false);
  });

  it('config.worktree made in a known repository is taken out', async () => {
    await python(`open('vendor/lib/.git/config.worktree', 'w').write('[core]\\n\\tfsmonitor = ${evil()}\\n')`);
    expect(existsSync(path('vendor/lib/.git/config.worktree'))).toBe(false);
  });

  it('a new repository laid out in the sandbox /tmp and moved into place is cleaned', async () => {
    await python(`${layout('/tmp/r/.git')}\nimport shutil\nshutil.move('/tmp/r', 'moved')`);
    userGit(path('moved'), 'status');
    expect(existsSync(marker())).toBe(false);
  });

  it('a config written twice within the clock tick of the command start is put back', async () => {
    const before = readFileSync(path('vendor/lib/.git/config'), 'utf8');
    await python(`open('vendor/lib/.git/config', 'a').write('[core]\\n\\tfsmonitor = ${evil()}\\n')\nopen('vendor/lib/.git/config', 'a').write('')`);
    expect(readFileSync(path('vendor/lib/.git/config'), 'utf8')).toBe(before);
  });

  it('a repository made inside a directory listed (and cached) by an earlier check is found', async () => {
    expect((await bash('ls')).success).toBe(true);
    await tick();
    await python(`${layout('src/.git')}`);
    userGit(path('src'), 'status');
    expect(existsSync(marker())).toBe(false);
  });
});

describe('attacks', () => {
  it('a new repository config whose comment ends in a backslash hides the next line from the filter', async () => {
    // git ends a comment at the newline whatever precedes it; the filter took the backslash for a
    // continuation and skipped the next line, so nothing was dropped and the text was kept as it was.
    await python(`subprocess.run(['git', 'init', '-q', 'fresh'], check=True)\nopen('fresh/.git/config', 'a').write('[core]\\n\\tbare = false ;\\\\\\n\\tfsmonitor = ${evil()}\\n')`);
    userGit(path('fresh'), 'status');
    expect(existsSync(marker())).toBe(false);
  });

  it('a hooks directory staged by an earlier command and renamed into a known repository is put back', async () => {
    // A rename changes the ctime of the directory moved, not of the files in it: the staged hook
    // keeps the earlier command's ctime, older than this command's start.
    await python("os.makedirs('vendor/stage')\nopen('vendor/stage/post-checkout', 'w').write('#!/bin/sh\\ntouch " + marker() + "\\n')\nos.chmod('vendor/stage/post-checkout', 0o755)");
    await tick();
    await python("import shutil\nshutil.rmtree('vendor/lib/.git/hooks')\nos.rename('vendor/stage', 'vendor/lib/.git/hooks')");
    userGit(path('vendor/lib'), 'checkout', '-q', '-b', 'other');
    expect(existsSync(marker())).toBe(false);
  });

  it('a git directory staged by an earlier command and renamed over a known .git is put back', async () => {
    await python(
      `os.makedirs('vendor/stage/hooks')\nopen('vendor/stage/config', 'w').write('[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = ${evil()}\\n')`,
    );
    await tick();
    await python(
      "for name in ['HEAD', 'objects', 'refs', 'index']:\n    os.rename('vendor/lib/.git/' + name, 'vendor/stage/' + name)\nos.rename('vendor/lib/.git', 'vendor/old')\nos.rename('vendor/stage', 'vendor/lib/.git')",
    );
    userGit(path('vendor/lib'), 'status');
    expect(existsSync(marker())).toBe(false);
  });

  it('a .git link to a gitdir file leading into a known .git (not walked) is cleaned', async () => {
    // git follows a .git link to a regular file and reads it as a gitdir: file; the census only
    // followed a .git link to a directory.
    const hidden = path('vendor/lib/.git/evil');
    await python(`${layout(hidden)}\nos.makedirs('w')\nopen('w/pointer', 'w').write('gitdir: ${hidden}\\n')\nos.symlink('pointer', 'w/.git')`);
    userGit(path('w'), 'status');
    expect(existsSync(marker())).toBe(false);
  });

  it('a gitdir: file whose path ends in a space (kept by git, trimmed by the census) is cleaned', async () => {
    const hidden = path('vendor/lib/.git/evil ');
    await python(`${layout(hidden)}\nos.makedirs('w')\nopen('w/.git', 'w').write('gitdir: ${hidden}')`);
    userGit(path('w'), 'status');
    expect(existsSync(marker())).toBe(false);
  });

  it('a gitdir: file padded past 4 KiB with newlines (git strips them all) is cleaned', async () => {
    const hidden = path('vendor/lib/.git/evil');
    await python(`${layout(hidden)}\nos.makedirs('w')\nopen('w/.git', 'w').write('gitdir: ${hidden}' + '\\n' * 10000)`);
    userGit(path('w'), 'status');
    expect(existsSync(marker())).toBe(false);
  });

  it('a gitdir: file with .. after a link (git resolves it on disk, not by the text) is cleaned', async () => {
    await python(
      `${layout(path('vendor/lib/.git/evil'))}\nos.makedirs('w')\nos.symlink('../vendor/lib/.git/hooks', 'w/lnk')\nopen('w/.git', 'w').write('gitdir: lnk/../evil\\n')`,
    );
    userGit(path('w'), 'status');
    expect(existsSync(marker())).toBe(false);
  });

  it('a .git link with .. after a link (resolved on disk, not by the text) is cleaned', async () => {
    await python(`${layout(path('vendor/lib/.git/evil'))}\nos.makedirs('w')\nos.symlink('../vendor/lib/.git/hooks', 'w/lnk')\nos.symlink('lnk/../evil', 'w/.git')`);
    userGit(path('w'), 'status');
    expect(existsSync(marker())).toBe(false);
  });

  it('a commondir whose path ends in a space (kept by git, trimmed by the census) is cleaned', async () => {
    const hidden = path('vendor/lib/.git/evil ');
    await python(
      `${layout(hidden)}\nos.makedirs('w/.git/refs', exist_ok=True)\nopen('w/.git/HEAD', 'w').write('ref: refs/heads/main\\n')\nopen('w/.git/commondir', 'w').write('${hidden}')`,
    );
    userGit(path('w'), 'status');
    expect(existsSync(marker())).toBe(false);
  });

  it.each([
    ['HEAD and objects are plain (control)', "open('evil.git/HEAD', 'w').write('ref: refs/heads/main\\n')\nos.makedirs('evil.git/objects')"],
    ['HEAD is a link (git takes a HEAD link to refs/)', "os.symlink('refs/heads/main', 'evil.git/HEAD')\nos.makedirs('evil.git/objects')"],
    ['objects is a link to a directory', "open('evil.git/HEAD', 'w').write('ref: refs/heads/main\\n')\nos.makedirs('objs')\nos.symlink('../objs', 'evil.git/objects')"],
  ])('a bare repository whose %s, pushed to by the user, runs no planted hook', async (_name, head) => {
    await python(
      `os.makedirs('evil.git/refs/heads')\nos.makedirs('evil.git/hooks')\n${head}\nopen('evil.git/config', 'w').write('[core]\\n\\tbare = true\\n')\nopen('evil.git/hooks/pre-receive', 'w').write('#!/bin/sh\\ntouch ${marker()}\\n')\nos.chmod('evil.git/hooks/pre-receive', 0o755)`,
    );
    userGit(path('vendor/lib'), 'push', '-q', path('evil.git'), 'main');
    expect(existsSync(marker())).toBe(false);
  });

  it('a hook planted in a repository below a directory with a non-ASCII (UTF-8) name is taken out', async () => {
    // The census finds it; the removal walks held directories by latin1 bytes of the UTF-8 name.
    repository('vendor/café');
    const hook = path('vendor/café/.git/hooks/post-checkout');
    await python(`open('vendor/café/.git/hooks/post-checkout', 'w').write('#!/bin/sh\\ntouch ${marker()}\\n')\nos.chmod('vendor/café/.git/hooks/post-checkout', 0o755)`);
    expect(existsSync(hook)).toBe(false);
  });

  it('a submodule git directory whose name has a slash (modules/a/b) is cleaned', async () => {
    // `git submodule add <url> sub/x` names the submodule sub/x: its git directory is modules/sub/x.
    await python(`${layout(path('vendor/lib/.git/modules/sub/x'))}\nos.makedirs('vendor/lib/sub/x')`);
    // What the user's `git submodule update` would do once the submodule is registered: join the
    // work tree to the git directory found in modules/, then check out there.
    writeFileSync(path('vendor/lib/sub/x/.git'), 'gitdir: ../../.git/modules/sub/x\n');
    userGit(path('vendor/lib/sub/x'), 'status');
    expect(existsSync(marker())).toBe(false);
  });

  it('a submodule git directory nested five deep in modules/ is cleaned', async () => {
    const deep = 'vendor/lib/.git/modules/a/modules/b/modules/c/modules/d/modules/e';
    await python(`${layout(path(deep))}\nos.makedirs('vendor/lib/a/b/c/d/e')`);
    writeFileSync(path('vendor/lib/a/b/c/d/e/.git'), `gitdir: ${path(deep)}\n`);
    userGit(path('vendor/lib/a/b/c/d/e'), 'status');
    expect(existsSync(marker())).toBe(false);
  });

  it('a fresh census taken after the tree was over the cap, while another command still runs, does not trust what that command planted', async () => {
    // Command Y waits; command X makes the tree too big; Y then plants a hook and removes those
    // directories, so the next command's admit takes a fresh census (trusting everything) while Y
    // still runs. Y's own check puts the hook back, but the fresh census holds the planted bytes:
    // a later command writing them again is not put back.
    const CAP = 40;
    const host = { ...createToolHost(), repositories: new RepositoryCensus({ maxDirectories: CAP }) };
    const run = (command: string): Promise<ToolResult> => bashTool.execute(bashTool.parameters.parse({ command }), toolContext(project, { host }));
    const hook = path('vendor/lib/.git/hooks/post-checkout');
    const plant = `open('vendor/lib/.git/hooks/post-checkout', 'w').write('#!/bin/sh\\ntouch ${marker()}\\n')\nos.chmod('vendor/lib/.git/hooks/post-checkout', 0o755)`;
    const waitFor = (name: string): string => `while not os.path.exists('${name}'): time.sleep(0.05)`;
    expect((await run('ls')).success).toBe(true);
    writeFileSync(path('y.py'), `import os, time, shutil\n${waitFor('go')}\n${plant}\nshutil.rmtree('deps')\nopen('removed', 'w').close()\n${waitFor('go2')}\n`);
    writeFileSync(path('x.py'), `import os\nos.makedirs(os.path.join('deps', *(['a'] * ${CAP + 10})))\n`);
    writeFileSync(path('w.py'), `import os\n${plant}\n`);
    const y = run('python3 y.py');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await run('python3 x.py')).metadata.too_many_directories).toBe(true);
    writeFileSync(path('go'), '');
    for (let i = 0; i < 200 && !existsSync(path('removed')); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    await run('ls');
    writeFileSync(path('go2'), '');
    await y;
    await run('python3 w.py');
    expect(existsSync(hook)).toBe(false);
  });
});

describe('names that are not UTF-8 (Node decodes them to U+FFFD, and that text path names nothing on disk)', () => {
  /** A path below the project as the kernel takes it: `relative` is a byte string (`\xff` one byte). */
  const onDisk = (relative: string): Buffer => Buffer.concat([Buffer.from(`${project.root}/`), Buffer.from(relative, 'latin1')]);
  const bytesOf = (relative: string): Buffer | undefined => (existsSync(onDisk(relative)) ? readFileSync(onDisk(relative)) : undefined);

  /** A repository with one commit at the directory the shell spells, made by the user before any command. */
  function spelledRepository(spelled: string): void {
    userShell(
      `mkdir -p "$(printf '${spelled}')" && cd "$(printf '${spelled}')" && git init -q -b main && git config user.name Nested && git config user.email nested@example.com && echo lib > lib.txt && git add lib.txt && git commit -qm lib`,
    );
  }

  it('a repository made during the command below a directory whose name is not UTF-8 is cleaned, and the result names it byte by byte', async () => {
    const result = await python(`os.makedirs(b'odd\\xff')\nos.chdir(b'odd\\xff')\n${layout('inner/.git')}`);
    userGitIn('odd\\377/inner', 'status');
    expect(existsSync(marker())).toBe(false);
    expect(bytesOf('odd\xff/inner/.git/hooks/post-checkout')).toBeUndefined();
    expect(result.success).toBe(false);
    expect(result.metadata.removed_from_new_repositories).toContain(`${project.root}/odd\\xff/inner/.git/hooks/post-checkout`);
  });

  it('a known repository nested below a directory whose name is not UTF-8 gets its hook and config back', async () => {
    spelledRepository('vendor/odd\\377/lib');
    const config = bytesOf('vendor/odd\xff/lib/.git/config');
    const git = "b'vendor/odd\\xff/lib/.git'";
    await python(
      `open(${git} + b'/config', 'a').write('[core]\\n\\tfsmonitor = ${evil()}\\n')\nopen(${git} + b'/hooks/post-checkout', 'w').write('#!/bin/sh\\ntouch ${marker()}\\n')\nos.chmod(${git} + b'/hooks/post-checkout', 0o755)`,
    );
    expect(bytesOf('vendor/odd\xff/lib/.git/config')).toEqual(config);
    expect(bytesOf('vendor/odd\xff/lib/.git/hooks/post-checkout')).toBeUndefined();
    userGitIn('vendor/odd\\377/lib', 'checkout', '-q', '-b', 'other');
    expect(existsSync(marker())).toBe(false);
  });

  it('a known repository whose own directory name is not UTF-8 gets its config back', async () => {
    spelledRepository('lib\\376');
    const config = bytesOf('lib\xfe/.git/config');
    const result = await python(`open(b'lib\\xfe/.git/config', 'a').write('[core]\\n\\tfsmonitor = ${evil()}\\n')`);
    expect(bytesOf('lib\xfe/.git/config')).toEqual(config);
    expect(result.metadata.restored_protected_files).toEqual([`${project.root}/lib\\xfe/.git/config`]);
    userGitIn('lib\\376', 'status');
    expect(existsSync(marker())).toBe(false);
  });

  it('a bare repository whose name is not UTF-8, made during the command, runs no planted hook when pushed to', async () => {
    // Python's str paths carry a byte that is not UTF-8 as a lone surrogate (surrogateescape).
    const bare = "'evil\\udcff.git'";
    await python(`${layout('evil\udcff.git')}\nos.rename(${bare} + '/hooks/post-checkout', ${bare} + '/hooks/pre-receive')\nopen(${bare} + '/config', 'w').write('[core]\\n\\tbare = true\\n')`);
    userShell(`git -C vendor/lib push -q "$(printf '${project.root}/evil\\377.git')" main || true`);
    expect(existsSync(marker())).toBe(false);
  });

  it('a gitdir: file naming a git directory whose name is not UTF-8 (inside a known .git, not walked) is cleaned', async () => {
    const hidden = `${path('vendor/lib/.git/evil')}\udcff`;
    await python(`${layout(hidden)}\nos.makedirs('w')\nopen('w/.git', 'wb').write(b'gitdir: ' + os.fsencode(${JSON.stringify(hidden)}) + b'\\n')`);
    userGit(path('w'), 'status');
    expect(existsSync(marker())).toBe(false);
  });

  it('write_file refuses a hard link to the config of a repository below a directory whose name is not UTF-8', async () => {
    spelledRepository('odd\\377/lib');
    const config = bytesOf('odd\xff/lib/.git/config');
    linkSync(onDisk('odd\xff/lib/.git/config'), path('innocent.txt'));
    const result = await writeFileTool.execute(writeFileTool.parameters.parse({ file_path: 'innocent.txt', content: `[core]\n\tfsmonitor = ${evil()}\n` }), toolContext(project));
    expect(result.success).toBe(false);
    expect(result.error).toContain(`hard link) of the protected file ${project.root}/odd\\xff/lib/.git/config`);
    expect(bytesOf('odd\xff/lib/.git/config')).toEqual(config);
  });

  it('benign commands in a tree with such names and no repository in them run as before, and change nothing', async () => {
    mkdirSync(onDisk('data\xff/deeper'), { recursive: true });
    writeFileSync(onDisk('data\xff/deeper/f\xfe.txt'), 'kept\n');
    const first = await bash('ls');
    expect(first.success).toBe(true);
    const made = await python(`os.makedirs(b'more\\xfd/x')\nopen(b'more\\xfd/x/y\\xfc', 'w').write('z')`);
    expect(made.success).toBe(true);
    expect(made.metadata.restored_protected_files).toBeUndefined();
    expect(made.metadata.removed_from_new_repositories).toBeUndefined();
    await tick();
    const again = await bash('ls');
    expect(again.success).toBe(true);
    expect(bytesOf('data\xff/deeper/f\xfe.txt')?.toString()).toBe('kept\n');
    expect(bytesOf('more\xfd/x/y\xfc')?.toString()).toBe('z');
  });
});
