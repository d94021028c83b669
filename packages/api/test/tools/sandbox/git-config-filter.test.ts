import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { filterRepositoryConfig } from '../../../src/tools/sandbox/git-config-filter.js';

/*
 * The config a new repository keeps (git-config-filter.ts), read back by git itself: what git would
 * obey afterwards is what counts, not the text.
 */

let base: string;
let gitDir: string;

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'mada-config-filter-')));
  gitDir = join(base, 'root', 'x', '.git');
  mkdirSync(gitDir, { recursive: true });
});

afterEach(() => rmSync(base, { recursive: true, force: true }));

/** Every entry git reads from the filtered text, as `key=value` lines. */
function gitReads(text: string): string[] {
  const file = join(base, 'filtered');
  writeFileSync(file, filterRepositoryConfig(text, gitDir, [join(base, 'root')]).text);
  const out = execFileSync('git', ['config', '--file', file, '--list'], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1' } });
  return out.split('\n').filter((line) => line !== '');
}

describe('the config a repository made by a command keeps', () => {
  it('keeps what git init and clone write, and an identity', () => {
    const text = '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n[remote "origin"]\n\turl = https://example.com/x.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch "main"]\n\tremote = origin\n\tmerge = refs/heads/main\n[user]\n\tname = A B\n';
    expect(gitReads(text)).toEqual([
      'core.repositoryformatversion=0',
      'core.filemode=true',
      'core.bare=false',
      'remote.origin.url=https://example.com/x.git',
      'remote.origin.fetch=+refs/heads/*:refs/remotes/origin/*',
      'branch.main.remote=origin',
      'branch.main.merge=refs/heads/main',
      'user.name=A B',
    ]);
  });

  it('drops every setting that runs a program or reads another file', () => {
    const text = [
      '[core]',
      '\tfsmonitor = touch /tmp/x',
      '\thooksPath = ../hooks',
      '\tpager = less',
      '[include]',
      '\tpath = ../evil',
      '[includeIf "gitdir:/"]',
      '\tpath = ../evil',
      '[alias]',
      '\tst = !touch /tmp/x',
      '[remote "origin"]',
      '\tuploadpack = touch /tmp/x',
      '[submodule "s"]',
      '\tupdate = !touch /tmp/x',
      '[filter "f"]',
      '\tclean = touch /tmp/x',
    ].join('\n');
    expect(gitReads(text)).toEqual([]);
    expect(filterRepositoryConfig(text, gitDir, [base]).dropped).toContain('core.fsmonitor');
  });

  it('never lets a continuation line, a quoted value or a key after a header through', () => {
    const text = '[core]\n\tbare = false \\\n\tfsmonitor = touch /tmp/x\n[core] fsmonitor = touch /tmp/y\n\tfilemode = true\n[user]\n\tname = "a\\"\n\tfsmonitor = x"\n';
    expect(gitReads(text)).toEqual([]);
  });

  it('drops the line after a comment that ends in a backslash, which git reads as an entry', () => {
    // A config with nothing dropped is kept as it was written: the line must count as dropped.
    for (const text of ['[core]\n\tbare = false ;\\\n\tfsmonitor = /x/evil\n', '[core]\n# note \\\n\tfsmonitor = /x/evil\n']) {
      expect(filterRepositoryConfig(text, gitDir, [base]).dropped).not.toEqual([]);
      expect(gitReads(text)).not.toContain('core.fsmonitor=/x/evil');
    }
  });

  it('keeps core.worktree only when it leads inside the allowed paths', () => {
    symlinkSync('/etc', join(base, 'root', 'x', 'out'));
    expect(gitReads('[core]\n\tworktree = ..\n')).toEqual(['core.worktree=..']);
    expect(gitReads('[core]\n\tworktree = /home\n')).toEqual([]);
    expect(gitReads('[core]\n\tworktree = ../../..\n')).toEqual([]);
    expect(gitReads('[core]\n\tworktree = ../out\n')).toEqual([]);
  });
});
