import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toolchainPaths } from '../../../src/tools/sandbox/system-view.js';

let base: string;
beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'mada-toolchains-')));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

/** `node_modules/.bin/<name>` linking to a script of package `pkg`, as npm lays it out. */
function npmBin(modules: string, pkg: string, name: string): void {
  mkdirSync(join(modules, pkg, 'bin'), { recursive: true });
  writeFileSync(join(modules, pkg, 'bin', `${name}.js`), '');
  mkdirSync(join(modules, '.bin'), { recursive: true });
  symlinkSync(join('..', pkg, 'bin', `${name}.js`), join(modules, '.bin', name));
}

describe('the toolchain directories a sandbox shows', () => {
  it('show a node_modules/.bin on PATH as its whole node_modules, where its programs find their dependencies', async () => {
    const modules = join(base, 'service', 'node_modules');
    npmBin(modules, 'linter', 'lint');
    npmBin(modules, '@scope/formatter', 'fmt');
    mkdirSync(join(modules, 'a-dependency'));
    expect(await toolchainPaths(join(modules, '.bin'), [], [])).toEqual([modules]);
  });

  it('leave out a directory that another one shown already contains', async () => {
    const prefix = join(base, 'opt', 'tool');
    for (const part of ['bin', 'lib']) mkdirSync(join(prefix, part), { recursive: true });
    expect(await toolchainPaths(join(prefix, 'bin'), [prefix], [])).toEqual([prefix]);
  });

  it('resolve a large node_modules/.bin without holding the event loop, so requests in flight are answered meanwhile', async () => {
    const modules = join(base, 'big', 'node_modules');
    for (let i = 0; i < 400; i++) npmBin(modules, `pkg${i}`, `tool${i}`);
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    try {
      expect(await toolchainPaths(join(modules, '.bin'), [], [])).toEqual([modules]);
    } finally {
      clearInterval(ticker);
    }
    expect(turns).toBeGreaterThan(0);
  });

  it("show nothing from inside another user's workspace, nor from a directory holding one, even through a link", async () => {
    const workspaces = join(base, 'workspaces');
    const bobModules = join(workspaces, 'bob', 'app', 'node_modules');
    npmBin(bobModules, 'linter', 'lint');
    const venvBin = join(workspaces, 'bob', 'venv', 'bin');
    mkdirSync(venvBin, { recursive: true });
    const linkToWorkspaces = join(base, 'ws-link');
    symlinkSync(workspaces, linkToWorkspaces);
    const service = join(base, 'service', 'node_modules');
    npmBin(service, 'formatter', 'fmt');
    const path = [join(bobModules, '.bin'), venvBin, join(service, '.bin')].join(':');
    // Alice's run: her own directory and the service's toolchain, never bob's.
    expect(await toolchainPaths(path, [], [join(workspaces, 'alice'), linkToWorkspaces])).toEqual([service]);
    expect(await toolchainPaths(path, [], [join(workspaces, 'alice')])).toEqual(expect.arrayContaining([bobModules, service]));
  });
});
