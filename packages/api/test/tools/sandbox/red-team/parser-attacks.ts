import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/*
 * Files made to be expensive for the service's own parsers (issue #28): the gitlink guard reads
 * each repository's index, config and `.gitmodules` after a `bash` command, and whatever a command
 * or a cloned repository writes there is the attacker's.
 */

/** Entries of the hostile version 4 index: its names, rebuilt one by one, add up to 24 GB. */
export const V4_INDEX_ENTRIES = 7000;
/** Blank lines in a `.gitmodules` or a config: each made a multiline `^\s*` scan the rest. */
export const BLANK_LINES = 60_000;

/**
 * Python that writes a version 4 `.git/index` of `entries` entries, each name the previous one
 * with its last byte cut and 1,001 added: 8 MB on disk for names of 7 MB each at the end.
 */
export const v4IndexScript = (entries = V4_INDEX_ENTRIES): string =>
  [
    'import hashlib, struct',
    `n = ${entries}`,
    "out = bytearray(b'DIRC' + struct.pack('>II', 4, n))",
    'for i in range(n):',
    '    stat = bytearray(40)',
    "    struct.pack_into('>I', stat, 24, 0o100644)",
    "    out += stat + bytes(20) + struct.pack('>H', 0xFFF)",
    "    out += (b'\\x00' if i == 0 else b'\\x01') + b'p' * 1001 + b'\\x00'",
    "open('.git/index', 'wb').write(out + hashlib.sha1(out).digest())",
  ].join('\n');

/** The command that writes the index: the script is planted first, as a repository would carry it. */
export const V4_INDEX_COMMAND = 'python3 tools/write-index.py';

export function plantV4IndexScript(root: string): void {
  mkdirSync(join(root, 'tools'), { recursive: true });
  writeFileSync(join(root, 'tools', 'write-index.py'), `${v4IndexScript()}\n`);
}

/** A `.gitmodules` of blank lines, as a committed one would be. */
export function plantBlankGitmodules(root: string): void {
  writeFileSync(join(root, '.gitmodules'), '\n'.repeat(BLANK_LINES));
}

const gitEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };

/**
 * `nested/`: a repository of its own with one commit and a change to stage, its `.git/config`
 * padded with blank lines; returns its path. A command run there has the guard read that config.
 */
export function plantPaddedNestedRepository(root: string): string {
  const nested = join(root, 'nested');
  mkdirSync(nested, { recursive: true });
  const git = (...args: string[]): void => void execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: nested, stdio: 'ignore', env: gitEnv });
  git('init', '-q');
  writeFileSync(join(nested, 'file.txt'), 'one\n');
  git('add', 'file.txt');
  git('commit', '-qm', 'one');
  writeFileSync(join(nested, 'file.txt'), 'two\n');
  appendFileSync(join(nested, '.git', 'config'), '\n'.repeat(BLANK_LINES));
  return nested;
}
