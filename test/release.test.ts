import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { releaseChangelog } from '../scripts/lib/changelog.js';
import { setPackageVersion } from '../scripts/lib/package-version.js';
import { compareSemVer, parseSemVer } from '../scripts/lib/semver.js';
import { runScript, type ScriptResult } from './helpers/run-script.js';

const API_PACKAGE = `{
  "name": "@mada/api",
  "version": "1.1.0",
  "private": true,
  "type": "module",
  "dependencies": {
    "@mada/protocol": "*"
  }
}
`;

const CLI_PACKAGE = `{
    "name": "@mada/cli",
    "version": "1.0.0",
    "bin": { "mada": "./dist/main.js" }
}
`;

const HEADER = `# Changelog: @mada/api

All notable changes to this package are documented here. The format follows
[Keep a Changelog](https://keepachangelog.com/en/1.1.0/).
`;

const API_CHANGELOG = `${HEADER}
## [Unreleased]

### Added
- Conversations with automatic summarization.

### Fixed
- \`/health\` reports the search engine.

## [1.1.0] - 2026-10-01

### Added
- Health routes.
`;

const CLI_CHANGELOG = `# Changelog: @mada/cli

## [Unreleased]

### Added

## [1.0.0] - 2026-09-01

### Added
- The \`mada\` client.
`;

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A throwaway repository laid out like this one, with one commit on main. */
function makeRepo(): { root: string; git: (...args: string[]) => string } {
  const root = mkdtempSync(join(tmpdir(), 'mada-release-'));
  temps.push(root);
  const git = (...args: string[]): string => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
  const files: Record<string, string> = {
    'packages/api/package.json': API_PACKAGE,
    'packages/api/CHANGELOG.md': API_CHANGELOG,
    'packages/cli/package.json': CLI_PACKAGE,
    'packages/cli/CHANGELOG.md': CLI_CHANGELOG,
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  git('init', '--quiet', '--initial-branch=main');
  for (const [key, value] of [['user.name', 'Release Test'], ['user.email', 'release@test.invalid'], ['commit.gpgsign', 'false'], ['tag.gpgsign', 'false']]) {
    git('config', key!, value!);
  }
  git('add', '--all');
  git('commit', '--quiet', '-m', 'initial');
  return { root, git };
}

const release = (root: string, ...args: string[]): ScriptResult => runScript('release', args, { env: { MADA_REPO_ROOT: root } });
const read = (root: string, path: string): string => readFileSync(join(root, path), 'utf8');

describe('release command', () => {
  it('bumps, rewrites the changelog, commits, then tags that commit, and prints one push line', () => {
    const { root, git } = makeRepo();
    const before = git('rev-parse', 'HEAD');

    const result = release(root, 'api', '1.2.0', '--date', '2026-11-05');

    expect(result.stderr).not.toMatch(/^release: /m);
    expect(result.status).toBe(0);
    expect(result.stdout).toBe('git push --atomic origin main api/v1.2.0\n');

    const head = git('rev-parse', 'HEAD');
    expect(git('rev-parse', 'HEAD^')).toBe(before);
    expect(git('log', '-1', '--format=%s')).toBe('release(api): 1.2.0');
    expect(git('diff', '--name-only', before, head).split('\n').sort()).toEqual(['packages/api/CHANGELOG.md', 'packages/api/package.json']);
    expect(git('cat-file', '-t', 'api/v1.2.0')).toBe('tag');
    expect(git('rev-parse', 'api/v1.2.0^{commit}')).toBe(head);
    expect(git('status', '--porcelain')).toBe('');

    expect(read(root, 'packages/api/package.json')).toBe(API_PACKAGE.replace('"version": "1.1.0"', '"version": "1.2.0"'));
    expect(read(root, 'packages/api/CHANGELOG.md')).toBe(`${HEADER}
## [Unreleased]

## [1.2.0] - 2026-11-05

### Added
- Conversations with automatic summarization.

### Fixed
- \`/health\` reports the search engine.

## [1.1.0] - 2026-10-01

### Added
- Health routes.
`);
    expect(read(root, 'packages/cli/package.json')).toBe(CLI_PACKAGE);
  });

  it('writes the released notes, headings included, into the annotated tag', () => {
    const { root, git } = makeRepo();
    expect(release(root, 'api', '1.2.0').status).toBe(0);
    expect(git('tag', '-l', '--format=%(contents)', 'api/v1.2.0')).toBe(
      '@mada/api 1.2.0\n\n### Added\n- Conversations with automatic summarization.\n\n### Fixed\n- `/health` reports the search engine.',
    );
  });

  it('dates the release today (UTC) by default', () => {
    const { root } = makeRepo();
    const day = new Date().toISOString().slice(0, 10);
    expect(release(root, 'api', '1.1.1').status).toBe(0);
    const after = new Date().toISOString().slice(0, 10);
    expect(read(root, 'packages/api/CHANGELOG.md')).toMatch(new RegExp(`^## \\[1\\.1\\.1\\] - (${day}|${after})$`, 'm'));
  });

  it('keeps the formatting of a package.json indented differently', () => {
    const { root, git } = makeRepo();
    const changelog = CLI_CHANGELOG.replace('### Added\n\n## [1.0.0]', '### Added\n- Sessions list.\n\n## [1.0.0]');
    writeFileSync(join(root, 'packages/cli/CHANGELOG.md'), changelog);
    git('commit', '--quiet', '-am', 'cli notes');

    const result = release(root, 'cli', '1.1.0-rc.1', '--date', '2026-11-05');

    expect(result.status).toBe(0);
    expect(result.stdout).toBe('git push --atomic origin main cli/v1.1.0-rc.1\n');
    expect(read(root, 'packages/cli/package.json')).toBe(CLI_PACKAGE.replace('1.0.0', '1.1.0-rc.1'));
    expect(git('rev-parse', 'cli/v1.1.0-rc.1^{commit}')).toBe(git('rev-parse', 'HEAD'));
  });

  it("pushes to the branch's remote, or to --remote", () => {
    const { root, git } = makeRepo();
    git('remote', 'add', 'upstream', 'https://example.invalid/mada.git');
    git('config', 'branch.main.remote', 'upstream');
    expect(release(root, 'api', '1.2.0').stdout).toBe('git push --atomic upstream main api/v1.2.0\n');

    writeFileSync(join(root, 'packages/api/CHANGELOG.md'), read(root, 'packages/api/CHANGELOG.md').replace('## [Unreleased]\n', '## [Unreleased]\n\n- Later.\n'));
    git('commit', '--quiet', '-am', 'more');
    expect(release(root, 'api', '1.2.1', '--remote', 'mirror').stdout).toBe('git push --atomic mirror main api/v1.2.1\n');
  });

  it('finds the repository from --root, or from the working directory', () => {
    const first = makeRepo();
    expect(runScript('release', ['api', '1.2.0', '--root', first.root]).status).toBe(0);
    expect(first.git('tag', '-l')).toBe('api/v1.2.0');

    const second = makeRepo();
    mkdirSync(join(second.root, 'packages/api/src'));
    expect(runScript('release', ['api', '1.2.0'], { cwd: join(second.root, 'packages/api/src'), env: { MADA_REPO_ROOT: undefined } }).status).toBe(0);
    expect(second.git('tag', '-l')).toBe('api/v1.2.0');
  });

  it('does not tag when something else lands on top of the version commit', () => {
    const { root, git } = makeRepo();
    const before = git('rev-parse', 'HEAD');
    // A post-commit hook that commits again: HEAD is then not the version commit.
    const hook = join(root, '.git/hooks/post-commit');
    writeFileSync(hook, '#!/bin/sh\n[ -f .git/hooked ] && exit 0\ntouch .git/hooked\ngit commit --quiet --allow-empty -m sneaky\n');
    chmodSync(hook, 0o755);

    const result = release(root, 'api', '1.2.0');

    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/HEAD [0-9a-f]{40} is not the version commit: its parent is not [0-9a-f]{40}; its message is "sneaky", not "release\(api\): 1\.2\.0"\. No tag was created/);
    expect(git('tag', '-l')).toBe('');
    expect(git('log', '--format=%s', `${before}..HEAD`)).toBe('sneaky\nrelease(api): 1.2.0');
  });

  it('does not tag a version commit that was amended with other changes', () => {
    const { root, git } = makeRepo();
    const hook = join(root, '.git/hooks/post-commit');
    writeFileSync(hook, '#!/bin/sh\n[ -f .git/hooked ] && exit 0\ntouch .git/hooked\necho x > extra.txt\ngit add extra.txt\ngit commit --quiet --amend --no-edit\n');
    chmodSync(hook, 0o755);

    const result = release(root, 'api', '1.2.0');

    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/is not the version commit: it changes extra\.txt, packages\/api\/CHANGELOG\.md, packages\/api\/package\.json\. No tag/);
    expect(git('tag', '-l')).toBe('');
  });
});

describe('release refusals', () => {
  /** Runs a release that must be refused and checks the repository is exactly as it was. */
  function expectRefused(
    prepare: (repo: ReturnType<typeof makeRepo>) => void,
    args: string[],
    status: number,
    message: RegExp,
  ): void {
    const repo = makeRepo();
    prepare(repo);
    const state = () => ({
      head: repo.git('rev-parse', 'HEAD'),
      tags: repo.git('tag', '-l'),
      status: repo.git('status', '--porcelain'),
      api: read(repo.root, 'packages/api/package.json') + read(repo.root, 'packages/api/CHANGELOG.md'),
      cli: read(repo.root, 'packages/cli/package.json') + read(repo.root, 'packages/cli/CHANGELOG.md'),
    });
    const before = state();

    const result = release(repo.root, ...args);

    expect(result.stderr).toMatch(message);
    expect(result.status).toBe(status);
    expect(result.stdout).toBe('');
    expect(state()).toEqual(before);
  }

  it('refuses a modified tracked file', () => {
    expectRefused(({ root }) => writeFileSync(join(root, 'packages/api/CHANGELOG.md'), `${API_CHANGELOG}\nedited\n`), ['api', '1.2.0'], 1, /working tree is not clean[^]*M packages\/api\/CHANGELOG\.md/);
  });

  it('refuses a staged change', () => {
    expectRefused(({ root, git }) => {
      writeFileSync(join(root, 'notes.txt'), 'x');
      git('add', 'notes.txt');
    }, ['api', '1.2.0'], 1, /working tree is not clean[^]*A {2}notes\.txt/);
  });

  it('refuses an untracked file', () => {
    expectRefused(({ root }) => writeFileSync(join(root, 'stray.txt'), 'x'), ['api', '1.2.0'], 1, /working tree is not clean[^]*\?\? stray\.txt/);
  });

  it('refuses a lower version', () => {
    expectRefused(() => undefined, ['api', '1.0.9'], 1, /version 1\.0\.9 is not greater than the current version 1\.1\.0/);
  });

  it('refuses the current version', () => {
    expectRefused(() => undefined, ['api', '1.1.0'], 1, /version 1\.1\.0 is not greater than the current version 1\.1\.0/);
  });

  it('refuses a pre-release of the current version', () => {
    expectRefused(() => undefined, ['api', '1.1.0-rc.1'], 1, /not greater than the current version 1\.1\.0/);
  });

  it('refuses an unknown package as a usage error', () => {
    expectRefused(() => undefined, ['web', '1.2.0'], 2, /unknown package "web" \(known: api, cli\)/);
  });

  it.each(['1.2', 'v1.2.0', '01.2.0', '1.2.0-', 'latest'])('refuses %j as a usage error', (version) => {
    expectRefused(() => undefined, ['api', version], 2, /is not a semantic version/);
  });

  it('refuses missing arguments as a usage error', () => {
    expectRefused(() => undefined, ['api'], 2, /usage: npm run release -- <api\|cli> <version>/);
  });

  it('refuses an impossible --date as a usage error', () => {
    expectRefused(() => undefined, ['api', '1.2.0', '--date', '2026-02-30'], 2, /--date "2026-02-30" is not a YYYY-MM-DD date/);
  });

  it('refuses a tag that already exists', () => {
    expectRefused(({ git }) => git('tag', 'api/v1.2.0'), ['api', '1.2.0'], 1, /tag api\/v1\.2\.0 already exists/);
  });

  it('refuses an Unreleased section without entries', () => {
    expectRefused(() => undefined, ['cli', '1.0.1'], 1, /packages\/cli\/CHANGELOG\.md: the Unreleased section has no entries/);
  });

  it('refuses a changelog without an Unreleased section', () => {
    expectRefused(({ root, git }) => {
      writeFileSync(join(root, 'packages/api/CHANGELOG.md'), API_CHANGELOG.replace('## [Unreleased]', '## Next'));
      git('commit', '--quiet', '-am', 'renamed');
    }, ['api', '1.2.0'], 1, /no "## \[Unreleased\]" section/);
  });

  it('refuses a root that is not a git repository', () => {
    const plain = mkdtempSync(join(tmpdir(), 'mada-release-plain-'));
    temps.push(plain);
    const result = release(plain, 'api', '1.2.0');
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`release: ${plain} is not inside a git work tree`);
  });

  it('refuses a detached HEAD', () => {
    expectRefused(({ git }) => git('checkout', '--quiet', '--detach'), ['api', '1.2.0'], 1, /HEAD is detached/);
  });

  it('restores the files when the commit itself fails', () => {
    expectRefused(({ root }) => {
      const hook = join(root, '.git/hooks/pre-commit');
      writeFileSync(hook, '#!/bin/sh\necho "blocked by hook" >&2\nexit 1\n');
      chmodSync(hook, 0o755);
    }, ['api', '1.2.0'], 1, /commit failed, files restored: .*blocked by hook/);
  });
});

describe('changelog and version editing', () => {
  it('stops the Unreleased section at the link references', () => {
    const text = '# Changelog\n\n## [Unreleased]\n- New thing.\n\n[unreleased]: https://example.invalid/compare\n';
    expect(releaseChangelog(text, '2.0.0', '2026-01-02')).toEqual({
      text: '# Changelog\n\n## [Unreleased]\n\n## [2.0.0] - 2026-01-02\n\n- New thing.\n\n[unreleased]: https://example.invalid/compare\n',
      notes: '- New thing.',
    });
  });

  it('refuses a version the changelog already has', () => {
    expect(() => releaseChangelog(API_CHANGELOG, '1.1.0', '2026-01-02')).toThrow('a "## [1.1.0]" section already exists');
  });

  it('changes only the top-level version of package.json', () => {
    const text = '{\n  "config": { "version": "9.9.9" },\n  "version": "1.0.0"\n}\n';
    expect(setPackageVersion(text, '1.1.0')).toBe('{\n  "config": { "version": "9.9.9" },\n  "version": "1.1.0"\n}\n');
    expect(() => setPackageVersion('{"name": "x"}', '1.0.0')).toThrow('no top-level "version"');
  });

  it('orders versions as semver.org rule 11 does', () => {
    const ordered = ['1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', '1.0.0-beta', '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-rc.1', '1.0.0', '1.0.1', '1.1.0', '1.10.0', '2.0.0'];
    const parsed = ordered.map((v) => parseSemVer(v)!);
    for (let i = 1; i < parsed.length; i++) {
      expect(compareSemVer(parsed[i - 1]!, parsed[i]!), `${ordered[i - 1]} < ${ordered[i]}`).toBe(-1);
      expect(compareSemVer(parsed[i]!, parsed[i - 1]!)).toBe(1);
    }
    expect(compareSemVer(parseSemVer('1.0.0+build.1')!, parseSemVer('1.0.0')!)).toBe(0);
  });
});

describe("CI's tag check (check-tag-version)", () => {
  const checkTag = (root: string, ...args: string[]): ScriptResult => runScript('check-tag-version', args, { env: { MADA_REPO_ROOT: root } });

  it('accepts the tag the release command made, and prints only its version', () => {
    const { root, git } = makeRepo();
    expect(release(root, 'api', '1.2.0', '--date', '2026-11-05').status).toBe(0);
    const tag = git('tag', '-l');
    expect(tag).toBe('api/v1.2.0');
    for (const name of [tag, `refs/tags/${tag}`]) {
      const result = checkTag(root, name);
      expect(result).toMatchObject({ status: 0, lines: ['1.2.0'] });
    }
  });

  it('refuses a tag pushed without the version commit', () => {
    const { root, git } = makeRepo();
    git('tag', 'api/v1.2.0');
    const result = checkTag(root, 'api/v1.2.0');
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('tag api/v1.2.0 does not match packages/api/package.json, whose version is "1.1.0"');
  });

  it("refuses one package's tag at the other package's version", () => {
    const { root } = makeRepo();
    expect(release(root, 'api', '1.2.0', '--date', '2026-11-05').status).toBe(0);
    expect(checkTag(root, 'cli/v1.2.0')).toMatchObject({ status: 1, stdout: '' });
  });

  it.each([
    ['web/v1.0.0', 'names no known package'],
    ['api/1.1.0', 'is not a release tag'],
    ['api/v1.1', 'is not a semantic version'],
    ['api/v01.1.0', 'is not a semantic version'],
  ])('refuses %s: %s', (tag, reason) => {
    const { root } = makeRepo();
    const result = checkTag(root, tag);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(reason);
  });

  it('answers a usage error with 2', () => {
    const { root } = makeRepo();
    expect(checkTag(root).status).toBe(2);
    expect(checkTag(root, 'api/v1.1.0', 'cli/v1.0.0').status).toBe(2);
  });
});
