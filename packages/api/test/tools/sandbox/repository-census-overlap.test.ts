import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bashTool } from '../../../src/tools/bash.js';
import { PathSandbox } from '../../../src/tools/sandbox/paths.js';
import type { ToolResult } from '../../../src/tools/tool.js';
import { createToolHost, type ToolHost } from '../../../src/tools/tool-host.js';
import { createProject, nestedRepository, toolContext, type Project } from './support/project.js';

/*
 * The first census of a set of allowed paths, taken while a `bash` command under another set that
 * overlaps it runs (two users' workspaces sharing a directory, a run with a narrower set): what
 * that command has planted by then must not become the new set's baseline, or the new set's check
 * puts back the hook the first command's check removed. Judged by side effect: the user's own git
 * run outside the sandbox after both commands, and the hook file itself.
 */

let project: Project;
let host: ToolHost;

beforeEach(() => {
  project = createProject();
  // One service: each test starts with no census of either set.
  host = createToolHost();
  nestedRepository(path('vendor/lib'));
  writeFileSync(join(project.outside, 'evil.sh'), `#!/bin/sh\ntouch ${marker()}\n`, { mode: 0o755 });
});

afterEach(() => project.cleanup());

const path = (relative: string): string => join(project.root, relative);
const marker = (): string => join(project.outside, 'pwned');
const hook = (): string => path('vendor/lib/.git/hooks/post-checkout');

/** A `bash` command under the allowed paths `roots`, run from `cwd`. */
function bash(roots: string[], cwd: string, command: string): Promise<ToolResult> {
  return bashTool.execute(bashTool.parameters.parse({ command }), toolContext(project, { host, sandbox: new PathSandbox(roots), workingDir: cwd }));
}

/** Python that waits for `file` (a path the command can see) to exist. */
const waitFor = (file: string): string => `while not os.path.exists(${JSON.stringify(file)}): time.sleep(0.05)`;
/** Python lines planting the hook in vendor/lib. */
const plant = (): string =>
  [`open(${JSON.stringify(hook())}, 'w').write('#!/bin/sh\\ntouch ${marker()}\\n')`, `os.chmod(${JSON.stringify(hook())}, 0o755)`].join('\n');

async function until(file: string): Promise<void> {
  for (let i = 0; i < 600 && !existsSync(file); i++) await sleep(50);
  expect(existsSync(file)).toBe(true);
}

/** A python script the test writes where both sets reach (vendor/), run by its path. */
function script(name: string, code: string): string {
  const file = path(name);
  writeFileSync(file, `import os, time\n${code}\n`);
  return file;
}

/** The user's git outside the sandbox; only the marker counts. */
function userCheckout(): void {
  try {
    execFileSync('git', ['checkout', '-q', '-b', `other-${Date.now()}`], { cwd: path('vendor/lib'), env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: project.outside, GIT_CONFIG_NOSYSTEM: '1' }, stdio: 'ignore' });
  } catch {
    // a failing git is fine; a planted hook running is not
  }
}

describe.each([
  ['the second set inside the first', () => [project.root], () => project.root, () => [path('vendor')], () => path('vendor')],
  ['the second set around the first', () => [path('vendor')], () => path('vendor'), () => [project.root], () => project.root],
])('a command plants a hook, then a command under an overlapping set takes its first census (%s)', (_name, firstRoots, firstCwd, secondRoots, secondCwd) => {
  it('the hook is gone after both end, the planter ending first', async () => {
    const a = bash(firstRoots(), firstCwd(), `python3 ${script('vendor/a.py', `${plant()}\nopen(${JSON.stringify(path('vendor/planted'))}, 'w').close()\n${waitFor(path('vendor/go-a'))}`)}`);
    await until(path('vendor/planted'));
    const b = bash(secondRoots(), secondCwd(), `python3 ${script('vendor/b.py', `open(${JSON.stringify(path('vendor/b-started'))}, 'w').close()\n${waitFor(path('vendor/go-b'))}`)}`);
    await until(path('vendor/b-started'));
    writeFileSync(path('vendor/go-a'), '');
    const first = await a;
    expect(first.metadata.restored_protected_files).toEqual([hook()]);
    writeFileSync(path('vendor/go-b'), '');
    await b;
    expect(existsSync(hook())).toBe(false);
    userCheckout();
    expect(existsSync(marker())).toBe(false);
  });

  it('the planted bytes are not taken for the user\'s, the other command ending first', async () => {
    const a = bash(firstRoots(), firstCwd(), `python3 ${script('vendor/a.py', `${plant()}\nopen(${JSON.stringify(path('vendor/planted'))}, 'w').close()\n${waitFor(path('vendor/go-a'))}`)}`);
    await until(path('vendor/planted'));
    // Its check compares with what was there before the planter started: the hook goes already.
    expect((await bash(secondRoots(), secondCwd(), 'ls')).metadata.restored_protected_files).toEqual([hook()]);
    expect(existsSync(hook())).toBe(false);
    writeFileSync(path('vendor/go-a'), '');
    await a;
    expect(existsSync(hook())).toBe(false);
    // The same bytes written again under the second set: its census must not hold them as the user's.
    const again = await bash(secondRoots(), secondCwd(), `python3 ${script('vendor/c.py', plant())}`);
    expect(again.metadata.restored_protected_files).toEqual([hook()]);
    expect(existsSync(hook())).toBe(false);
    userCheckout();
    expect(existsSync(marker())).toBe(false);
  });

  it('a repository the running command made is cleaned, not kept by the other set', async () => {
    const made = path('vendor/fresh');
    const layout = [
      `os.makedirs(${JSON.stringify(`${made}/.git/objects`)})`,
      `os.makedirs(${JSON.stringify(`${made}/.git/refs/heads`)})`,
      `os.makedirs(${JSON.stringify(`${made}/.git/hooks`)})`,
      `open(${JSON.stringify(`${made}/.git/HEAD`)}, 'w').write('ref: refs/heads/main\\n')`,
      `open(${JSON.stringify(`${made}/.git/config`)}, 'w').write('[core]\\n\\tfsmonitor = ${join(project.outside, 'evil.sh')}\\n')`,
      `open(${JSON.stringify(`${made}/.git/hooks/post-checkout`)}, 'w').write('#!/bin/sh\\ntouch ${marker()}\\n')`,
      `os.chmod(${JSON.stringify(`${made}/.git/hooks/post-checkout`)}, 0o755)`,
    ].join('\n');
    const a = bash(firstRoots(), firstCwd(), `python3 ${script('vendor/a.py', `${layout}\nopen(${JSON.stringify(path('vendor/planted'))}, 'w').close()\n${waitFor(path('vendor/go-a'))}`)}`);
    await until(path('vendor/planted'));
    const b = bash(secondRoots(), secondCwd(), `python3 ${script('vendor/b.py', `open(${JSON.stringify(path('vendor/b-started'))}, 'w').close()\n${waitFor(path('vendor/go-b'))}`)}`);
    await until(path('vendor/b-started'));
    writeFileSync(path('vendor/go-a'), '');
    expect((await a).metadata.removed_from_new_repositories).toContain(`${made}/.git/hooks/post-checkout`);
    writeFileSync(path('vendor/go-b'), '');
    await b;
    expect(existsSync(`${made}/.git/hooks/post-checkout`)).toBe(false);
    expect(readFileSync(`${made}/.git/config`, 'utf8')).not.toContain('fsmonitor');
    try {
      execFileSync('git', ['status'], { cwd: made, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: project.outside, GIT_CONFIG_NOSYSTEM: '1' }, stdio: 'ignore' });
    } catch {
      // only the marker counts
    }
    expect(existsSync(marker())).toBe(false);
  });
});
